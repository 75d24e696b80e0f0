"""Irsoy & Cardie 2015's Table 1: ordinal regression on MPQA's phrases,
which are not in the data here. The table reads a user's copy (the
``OwnData`` below, docs/DATA.md) in 10-fold cross-validation; its rows are
the paper's models with an ordinal head, word2vec held fixed or random
vectors learned. ``paper_tables.TABLES`` lists it with the papers' other
tables. Nothing here imports NumPy.
"""

from __future__ import annotations

from .paper_rows import DEFAULT, NOT_IMPLEMENTED, OTHER_MODEL, PAPER, OwnData, Row, Table, not_implemented
from .vector_files import WORD2VEC_26K, WORD2VEC_300, WORD2VEC_SOURCE

# fmt: off
# Irsoy & Cardie 2015, Sec. 5.1: MPQA's phrases (Yessenalina & Cardie's preprocessing),
# each an integer ordinal label 0-4 from negative to positive, in ten folds
MPQA = OwnData(
    "mpqa", ("mpqa/phrases.tsv", "mpqa/phrases.jsonl", "mpqa/phrases.csv"),
    "Irsoy & Cardie's 8022 phrases of the MPQA opinion corpus (Wiebe et al. 2005)",
    "one phrase a row: a `text` column and a `label` 0 (most negative) to 4 (most positive)",
    ("0", "1", "2", "3", "4"))
IRSOY_MPQA = "Irsoy & Cardie 2015"
MPQA_SOURCES = {
    "head": (PAPER, f"{IRSOY_MPQA}, Secs. 4.2 and 5.1 (ordinal regression on MPQA)"),
    "classes": (PAPER, f"{IRSOY_MPQA}, Sec. 5.1 (labels 0-4, negative to positive)"),
    "supervision": (PAPER, f"{IRSOY_MPQA}, Sec. 3.2 (a phrase's label at its last word)"),
    "structure": (PAPER, f"{IRSOY_MPQA}, Sec. 3.2 (the phrase as a sequence)")}
MPQA_VECTORS_NOTE = ("300-d word2vec GoogleNews as the paper, held fixed, but only the "
                     "26k-word subset of Bolukbasi et al. 2016 restricted here to the SST's "
                     "and SICK's words, every vector scaled to unit length: MPQA's newswire "
                     "words it lacks get random vectors, held fixed like the others")
# fmt: on


def _mpqa(name: str, label: str, model: str, loss: float, vectors: bool = True, **options) -> Row:
    """A row of Irsoy & Cardie's Table 1: ``model`` with an ordinal head on
    the MPQA phrases, word2vec held fixed (``vectors``) or random vectors
    learned, and the row's printed size and activation (``options``)."""
    printed = dict(options, head="ordinal", classes=",".join(MPQA.classes))
    sources = {**MPQA_SOURCES, **{key: (PAPER, f"{IRSOY_MPQA}, Table 1 ({label})") for key in options}}
    if vectors:
        printed["vectors"] = WORD2VEC_300
        sources.update(WORD2VEC_SOURCE)
    elif model == "matrix-space":
        sources.update(
            vectors=(PAPER, f"{IRSOY_MPQA}, Table 1 (Rand: random word matrices)"),
            embedding_dim=(PAPER, f"{IRSOY_MPQA}, Sec. 3.1 (a d_h x d_h matrix per word)"),
        )
    else:
        printed["fixed_embeddings"] = False
        sources.update(
            vectors=(PAPER, f"{IRSOY_MPQA}, Table 1 (Rand: random vectors)"),
            embedding_dim=(DEFAULT, "the paper gives none for random vectors; its word2vec's"),
            fixed_embeddings=(
                DEFAULT,
                "random vectors are learned; the paper holds its pretrained ones fixed (Sec. 5.1)",
            ),
        )
    return Row(
        name,
        label,
        model,
        "mpqa",
        {"ranking_loss": loss},
        printed,
        vectors=MPQA_VECTORS_NOTE
        if vectors
        else (
            "a 3 x 3 matrix per word, random, as the paper"
            if model == "matrix-space"
            else "random vectors, as the paper"
        ),
        source="Table 1",
        option_sources=sources,
        deviations=WORD2VEC_26K if vectors else (),
    )


# fmt: off
MPQA_NOTE = ("Table 1 is on MPQA's phrases, which are not in the data here: every row reads a "
             "user's copy (docs/DATA.md) and trains it in 10-fold cross-validation as the "
             "paper, each fold the test split of one run and a tenth of the rest its dev "
             "split. The folds are a seeded random partition, not the authors' own (the "
             "paper's figure is its mean over their ten folds); our figures are the mean, "
             "std and interval over the folds. The ranking loss is mean |y - r| of the "
             "decoded class against the label (lower is better: *reached* is our loss at or "
             "below the paper's, *above* the paper's loss above our interval). Models are "
             "selected on dev by root accuracy, npcomp's rule.")

MPQA_TABLE = Table("irsoy-mpqa", "Irsoy & Cardie 2015, Table 1 (MPQA): ordinal regression, ranking "
      "loss, 10-fold cross-validation", (
    not_implemented("prank", "PRank", {"ranking_loss": 0.7808},
                    OTHER_MODEL.format(model="PRank", paper="Yessenalina & Cardie 2011"),
                    "Table 1", task="mpqa"),
    not_implemented("bow-logreg", "Bag-of-words LogReg", {"ranking_loss": 0.6665},
                    OTHER_MODEL.format(model="Bag-of-words logistic regression",
                                       paper="Yessenalina & Cardie 2011"),
                    "Table 1", task="mpqa"),
    _mpqa("matrix-space-rand", "Matrix-space, random (d_h = 3)", "matrix-space", 0.7417,
          vectors=False, dim=3),
    Row("matrix-space-bow", "Matrix-space, bag-of-words start (d_h = 3)", "matrix-space",
        "mpqa", {"ranking_loss": 0.6375}, status=NOT_IMPLEMENTED, source="Table 1",
        reason="npcomp's matrix-space model starts from near-identity random word "
               "matrices (docs/EQUATIONS.md, MS4); the start from a bag-of-words "
               "regression's weights (Yessenalina & Cardie 2011) is not implemented"),
    _mpqa("rnn", "RNN, word2vec, rectifier (d_h = 315)", "rnn", 0.5265, dim=315,
          activation="relu"),
    _mpqa("mrnn-rand", "mRNN, random, identity (d_h = 2)", "mrnn", 0.6799, vectors=False,
          dim=2, activation="identity"),
    _mpqa("mrnn-identity", "mRNN, word2vec, identity (d_h = 25)", "mrnn", 0.5278, dim=25,
          activation="identity"),
    _mpqa("mrnn", "mRNN, word2vec, rectifier (d_h = 25)", "mrnn", 0.5232, dim=25,
          activation="relu"),
    _mpqa("mrnn-tanh", "mRNN, word2vec, tanh (d_h = 25)", "mrnn", 0.5147, dim=25,
          activation="tanh"),
), note=MPQA_NOTE, own_data=MPQA, folds=10)
# fmt: on
