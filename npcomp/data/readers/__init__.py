"""Readers of the file formats: labelled trees (``formats.py``), PTB bracketed
trees, ``*.parents`` files, SICK's directories, dependency relations, trees
read another way, and word vectors with their vocabulary."""
