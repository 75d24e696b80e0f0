"""The tables of no paper: the project's own experiments, reported as the
papers' tables are (``report.py``), each a set of settings and the
differences between them it measures (``Comparison``): the word vectors
(``vectors``), one shard against two (``shards``), and entailment on SICK
(``sick-entailment``).  ``paper_tables.TABLES`` lists them with the papers'.
Nothing here imports NumPy.
"""

from __future__ import annotations

from .paper_rows import DEFAULT, Comparison, Row, Table
from .vector_files import GLOVE_50, WORD2VEC_300

# the word vectors compared by the `vectors` table, each on top of a model's
# paper setting: (name, description, options)
VECTOR_SETTINGS = (
    ("random50", "random 50-d", dict(vectors="random", embedding_dim=50)),
    ("random300", "random 300-d", dict(vectors="random", embedding_dim=300)),
    ("glove50", "GloVe 6B 50-d, tuned", dict(vectors=GLOVE_50)),
    ("glove50-fixed", "GloVe 6B 50-d, fixed", dict(vectors=GLOVE_50, fixed_embeddings=True)),
    ("word2vec300", "word2vec 300-d subset, tuned", dict(vectors=WORD2VEC_300)),
    ("word2vec300-fixed", "word2vec 300-d subset, fixed", dict(vectors=WORD2VEC_300, fixed_embeddings=True)),
)

VECTOR_MODELS = (("constituency", "Constituency Tree-LSTM", "treelstm-nary"), ("lstm-rnn", "LSTM-RNN", "lstm-rnn"))
# what the `vectors` table measures: (name, what the difference isolates, first, second)
VECTOR_COMPARISONS = (
    (
        "pretrained-50",
        "GloVe 50-d against random 50-d, both tuned (pretraining at one dimension)",
        "glove50",
        "random50",
    ),
    ("dimension", "random 300-d against random 50-d (dimension, no pretraining)", "random300", "random50"),
    (
        "pretrained-300",
        "word2vec 300-d against random 300-d, both tuned (pretraining at one dimension)",
        "word2vec300",
        "random300",
    ),
    ("tuning-glove", "GloVe 50-d tuned against fixed", "glove50", "glove50-fixed"),
    ("tuning-word2vec", "word2vec 300-d tuned against fixed", "word2vec300", "word2vec300-fixed"),
)
VECTORS_NOTE = (
    "Each model at its paper's settings, only the word vectors changed: the Constituency "
    "Tree-LSTM at Tai et al.'s (Table 2), the LSTM-RNN at Le & Zuidema's. Random vectors are "
    "drawn uniform in [-0.05, 0.05] and tuned; GloVe 6B 50-d and the 26k-word word2vec "
    "subset (the words it lacks random, held fixed) are tuned with the other weights or "
    "held fixed. The Constituency Tree-LSTM's random 300-d and GloVe rows take the commands "
    "of the tai-sst report's random and GloVe rows."
)

SHARDS_NOTE = (
    "The Constituency Tree-LSTM at Tai et al.'s settings (the command of the tai-sst "
    "report's random-vectors fine-grained row), each minibatch computed in one shard or in "
    "two (npcomp train's default). The shards' objective and gradient are the minibatch's "
    "up to the order of floating-point sums (docs/EQUATIONS.md section 7); the dropout masks "
    "are drawn shard after shard, so one seed draws other masks in one shard than in two."
)

