"""The word-vector files the reports train with, by name in the data
directory's ``vectors/`` (``npcomp download glove.6B`` and ``npcomp download
word2vec`` make them; docs/DATA.md)."""

GLOVE_50 = "glove.6B.50d.sst-sick.txt"
WORD2VEC_300 = "word2vec.GoogleNews.300d.bolukbasi26k.sst-sick.txt"
