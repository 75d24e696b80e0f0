"""The tables of the five papers (and the RNTN baseline) as rows
``npcomp reproduce`` trains: each row a model on a task, the paper's
figures, and the settings it runs with.

A row's ``printed`` options are the paper's printed setting (on top of the
model's defaults for the task, ``defaults.defaults_for``); where that falls
far below the paper here, ``dev`` holds the setting chosen on dev
(docs/RESULTS.md gives the screens), and the report shows both.  Options
are ``npcomp train`` config keys; ``vectors`` names a file in
``DATA_DIR/vectors``.  Figures are test-set metrics as the papers print
them: root accuracy in percent on the SST, Pearson's r (Spearman's rho, MSE)
on SICK.  Nothing here imports NumPy.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .cells import registry

GLOVE_50 = "glove.6B.50d.sst-sick.txt"
WORD2VEC_300 = "word2vec.GoogleNews.300d.bolukbasi26k.sst-sick.txt"
# what the shared vectors lack against the papers'
GLOVE_HANDICAP = ("50-d GloVe 6B (400k words) against the paper's 300-d GloVe 840B: "
                  "the SST's 300-d 840B vectors are not in the data here")
WORD2VEC_NOTE = ("300-d word2vec GoogleNews, as the paper, restricted to the SST and "
                 "SICK vocabulary")


@dataclass(frozen=True)
class Row:
    """One row of a paper's table.  ``name`` is unique in its table and
    names the row's run directories; ``paper``: metric -> the paper's figure
    (None where the paper prints none for this task)."""

    name: str
    label: str
    model: str
    task: str
    paper: dict
    printed: dict = field(default_factory=dict)
    dev: dict | None = None
    dev_source: str = ""
    vectors: str = "random vectors, as the paper"
    # trains on `npcomp parse`'s dependency parses of the SST, which reproduce
    # makes (in OUT/parses/sst) when they are missing
    parses: bool = False

    def settings(self) -> dict:
        """Setting name -> the options of ``npcomp train`` (model, task and the
        row's options): the printed setting, and the dev-chosen one if any.
        The printed setting names ``--protocol paper`` for a model whose bare
        command may take a setting chosen on dev (registry ``tuned``)."""
        base = {"model": self.model, "task": self.task}
        printed = dict(self.printed)
        if registry.model(self.model).tuned and "protocol" not in printed:
            printed["protocol"] = "paper"
        out = {self.name: dict(base, **printed)}
        if self.dev is not None:
            out[f"{self.name}-dev"] = dict(base, **self.dev)
        return out

    @property
    def metric(self) -> str:
        """The metric the row is judged on."""
        return "pearson" if self.task == "sick" else "root_acc"


@dataclass(frozen=True)
class Table:
    """A paper's table: its rows, and whether its report draws each
    setting's root confusion matrix over its seeds (the paper has one)."""

    name: str
    title: str
    rows: tuple
    confusions: bool = False

    def row(self, name: str) -> Row:
        for row in self.rows:
            if row.name == name:
                return row
        raise ValueError(f"{self.name} has no row {name!r}; its rows: "
                         f"{', '.join(row.name for row in self.rows)}")


def _glove(**options) -> dict:
    return dict(options, vectors=GLOVE_50)


# Nayebi & Blundell's root-only comparison run here with one setting for the
# three models (docs/RESULTS.md, "Sequence models, root labels only"):
# Adadelta, word-vector dropout 0.5, 30 epochs, GloVe 50d, d = 150
NAYEBI_DEV = _glove(supervision="root", structure="chain", dim=150, batch_size=25,
                    optimizer="adadelta", lr=1.0, emb_lr=1.0, epsilon=1e-6, l2=1e-4,
                    dropout=0.0, embedding_dropout=0.5, recurrent_dropout="0", epochs=30,
                    oov="normal", oov_scale=1.0, forget_bias=1.0)
NAYEBI_DEV_SOURCE = ("one setting for the three models, chosen on dev (docs/RESULTS.md, "
                     "Sequence models, root labels only: Adadelta, word-vector dropout 0.5, "
                     "30 epochs)")

# the word vectors compared by the `vectors` table, each on top of a model's
# paper setting: (name, description, options)
VECTOR_SETTINGS = (
    ("random50", "random 50-d", dict(vectors="random", embedding_dim=50)),
    ("random300", "random 300-d", dict(vectors="random", embedding_dim=300)),
    ("glove50", "GloVe 6B 50-d, tuned", dict(vectors=GLOVE_50)),
    ("glove50-fixed", "GloVe 6B 50-d, fixed", dict(vectors=GLOVE_50, fixed_embeddings=True)),
    ("word2vec300", "word2vec 300-d subset, tuned", dict(vectors=WORD2VEC_300)),
    ("word2vec300-fixed", "word2vec 300-d subset, fixed",
     dict(vectors=WORD2VEC_300, fixed_embeddings=True)),
)

TABLES = {table.name: table for table in (
    Table("tai-sst", "Tai et al. 2015, Table 2: sentiment classification on the SST", (
        Row("constituency-random-fine", "Constituency Tree-LSTM (random vectors), fine",
            "treelstm-nary", "sst5", {"root_acc": 43.9}),
        Row("constituency-random-binary", "Constituency Tree-LSTM (random vectors), binary",
            "treelstm-nary", "sst2", {"root_acc": 82.0}),
        Row("constituency-pretrained-fine", "Constituency Tree-LSTM (GloVe vectors, tuned), fine",
            "treelstm-nary", "sst5", {"root_acc": 51.0}, _glove(), vectors=GLOVE_HANDICAP),
        Row("constituency-pretrained-binary",
            "Constituency Tree-LSTM (GloVe vectors, tuned), binary", "treelstm-nary",
            "sst2", {"root_acc": 88.0}, _glove(), vectors=GLOVE_HANDICAP),
        Row("constituency-fixed-fine", "Constituency Tree-LSTM (GloVe vectors, fixed), fine",
            "treelstm-nary", "sst5", {"root_acc": 49.7}, _glove(fixed_embeddings=True),
            vectors=GLOVE_HANDICAP),
        Row("constituency-fixed-binary",
            "Constituency Tree-LSTM (GloVe vectors, fixed), binary", "treelstm-nary",
            "sst2", {"root_acc": 87.5}, _glove(fixed_embeddings=True), vectors=GLOVE_HANDICAP),
        Row("dependency-fine", "Dependency Tree-LSTM, fine", "treelstm-childsum", "sst5",
            {"root_acc": 48.4}, _glove(), vectors=GLOVE_HANDICAP, parses=True),
        Row("dependency-binary", "Dependency Tree-LSTM, binary", "treelstm-childsum", "sst2",
            {"root_acc": 85.7}, _glove(), vectors=GLOVE_HANDICAP, parses=True),
        Row("lstm-fine", "LSTM, fine", "lstm", "sst5", {"root_acc": 46.4}, _glove(),
            vectors=GLOVE_HANDICAP),
        Row("lstm-binary", "LSTM, binary", "lstm", "sst2", {"root_acc": 84.9}, _glove(),
            vectors=GLOVE_HANDICAP),
        Row("bilstm-fine", "Bidirectional LSTM, fine", "bilstm", "sst5", {"root_acc": 49.1},
            _glove(), vectors=GLOVE_HANDICAP),
        Row("bilstm-binary", "Bidirectional LSTM, binary", "bilstm", "sst2",
            {"root_acc": 87.5}, _glove(), vectors=GLOVE_HANDICAP),
        Row("lstm2-fine", "2-layer LSTM, fine", "lstm2", "sst5", {"root_acc": 46.0},
            _glove(), vectors=GLOVE_HANDICAP),
        Row("lstm2-binary", "2-layer LSTM, binary", "lstm2", "sst2", {"root_acc": 86.3},
            _glove(), vectors=GLOVE_HANDICAP),
        Row("bilstm2-fine", "2-layer Bidirectional LSTM, fine", "bilstm2", "sst5",
            {"root_acc": 48.5}, _glove(), vectors=GLOVE_HANDICAP),
        Row("bilstm2-binary", "2-layer Bidirectional LSTM, binary", "bilstm2", "sst2",
            {"root_acc": 87.2}, _glove(), vectors=GLOVE_HANDICAP),
    )),
    Table("tai-sick", "Tai et al. 2015, Table 3: semantic relatedness on SICK", (
        Row("dependency", "Dependency Tree-LSTM", "treelstm-childsum", "sick",
            {"pearson": 0.8676, "spearman": 0.8083, "mse": 0.2532},
            vectors="300-d GloVe 840B held fixed, as the paper"),
        Row("constituency", "Constituency Tree-LSTM", "treelstm-nary", "sick",
            {"pearson": 0.8582, "spearman": 0.7966, "mse": 0.2734},
            vectors="300-d GloVe 840B held fixed, as the paper"),
        Row("lstm", "LSTM", "lstm", "sick", {"pearson": 0.8528, "spearman": 0.7911,
                                             "mse": 0.2831},
            vectors="300-d GloVe 840B held fixed, as the paper"),
        Row("bilstm", "Bidirectional LSTM", "bilstm", "sick",
            {"pearson": 0.8567, "spearman": 0.7966, "mse": 0.2736},
            vectors="300-d GloVe 840B held fixed, as the paper"),
        Row("lstm2", "2-layer LSTM", "lstm2", "sick",
            {"pearson": 0.8515, "spearman": 0.7896, "mse": 0.2838},
            vectors="300-d GloVe 840B held fixed, as the paper"),
        Row("bilstm2", "2-layer Bidirectional LSTM", "bilstm2", "sick",
            {"pearson": 0.8558, "spearman": 0.7965, "mse": 0.2762},
            vectors="300-d GloVe 840B held fixed, as the paper"),
        Row("mean-vectors", "Mean vectors", "mean-vectors", "sick",
            {"pearson": 0.7577, "spearman": 0.6738, "mse": 0.4557},
            vectors="300-d GloVe 840B held fixed, as the paper"),
    )),
    Table("le-zuidema", "Le & Zuidema 2015: the LSTM-RNN against the RNN on the SST", (
        Row("lstm-rnn-fine", "LSTM-RNN (tanh), fine", "lstm-rnn", "sst5",
            {"root_acc": 48.0}, _glove(),
            vectors="50-d GloVe 6B against the paper's 100-d GloVe"),
        Row("lstm-rnn-binary", "LSTM-RNN (tanh), binary", "lstm-rnn", "sst2",
            {"root_acc": 86.2}, _glove(),
            vectors="50-d GloVe 6B against the paper's 100-d GloVe"),
        Row("rnn-fine", "RNN (tanh), fine: below the LSTM-RNN", "recnn", "sst5",
            {"root_acc": None}, _glove(),
            vectors="50-d GloVe 6B against the paper's 100-d GloVe"),
        Row("rnn-binary", "RNN (tanh), binary: below the LSTM-RNN", "recnn", "sst2",
            {"root_acc": None}, _glove(),
            vectors="50-d GloVe 6B against the paper's 100-d GloVe"),
    )),
    Table("zhu", "Zhu et al. 2015, Tables 2-4: the S-LSTM on the SST", (
        Row("all-phrases", "S-LSTM, every phrase labelled", "slstm", "sst5",
            {"root_acc": 48.9, "all_acc": 81.9},
            dev=dict(l2=1e-3, dropout=0.3),
            dev_source="lambda 1e-3 and classifier dropout 0.3, chosen on dev "
                       "(docs/RESULTS.md, S-LSTM)"),
        Row("root", "S-LSTM, root labels only", "slstm", "sst5", {"root_acc": 43.5},
            dict(supervision="root"), dev=dict(supervision="root", lr=0.01, emb_lr=0.01),
            dev_source="learning rates 0.01, chosen on dev (docs/RESULTS.md, S-LSTM)"),
        Row("root-lr", "S-LSTM-LR, root labels only", "slstm", "sst5", {"root_acc": 40.2},
            dict(supervision="root", structure="left"),
            dev=dict(supervision="root", structure="left", lr=0.01, emb_lr=0.01),
            dev_source="the root-only setting's learning rates"),
        Row("root-rr", "S-LSTM-RR, root labels only", "slstm", "sst5", {"root_acc": 40.3},
            dict(supervision="root", structure="right"),
            dev=dict(supervision="root", structure="right", lr=0.01, emb_lr=0.01),
            dev_source="the root-only setting's learning rates"),
        Row("root-leaves", "S-LSTM, root and leaf labels", "slstm", "sst5",
            {"root_acc": 44.1}, dict(supervision="root+leaves"),
            dev=dict(supervision="root+leaves", lr=0.01, emb_lr=0.01),
            dev_source="the root-only setting's learning rates"),
        Row("root-leaves-lr", "S-LSTM-LR, root and leaf labels", "slstm", "sst5",
            {"root_acc": 43.1}, dict(supervision="root+leaves", structure="left"),
            dev=dict(supervision="root+leaves", structure="left", lr=0.01, emb_lr=0.01),
            dev_source="the root-only setting's learning rates"),
        Row("root-leaves-rr", "S-LSTM-RR, root and leaf labels", "slstm", "sst5",
            {"root_acc": 43.2}, dict(supervision="root+leaves", structure="right"),
            dev=dict(supervision="root+leaves", structure="right", lr=0.01, emb_lr=0.01),
            dev_source="the root-only setting's learning rates"),
        Row("rvnn", "RvNN (Table 1)", "recnn", "sst5", {"root_acc": 43.2, "all_acc": 79.0}),
        Row("rntn", "RNTN (Table 1)", "rntn", "sst5", {"root_acc": 45.7, "all_acc": 80.7}),
        Row("rntn-root", "RNTN, root labels only (Table 3)", "rntn", "sst5",
            {"root_acc": 29.1}, dict(supervision="root")),
        Row("rntn-root-leaves", "RNTN, root and leaf labels (Table 3)", "rntn", "sst5",
            {"root_acc": 34.9}, dict(supervision="root+leaves")),
    )),
    Table("nayebi", "Nayebi & Blundell, Table 1: root labels only, fine-grained", (
        Row("lstm", "LSTM", "lstm", "sst5", {"root_acc": 45.7},
            _glove(protocol="nayebi"), dev=NAYEBI_DEV, dev_source=NAYEBI_DEV_SOURCE,
            vectors=GLOVE_HANDICAP),
        Row("bilstm", "Bidirectional LSTM", "bilstm", "sst5", {"root_acc": 46.4},
            _glove(protocol="nayebi"), dev=dict(NAYEBI_DEV, untied=True),
            dev_source=NAYEBI_DEV_SOURCE + "; separate weights per direction",
            vectors=GLOVE_HANDICAP),
        Row("global-attention", "LSTM + global attention", "lstm-global-attn", "sst5",
            {"root_acc": 45.3}, _glove(), dev=NAYEBI_DEV, dev_source=NAYEBI_DEV_SOURCE,
            vectors=GLOVE_HANDICAP),
        Row("recurrent-attention", "LSTM + recurrent attention", "lstm-recurrent-attn",
            "sst5", {"root_acc": 47.4}, _glove(), dev=NAYEBI_DEV,
            dev_source=NAYEBI_DEV_SOURCE, vectors=GLOVE_HANDICAP),
    ), confusions=True),   # Nayebi & Blundell's Fig. 2
    Table("irsoy", "Irsoy & Cardie 2015, Table 2: recurrent models on the SST, fine", (
        Row("rnn", "Recurrent (rectifier, d_h 315)", "rnn", "sst5", {"root_acc": 43.1},
            dict(vectors=WORD2VEC_300), dev=dict(vectors=WORD2VEC_300, lr=0.01),
            dev_source="learning rate 0.01, chosen on dev (docs/RESULTS.md, Elman RNN)",
            vectors=WORD2VEC_NOTE),
        Row("mrnn", "mRecurrent (d_h 20)", "mrnn", "sst5", {"root_acc": 43.5},
            dict(vectors=WORD2VEC_300),
            dev=dict(vectors=WORD2VEC_300, activation="tanh", lr=0.02),
            dev_source="tanh and learning rate 0.02, chosen on dev (docs/RESULTS.md, "
                       "multiplicative RNN)", vectors=WORD2VEC_NOTE),
        Row("vecavg", "VecAvg (mean of the word vectors)", "mean-vectors", "sst5",
            {"root_acc": 32.7}, dict(vectors=WORD2VEC_300, fixed_embeddings=True),
            vectors=WORD2VEC_NOTE),
        Row("matrix-space", "Matrix-space (3 x 3 word matrices): MPQA only in the paper",
            "matrix-space", "sst5", {"root_acc": None}),
    )),
    Table("vectors", "Word vectors: random of 50 and 300 dimensions, GloVe 6B 50-d and "
          "word2vec 300-d, tuned and fixed", tuple(
        Row(f"{short}-{vectors}-{task}", f"{label}, {vectors_label}, {task}", model, task,
            {"root_acc": None}, options, vectors=vectors_label)
        for short, label, model in (("constituency", "Constituency Tree-LSTM", "treelstm-nary"),
                                    ("lstm-rnn", "LSTM-RNN", "lstm-rnn"))
        for task in ("sst5", "sst2")
        for vectors, vectors_label, options in VECTOR_SETTINGS)),
    Table("rntn", "Socher et al. 2013: the RNTN on the SST", (
        Row("fine", "RNTN, fine", "rntn", "sst5", {"root_acc": 45.7, "all_acc": 80.7}),
        Row("binary", "RNTN, binary", "rntn", "sst2", {"root_acc": 85.4}),
    )),
)}


def table(name: str) -> Table:
    try:
        return TABLES[name]
    except KeyError:
        raise ValueError(f"no table {name!r}; the tables: {', '.join(TABLES)}") from None
