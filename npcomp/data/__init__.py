"""The data layer: labelled trees and the files they are read from.

Four packages, each a job: ``readers`` (the file formats: labelled trees,
PTB brackets, ``*.parents`` files, SICK's directories, word vectors and the
vocabulary), ``text`` (plain text made into trees: the SST's tokeniser,
dependency parses and their binarised trees, typed text), ``datasets`` (the
tasks and their splits, the synthetic treebank, a user's own labelled files,
docs/DATA.md) and ``downloads`` (``npcomp download``).  It imports nothing
above it: every layer above reads data through it.
"""