# the models the `sick-entailment` table trains, as the tai-sick report names them
ENTAILMENT_MODELS = (
    ("dependency", "Dependency (Child-Sum) Tree-LSTM", "treelstm-childsum"),
    ("constituency", "Constituency Tree-LSTM", "treelstm-nary"),
    ("lstm", "LSTM", "lstm"),
)
ENTAILMENT_NOTE = (
    "SICK's entailment judgments (NEUTRAL, ENTAILMENT, CONTRADICTION) from its release files, "
    "on Tai et al.'s splits of SICK (train SICK_train.txt, 4500 pairs; dev SICK_trial.txt, "
    "500; test SICK_test_annotated.txt, 4927), each sentence in the trees of the sick task: "
    "the Child-Sum Tree-LSTM on the dependency parses, the Constituency Tree-LSTM on the "
    "binarised constituency parses, the LSTM on the words in order. Each model encodes both "
    "sentences; the pair classifier takes Tai et al.'s pair features [h_a * h_b, |h_a - h_b|] "
    "into the sigmoid layer of their eq. 15 and a softmax over the three classes, trained "
    "with the cross-entropy (heads.PairClassifierHead). No paper gives this task's settings: "
    "every model runs at Tai et al.'s SICK relatedness settings (fixed 300-d GloVe 840B, "
    "AdaGrad 0.05, minibatch 25, lambda 1e-4, a 50-unit hidden layer, 10 epochs, Table 1's "
    "dimensions), the model chosen on dev accuracy. The majority class (NEUTRAL) is 56.7% "
    "of the test pairs."
)

OWN_TABLES = (
    Table(
        "vectors",
        "Word vectors: random of 50 and 300 dimensions, GloVe 6B 50-d and word2vec 300-d, tuned and fixed",
        tuple(
            Row(
                f"{short}-{vectors}-{task}",
                f"{label}, {vectors_label}, {task}",
                model,
                task,
                {"root_acc": None},
                options,
                vectors=vectors_label,
                option_sources={
                    key: (DEFAULT, "the variable this table compares")
                    for key in ("vectors", "embedding_dim", "fixed_embeddings")
                },
            )
            for short, label, model in VECTOR_MODELS
            for task in ("sst5", "sst2")
            for vectors, vectors_label, options in VECTOR_SETTINGS
        ),
        note=VECTORS_NOTE,
        comparisons=tuple(
            Comparison(
                f"{short}-{task}-{name}",
                f"{label}, {task}: {what}",
                f"{short}-{first}-{task}",
                f"{short}-{second}-{task}",
            )
            for short, label, _ in VECTOR_MODELS
            for task in ("sst5", "sst2")
            for name, what, first, second in VECTOR_COMPARISONS
        ),
    ),
    Table(
        "shards",
        "Shards: the Constituency Tree-LSTM on the SST with each minibatch in one shard and in two",
        tuple(
            Row(
                name,
                f"Constituency Tree-LSTM, fine, {label}",
                "treelstm-nary",
                "sst5",
                {"root_acc": None},
                {"shards": shards},
                option_sources={"shards": (DEFAULT, "the variable this table compares")},
            )
            for name, label, shards in (("one-shard", "1 shard", 1), ("two-shards", "2 shards", 2))
        ),
        note=SHARDS_NOTE,
        comparisons=(
            Comparison(
                "two-against-one", "Constituency Tree-LSTM, fine: 2 shards against 1", "two-shards", "one-shard"
            ),
        ),
    ),
    Table(
        "sick-entailment",
        "Entailment on SICK: the Child-Sum and Constituency Tree-LSTMs and the LSTM classifying sentence pairs",
        tuple(
            Row(
                name,
                label,
                model,
                "sick-entailment",
                {"accuracy": None},
                vectors="300-d GloVe 840B held fixed, as Tai et al. on SICK",
            )
            for name, label, model in ENTAILMENT_MODELS
        ),
        note=ENTAILMENT_NOTE,
        confusions=True,
        comparisons=tuple(
            Comparison(
                f"{first}-against-{second}",
                f"{dict((n, l) for n, l, _ in ENTAILMENT_MODELS)[first]} against "
                f"{dict((n, l) for n, l, _ in ENTAILMENT_MODELS)[second]}",
                first,
                second,
            )
            for first, second in (("dependency", "constituency"), ("dependency", "lstm"), ("constituency", "lstm"))
        ),
    ),
)
