"""The data layer: labelled trees and the files they are read from.

Formats (``formats.py``), the tasks and their splits (``tasks.py``), the
synthetic treebank, the SST's tokens and dependency trees, trees for typed
text, a user's own labelled files (``own_data.py``, docs/DATA.md), word
vectors and the vocabulary, and ``npcomp download``.  It imports
nothing else of npcomp: every layer above reads data through it.
"""
