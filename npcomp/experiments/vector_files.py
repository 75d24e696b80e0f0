"""The word-vector files the reports train with, by name in the data
directory's ``vectors/`` (``npcomp download glove.6B`` and ``npcomp download
word2vec`` make them; docs/DATA.md), and how the word2vec file departs
from the papers' vectors, for the rows that read it."""

from .paper_rows import SUBSTITUTE, VECTORS, Deviation

GLOVE_50 = "glove.6B.50d.sst-sick.txt"
WORD2VEC_300 = "word2vec.GoogleNews.300d.bolukbasi26k.sst-sick.txt"

# the word2vec file is a subset of the papers' 3M words (the report shows it
# beside the verdict and in the row's sources)
WORD2VEC_26K = (Deviation(VECTORS, "word2vec's 26k-word subset", "its 3M words"),)
WORD2VEC_SOURCE = {
    "vectors": (
        SUBSTITUTE,
        "the 26k-word subset of the word2vec GoogleNews of Irsoy & Cardie 2015, Sec. 5.1 (see vectors)",
    )
}
