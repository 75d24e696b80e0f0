"""Every model npcomp trains, declared once: what it is, what it reads, the
options it takes, its paper's settings and what the gradient check covers.

The trainer, the command line, the defaults (``defaults.py``) and
``python -m gradcheck`` all read this table, so a new model is its cell
module plus one ``Model`` entry here (and its tests and documentation).
The module imports neither NumPy nor the cells: the command line builds
its help from it before anything heavy loads.

An entry's fields:

* ``module``, ``class_name``: the cell, ``npcomp/cells/MODULE.py``;
* ``paper``: where its equations come from, as the README's model table;
* ``composes``: the trees it composes (``COMPOSES``), which also sets the
  trees it reads SICK's sentences as (``sick_structure``);
* ``leaves``: whether a leaf's state is its word vector (``LEAVES``), so the
  state dimension is the word vectors';
* ``options``: the cell options it takes, each with the values allowed
  (None: any value of the option's type; see ``CELL_OPTIONS``);
* ``recurrent``: whether it has recurrent connections over a sequence
  (recurrent dropout applies);
* ``defaults``: its paper's training setting on the SST, with ``source``;
  ``protocols``: other papers' settings, chosen by name;
* ``tuned``: per supervision mode, the setting chosen on the SST's dev split
  where the paper's printed one falls far below it here (``source`` names
  the report with the evidence); a bare command on the SST uses it, and
  ``--protocol paper`` the printed one;
* ``sick``: its settings for SICK when it is one of Tai et al.'s relatedness
  encoders (Table 1's dimension, cell options), else None;
* ``word_matrices``: its words are d x d matrices learned from scratch (the
  embedding dimension is d^2; it takes no pretrained vectors);
* ``word_vectors``: with ``word_matrices``, each word is also a d-vector:
  the embedding row is [a | vec(A)], d + d^2 numbers (the MV-RNN);
* ``synthetic``: its sizes on the synthetic task where the shared ones
  (``defaults.SYNTHETIC``) do not suit it;
* ``baseline``: the bag-of-words baseline ``npcomp train`` trains beside a
  model on the synthetic task (``baseline_model()``);
* ``gradcheck``: the variations the gradient check must cover, as keyword
  arguments of ``gradcheck.suite.Setting`` (built by ``check_variations.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# what each model's entry declares the gradient check must cover
from .check_variations import (
    SUPERVISIONS,
    activation_tying_checks,
    bidirectional_checks,
    objective_checks,
    rebracketed_checks,
    sequence_checks,
    sequence_dropout_check,
)

# what trees a cell composes
COMPOSES = {
    "binary": "binary trees with a word at every leaf and none inside",
    "any": "trees with any number of children, a word at every leaf",
    "sequence": "chains: every node one child at most and a word",
}
# a leaf's state: "word" (the word vector itself), "word when tied" (unless the
# untied option gives leaves weights of their own), "computed"
LEAVES = ("word", "word when tied", "computed")


@dataclass(frozen=True)
class CellOption:
    """A cell option: its type, what it does, the values any model allows.
    ``command_line``: False for options of the Python API alone; ``off_flag``:
    a switch's flag that turns it off (default --no-NAME); ``in_equations``:
    False for an option that only sets the initial parameters (no gradient
    check can see it: the check draws its own).  The training options' table
    (``npcomp/configuration/options.py``) takes the command line's from here."""

    kind: type
    help: str
    choices: tuple | None = None
    command_line: bool = True
    off_flag: str | None = None
    in_equations: bool = True


# fmt: off
CELL_OPTIONS = {
    # the activations each model takes are in its entry (the functions: cells/activations.py)
    "activation": CellOption(str, "the non-linearity"),
    "untied": CellOption(bool, "leaves get weights of their own (recnn, lstm-rnn: d x d_w "
                               "against the inner nodes' d x d; bilstm: the backward LSTM "
                               "its own weights)", off_flag="--tied"),
    "forget_bias": CellOption(float, "constant added to the forget-gate biases at "
                                     "initialisation (default 0)", in_equations=False),
    "output_gate": CellOption(bool, "h = o * tanh(c) as the papers' equations, or h = "
                                    "tanh(c) without an output gate (Tai et al.'s Table 1 "
                                    "relatedness counts and released code)"),
    "layer_outputs": CellOption(str, "the sentence as the top layer's state (top), or every "
                                     "layer's states joined (all: Tai et al.'s released code "
                                     "for relatedness)", ("top", "all")),
    "leaf_activation": CellOption(str, "a leaf's state is its word vector (identity, the "
                                       "paper's equations) or tanh of it (Socher et al.'s "
                                       "released code)", ("identity", "tanh")),
    "embedding_masks": CellOption(str, "word-vector dropout with one mask per sentence for "
                                       "both directions (shared), or one for each direction "
                                       "(per-direction: Nayebi & Blundell's dropout 'between "
                                       "the Glove embedding layer and each of the two "
                                       "LSTMs')", ("shared", "per-direction")),
    "attention_dim": CellOption(int, "size of the attentional state (Nayebi & Blundell: 25)",
                                command_line=False),
    "arity": CellOption(int, "N, the children a node may have", command_line=False),
    "positions": CellOption(int, "dtrnn: the children's positions on each side of their "
                                 "head with a matrix of their own (farther ones share the "
                                 "last)"),
    "layers": CellOption(int, "recursive layers stacked over the tree (drnn; at least 2)"),
    "reconstruction_weight": CellOption(float, "alpha of the RAE's objective alpha E_rec + "
                                               "(1 - alpha) E_cE at each node (Socher et al. "
                                               "2011: 0.2)"),
    "inner_inputs": CellOption(bool, "inner nodes may read a word too", command_line=False),
}
# fmt: on

LSTM_OPTIONS = {"output_gate": None, "forget_bias": None}


@dataclass(frozen=True)
class Model:
    """One model: its cell, what it composes, its options and settings."""

    name: str
    module: str
    class_name: str
    paper: str
    composes: str
    leaves: str
    options: dict
    recurrent: bool
    defaults: dict
    gradcheck: tuple
    protocols: dict = field(default_factory=dict)
    sick: dict | None = None
    tuned: dict = field(default_factory=dict)
    word_matrices: bool = False
    word_vectors: bool = False
    synthetic: dict = field(default_factory=dict)
    baseline: bool = False

    def __post_init__(self):
        if self.composes not in COMPOSES:
            raise ValueError(f"{self.name}: composes must be one of {sorted(COMPOSES)}")
        if self.leaves not in LEAVES:
            raise ValueError(f"{self.name}: leaves must be one of {LEAVES}")
        unknown = sorted(set(self.options) - set(CELL_OPTIONS))
        if unknown:
            raise ValueError(f"{self.name}: unknown options {unknown}")

    def allowed(self, option: str) -> tuple | None:
        """The values ``option`` may take for this model (None: any of its type)."""
        return self.options[option] if self.options[option] is not None else choices(option)


# ---------------------------------------------------------------------------
# the papers' settings several models share
# ---------------------------------------------------------------------------

# Nayebi & Blundell, Sec. 4.1, in Keras: root labels only; Adagrad at Keras' default
# rate 0.01 (and epsilon 1e-8) for every weight, embeddings included; "an L2
# penalty of 0.01" is Keras' l2(0.01), which adds 0.01 ||W||^2, i.e. our
# lambda/2 = 0.01; out-of-vocabulary words N(0, 1); 20 epochs ("all of our
# models ... started to overfit either at or before 20 epochs"); forget-gate biases
# started at 1, as Keras' LSTM layer (which Nayebi & Blundell used) starts them
# fmt: off
NAYEBI = dict(source="Nayebi & Blundell, Sec. 4.1", embedding_dim=300, structure="chain",
              supervision="root", optimizer="adagrad", lr=0.01, emb_lr=0.01, epsilon=1e-8,
              l2=0.02, dropout=0.0, epochs=20, oov="normal", oov_scale=1.0, forget_bias=1.0)
# Irsoy & Cardie 2015, Table 2: word2vec vectors kept fixed, phrases as partial
# sentences.  The paper gives no optimiser settings: ours are Tai's
IRSOY = dict(source="Irsoy & Cardie 2015, Table 2 (training settings: Tai et al.'s)",
             embedding_dim=300, structure="chain", supervision="spans", fixed_embeddings=True,
             lr=0.05, emb_lr=0.1, batch_size=25, l2=1e-4, dropout=0.0, epochs=10)
# Tai, Socher & Manning 2015, Sec. 5.3 (and their released code's sentiment settings)
TAI = dict(embedding_dim=300, lr=0.05, emb_lr=0.1, batch_size=25, l2=1e-4, dropout=0.5,
           epochs=10)
# Tai et al. 2015, Sec. 5.3 for the sequence models: every labelled phrase a
# training sequence of its own
TAI_SEQUENCES = dict(TAI, structure="chain", supervision="spans")
# Le & Zuidema 2015, Sec. 5.2: d = 50, d_w = 100, lr 0.05, lambda 1e-3, minibatch 5, 20 epochs
LE_ZUIDEMA = dict(source="Le & Zuidema 2015, Sec. 5.2", dim=50, embedding_dim=100,
                  activation="tanh", untied=True, lr=0.05, emb_lr=0.05, batch_size=5, l2=1e-3,
                  dropout=0.0, epochs=20)

# Zhu's S-LSTM trained on root (and leaf) labels only: the printed rate 0.1 is
# worse on dev than 0.01 for all six of Zhu's root-only and root+leaf rows, by
# 0.5-5 points of mean dev root accuracy over five seeds (docs/results/zhu.md)
SLSTM_ROOT_RATES = dict(lr=0.01, emb_lr=0.01,
                        source="learning rates 0.01, chosen on SST dev: "
                               "docs/results/zhu.md, the rows chosen on dev")

# Nayebi & Blundell's attention LSTMs on root labels: their printed setting
# (Adagrad or Adadelta with Keras' rates, recurrent dropout, 300 units) falls far
# below this one on SST dev, chosen for their three models at once: Adadelta at
# rate 1 for every weight, word-vector dropout 0.5, no recurrent dropout, d = 150,
# minibatch 25, lambda 1e-4, 30 epochs (docs/results/nayebi.md, mean dev root
# accuracy over five seeds: global attention 44.9 against 39.2 at the printed
# setting, recurrent attention 44.9 against 35.0)
NAYEBI_TUNED = dict(dim=150, batch_size=25, optimizer="adadelta", lr=1.0, emb_lr=1.0,
                    epsilon=1e-6, l2=1e-4, dropout=0.0, embedding_dropout=0.5,
                    recurrent_dropout=[0.0], epochs=30,
                    source="Adadelta, word-vector dropout 0.5, d = 150, 30 epochs, chosen on "
                           "SST dev: docs/results/nayebi.md, the rows chosen on dev")
# fmt: on

# Tai et al.'s relatedness encoders on SICK (Table 1, relatedness column: d chosen
# so every model has about 203k LSTM parameters).  Table 1's counts are those of
# LSTMs without an output gate (h = tanh(c)): 3d(d_x + d + 2) = 203,400 for d = 150,
# as the released code (gate_output = false)
SICK_LSTM = dict(output_gate=False)
# the paper does not say what represents a sentence under a 2-layer LSTM; Tai et al.'s
# released code (relatedness/LSTMSim.lua) joins every layer's final state
SICK_STACKED = dict(SICK_LSTM, layer_outputs="all")


# ---------------------------------------------------------------------------
# the models
# ---------------------------------------------------------------------------

# fmt: off
MODELS = {model.name: model for model in (
    Model("recnn", "recnn", "RecNN",
          paper="Le & Zuidema 2015 Sec. 2.2 (tanh, sigmoid, softsign; tied or untied leaves)",
          composes="binary", leaves="word when tied",
          options={"activation": ("tanh", "sigmoid", "softsign"), "untied": None},
          recurrent=False, defaults=LE_ZUIDEMA,
          gradcheck=tuple(
              activation_tying_checks()
              + [dict(input_dim=3, supervision=mode) for mode in ("root", "root+leaves")]
              + [dict(input_dim=4, untied=True, dropout=0.5, l2=0.1, average="nodes"),
                 dict(input_dim=4, untied=True, head="ordinal"),
                 dict(input_dim=3, unary_rate=0.3)])),
    # Socher et al. 2013, Sec. 5 (d between 25 and 35, minibatch 20-30, AdaGrad) with the
    # released code's lambda 1e-3 and AdaGrad reset every epoch. The paper gives no
    # learning rate; the released code's 0.01 saturates the tensor (AdaGrad moves each of
    # V's 2d x 2d x d entries by about lr at every reset), so the rates are ours: npcomp's
    # defaults, which no committed dev comparison chose (docs/RESULTS.md, "RNTN"); epochs ours
    Model("rntn", "rntn", "RNTN",
          paper="Socher et al. 2013 / Nayebi & Blundell eq. 3 (tensor composition)",
          composes="binary", leaves="word", options={"leaf_activation": None},
          recurrent=False,
          defaults=dict(source="Socher et al. 2013, Sec. 5 and the CoreNLP defaults "
                               "(learning rates, epochs: ours)",
                        dim=25, embedding_dim=25, lr=0.001, emb_lr=0.02, batch_size=27,
                        l2=1e-3, dropout=0.0, epochs=40, adagrad_reset=1),
          gradcheck=tuple(objective_checks(input_dim=3) + rebracketed_checks(input_dim=3)
                          + [dict(input_dim=3, extra=dict(leaf_activation="tanh")),
                             dict(input_dim=3, supervision="root", unary_rate=0.3,
                                  extra=dict(leaf_activation="tanh"))])),
    Model("lstm-rnn", "lstm_rnn", "LSTMRNN",
          paper="Le & Zuidema 2015 Secs. 3-4 (two input and forget gates, peepholes; tanh, "
                "sigmoid, softsign; untied leaves)",
          composes="binary", leaves="word when tied",
          options={"activation": ("tanh", "sigmoid", "softsign"), "untied": None},
          recurrent=False, defaults=LE_ZUIDEMA,
          gradcheck=tuple(activation_tying_checks()
                          + objective_checks(activation="tanh", untied=True))),
    Model("treelstm-nary", "treelstm_nary", "TreeLSTMNary",
          paper="Tai et al. 2015, eqs. 9-14 (N = 2: Constituency Tree-LSTM)",
          composes="binary", leaves="computed",
          options=dict(LSTM_OPTIONS, arity=None, inner_inputs=None), recurrent=False,
          defaults=dict(TAI, source="Tai et al. 2015, Sec. 5.3", dim=150),
          sick=dict(SICK_LSTM, dim=142),
          gradcheck=tuple(objective_checks() + [
              dict(head="ordinal", dropout=0.5),
              dict(trees="chain", extra=dict(arity=1, inner_inputs=True)),
              dict(trees="dependency-binary", extra=dict(inner_inputs=True))])),
    # Tai et al. 2015, Table 1 (Dependency Tree-LSTM, d = 168) and Sec. 5.3 on
    # dependency parses of the SST (`npcomp parse`), labelled where a node's span is a
    # labelled phrase (Sec. 5.1)
    Model("treelstm-childsum", "treelstm_childsum", "TreeLSTMChildSum",
          paper="Tai et al. 2015, eqs. 2-8 (Dependency Tree-LSTM: any number of children, a "
                "word at every node)",
          composes="any", leaves="computed", options=LSTM_OPTIONS, recurrent=False,
          defaults=dict(TAI, source="Tai et al. 2015, Table 1 and Secs. 5.1, 5.3", dim=168,
                        structure="dependency"),
          sick=dict(SICK_LSTM, dim=150),
          gradcheck=tuple(objective_checks(trees="dependency")
                          + [dict(trees="binary"), dict(trees="chain")])),
    # Zhu et al. 2015, Sec. 5: hidden size 100, batch 10, learning rate 0.1 under AdaGrad;
    # lambda and the number of epochs are not reported (ours: Tai's lambda, 10 epochs)
    Model("slstm", "slstm", "SLSTM",
          paper="Zhu et al. 2015, eqs. 1-7, backward as their eqs. 8-14 (S-LSTM)",
          composes="binary", leaves="computed", options={"forget_bias": None},
          recurrent=False,
          defaults=dict(source="Zhu et al. 2015, Sec. 5 (lambda, epochs: ours)", dim=100,
                        embedding_dim=100, lr=0.1, emb_lr=0.1, batch_size=10, l2=1e-4,
                        dropout=0.0, epochs=10),
          tuned={mode: SLSTM_ROOT_RATES for mode in ("root", "root+leaves")},
          gradcheck=tuple(objective_checks(input_dim=3) + [dict(input_dim=4)]
                          + rebracketed_checks(input_dim=3))),
    Model("lstm", "lstm", "ChainLSTM", paper="Tai et al. 2015 eq. 1 (chain LSTM)",
          composes="sequence", leaves="computed", options=LSTM_OPTIONS, recurrent=True,
          defaults=dict(TAI_SEQUENCES, source="Tai et al. 2015, Table 1 and Sec. 5.3",
                        dim=168),
          protocols={"nayebi": dict(NAYEBI, dim=150, batch_size=128, embedding_dropout=0.2)},
          sick=dict(SICK_LSTM, dim=150),
          gradcheck=tuple(sequence_checks())),
    Model("bilstm", "bilstm", "BiLSTM",
          paper="Tai et al. 2015 Sec. 2.2 (forward and backward LSTMs, weights shared by "
                "default as footnote 2)",
          composes="sequence", leaves="computed",
          options=dict(LSTM_OPTIONS, untied=None, embedding_masks=None), recurrent=True,
          defaults=dict(TAI_SEQUENCES, source="Tai et al. 2015, Table 1, footnote 2 and "
                                              "Sec. 5.3", dim=168, untied=False),
          # "each of the two LSTMs" (Sec. 4.1): Keras' Bidirectional wrapper gives the
          # backward LSTM weights and a word-vector dropout mask of its own
          protocols={"nayebi": dict(NAYEBI, dim=300, batch_size=300, untied=True,
                                    embedding_dropout=0.3, embedding_masks="per-direction",
                                    recurrent_dropout=[0.3])},
          sick=dict(SICK_LSTM, dim=150),
          gradcheck=tuple(bidirectional_checks())),
    Model("lstm2", "lstm2", "StackedLSTM", paper="Tai et al. 2015 Table 1 (2-layer LSTM)",
          composes="sequence", leaves="computed",
          options=dict(LSTM_OPTIONS, layer_outputs=None), recurrent=True,
          defaults=dict(TAI_SEQUENCES, source="Tai et al. 2015, Table 1 and Sec. 5.3",
                        dim=120),
          sick=dict(SICK_STACKED, dim=108),
          gradcheck=tuple(sequence_checks())),
    Model("bilstm2", "bilstm2", "StackedBiLSTM",
          paper="Tai et al. 2015 Table 1 (2-layer bidirectional LSTM: two 2-layer stacks "
                "sharing weights)",
          composes="sequence", leaves="computed",
          options=dict(LSTM_OPTIONS, untied=None, layer_outputs=None, embedding_masks=None),
          recurrent=True,
          defaults=dict(TAI_SEQUENCES, source="Tai et al. 2015, Table 1, footnote 2 and "
                                              "Sec. 5.3", dim=120, untied=False),
          sick=dict(SICK_STACKED, dim=108),
          gradcheck=tuple(bidirectional_checks())),
    # Nayebi & Blundell, Sec. 4.1 (global attention: 300-d LSTM, 25-d attentional state)
    Model("lstm-global-attn", "lstm_global_attention", "GlobalAttentionLSTM",
          paper="Nayebi & Blundell eqs. 5-8 (softmax attention over the LSTM's states)",
          composes="sequence", leaves="computed",
          options={"forget_bias": None, "attention_dim": None}, recurrent=True,
          defaults=dict(NAYEBI, dim=300, batch_size=300, embedding_dropout=0.3,
                        recurrent_dropout=[0.3]),
          tuned={"root": NAYEBI_TUNED},
          gradcheck=(dict(trees="chain", supervision="root"),
                     dict(trees="chain", supervision="root", extra=dict(attention_dim=2)),
                     sequence_dropout_check(supervision="root"))),
    # Nayebi & Blundell, Sec. 4.1 (recurrent attention: Adadelta, dropout 0.25 on the
    # LSTM's recurrence and 0.3 on the adaptive-transfer layer's)
    Model("lstm-recurrent-attn", "lstm_recurrent_attention", "RecurrentAttentionLSTM",
          paper="Nayebi & Blundell eqs. 9-13 (prefix attention over [h; m], adaptive-transfer "
                "LSTM, highway with b_T = -2)",
          composes="sequence", leaves="computed", options={"forget_bias": None},
          recurrent=True,
          defaults=dict(NAYEBI, dim=300, batch_size=300, optimizer="adadelta", lr=1.0,
                        emb_lr=1.0, epsilon=1e-8, embedding_dropout=0.15,
                        recurrent_dropout=[0.25, 0.3]),
          tuned={"root": NAYEBI_TUNED},
          gradcheck=(dict(trees="chain", supervision="root"),
                     dict(trees="chain", supervision="root", input_dim=3, l2=0.1),
                     sequence_dropout_check(supervision="root", recurrent_dropout=(0.25, 0.3)))),
    # Irsoy & Cardie 2015, Table 2: RNN d_h = 315 and mRNN d_h = 20 with rectifiers ("+")
    Model("rnn", "rnn", "ElmanRNN", paper="Irsoy & Cardie 2015 eqs. 3-4 (Elman)",
          composes="sequence", leaves="computed",
          options={"activation": ("tanh", "relu", "identity", "sigmoid")}, recurrent=True,
          defaults=dict(IRSOY, dim=315, activation="relu"),
          gradcheck=tuple(sequence_checks(activations=("tanh", "relu", "identity",
                                                       "sigmoid")))),
    Model("mrnn", "mrnn", "MultiplicativeRNN",
          paper="Irsoy & Cardie 2015 eq. 5 (multiplicative: a d x d_x x d tensor)",
          composes="sequence", leaves="computed",
          options={"activation": ("identity", "relu", "tanh")}, recurrent=True,
          defaults=dict(IRSOY, dim=20, activation="relu"),
          gradcheck=tuple(sequence_checks(activations=("identity", "relu", "tanh")))),
    # Socher et al. 2013, Sec. 4.2 and 5 (the MV-RNN's SST setting: d between 25 and 35,
    # minibatch 20-30, AdaGrad, L2); the papers give no learning rate, lambda or number
    # of epochs: the RNTN entry's lambda and epochs, and rates ours
    Model("mvrnn", "mvrnn", "MVRNN",
          paper="Socher et al. 2012 (MV-RNN: p = g(W [Ba; Ab]), P = W_M [A; B]), SST as "
                "Socher et al. 2013",
          composes="binary", leaves="computed", options={}, recurrent=False,
          defaults=dict(source="Socher et al. 2013, Sec. 5 (d, minibatch, AdaGrad; learning "
                               "rates, lambda, epochs: ours)",
                        dim=25, lr=0.01, emb_lr=0.01, batch_size=27, l2=1e-3, dropout=0.0,
                        epochs=40, adagrad_reset=1),
          word_matrices=True, word_vectors=True, synthetic=dict(dim=10),
          gradcheck=tuple(objective_checks(input_dim=12, hidden_dim=3)
                          + rebracketed_checks(input_dim=6, hidden_dim=2))),
    # the RAE on the SST's given trees, as Socher et al. 2013 compare it (Sec. 5: d between
    # 25 and 35, minibatch 20-30, AdaGrad); alpha = 0.2 as Socher et al. 2011; learning
    # rates, lambda and epochs are not given: the RNTN entry's lambda and epochs, rates ours
    Model("rae", "rae", "RAE",
          paper="Socher et al. 2011 (semi-supervised recursive autoencoder: p = f(W1 [c1; c2] "
                "+ b1) normalised, reconstruction weighted by the words under each child), "
                "on given trees as Socher et al. 2013",
          composes="binary", leaves="word", options={"reconstruction_weight": None},
          recurrent=False,
          defaults=dict(source="Socher et al. 2013, Sec. 5 (d, minibatch, AdaGrad) and Socher "
                               "et al. 2011 (alpha); learning rates, lambda, epochs: ours",
                        dim=25, embedding_dim=25, lr=0.01, emb_lr=0.01, batch_size=27,
                        l2=1e-3, dropout=0.0, epochs=40, adagrad_reset=1,
                        reconstruction_weight=0.2),
          gradcheck=tuple(objective_checks(input_dim=3) + rebracketed_checks(input_dim=3)[:2]
                          # alpha = 0 leaves W2 and b2 out of J (rows that check nothing):
                          # tests/test_cell_rae.py checks that case; here alpha near 1
                          + [dict(input_dim=3, extra=dict(reconstruction_weight=0.6)),
                             dict(input_dim=3, supervision="root", unary_rate=0.3,
                                  extra=dict(reconstruction_weight=0.9))])),
    # Irsoy & Cardie 2014 as Le & Zuidema 2015 Sec. 5 report it: 3 layers of d = 200 with
    # dropout (46.06 -> 49.5 fine-grained), rectifiers; the paper's text was not available:
    # the dropout rate, optimiser, rates, lambda, minibatch and epochs are ours
    Model("drnn", "drnn", "DRNN",
          paper="Irsoy & Cardie 2014 (deep recursive network: layers stacked over the tree, "
                "rectifiers, untied leaf weights, the head on the top layer)",
          composes="binary", leaves="computed",
          options={"activation": ("relu", "tanh"), "layers": None}, recurrent=False,
          defaults=dict(source="Irsoy & Cardie 2014 as reported by Le & Zuidema 2015, Sec. 5 "
                               "(3 layers, d = 200, rectifiers, dropout); dropout rate, "
                               "learning rates, lambda, minibatch, epochs: ours",
                        dim=200, embedding_dim=300, layers=3, activation="relu", lr=0.01,
                        emb_lr=0.01, batch_size=25, l2=1e-4, dropout=0.1, epochs=20),
          synthetic=dict(layers=2),
          # the rectifier's kink: on the suite's trees a layer-2 pre-activation lies 0.004
          # from 0, within the reach of central differences at the default step (+-2e-3
          # times its slope); 1e-4 keeps them on one side (docs/cells/drnn.md)
          gradcheck=tuple(objective_checks(input_dim=4, extra=dict(layers=2), step=1e-4)
                          + [dict(input_dim=4, extra=dict(layers=3), step=1e-4),
                             dict(input_dim=4, activation="tanh", unary_rate=0.3,
                                  extra=dict(layers=3)),
                             # root labels only; gold trees: a re-bracketed one has leaves
                             # alone on one side, whose inner-child matrix stays unread
                             dict(input_dim=4, activation="tanh", supervision="root",
                                  extra=dict(layers=2))])),
    # Socher et al. 2014's DT-RNN as Tai et al. 2015 train it on SICK (Table 3: their runs,
    # with the similarity head and their SICK setting); the papers give no dimension for
    # it here: d = 150 and 3 positions a side are ours
    Model("dtrnn", "dtrnn", "DTRNN",
          paper="Socher et al. 2014 (DT-RNN: h_i = f((W_v x_i + sum_j l(j) W_pos(i,j) h_j) / "
                "l(i))), on SICK as Tai et al. 2015, Table 3",
          composes="any", leaves="computed", options={"positions": None}, recurrent=False,
          defaults=dict(TAI, source="Tai et al. 2015, Sec. 5.3 (SST setting; d and positions: "
                                    "ours)", dim=150, positions=3, structure="dependency",
                        dropout=0.0),
          sick=dict(),
          gradcheck=tuple(objective_checks(trees="dependency")
                          # constituency trees' wordless heads (every child right of them)
                          # beside dependency ones, so that setting reads every matrix too
                          + [dict(trees="dependency", extra=dict(positions=1)),
                             dict(trees="constituency and dependency", supervision="root")])),
    # the SDT-RNN (Socher et al. 2014) as Tai et al. 2015 train it on SICK (Table 3): the
    # DT-RNN with a matrix per dependency relation (SICK's *.rels); d = 150 ours
    Model("sdtrnn", "sdtrnn", "SDTRNN",
          paper="Socher et al. 2014 (SDT-RNN: the DT-RNN with a matrix per dependency "
                "relation), on SICK as Tai et al. 2015, Table 3",
          composes="any", leaves="computed", options={}, recurrent=False,
          defaults=dict(TAI, source="Tai et al. 2015, Sec. 5.3 (SST setting; d: ours)",
                        dim=150, structure="dependency", dropout=0.0),
          sick=dict(),
          gradcheck=tuple(objective_checks(trees="dependency")
                          + [dict(trees="binary", supervision="root")])),
    # Irsoy & Cardie 2015, Table 1 (matrix-space, d_h = 3: a 3x3 matrix per word, tuned)
    Model("matrix-space", "matrix_space", "MatrixSpace",
          paper="Irsoy & Cardie 2015 eqs. 1-2 (a d x d matrix per word, products in word "
                "order)",
          composes="sequence", leaves="computed", options={}, recurrent=False,
          defaults=dict(IRSOY, source=IRSOY["source"] + "; MPQA size d_h = 3", dim=3,
                        embedding_dim=9, fixed_embeddings=False),
          word_matrices=True, synthetic=dict(dim=3, embedding_dim=9),
          gradcheck=tuple(sequence_checks(dropout=False, input_dim=4, hidden_dim=2))),
    # the bag-of-words baseline (Tai et al. Table 3 "Mean vectors"), trained like the Tree-LSTM
    Model("mean-vectors", "mean_vectors", "MeanVectors",
          paper="bag-of-words baseline (Tai et al. 2015 Table 3)",
          composes="any", leaves="word", options={}, recurrent=False,
          defaults=dict(TAI, source="Tai et al. 2015 (mean vectors baseline)", dim=300,
                        dropout=0.0),
          sick=dict(), baseline=True,
          gradcheck=tuple(dict(input_dim=4, hidden_dim=4, supervision=mode)
                          for mode in SUPERVISIONS)),
)}
# fmt: on


def model(name: str) -> Model:
    """The entry of ``name``; ValueError naming the models for an unknown one."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"model must be one of {sorted(MODELS)}, not {name!r}") from None


def sick_structure(name: str) -> str:
    """The trees a model reads SICK's sentences as: dependency trees for the
    cells of any arity (Tai's Dependency Tree-LSTM) and the bag of words,
    chains for the sequence models, binarised constituency trees otherwise."""
    return {"any": "dependency", "sequence": "chain", "binary": "constituency"}[model(name).composes]


def leaves_are_words(name: str, untied: bool | None) -> bool:
    """Whether a leaf's state is its word vector (so the state dimension is
    the word vectors')."""
    leaves = model(name).leaves
    return leaves == "word" or (leaves == "word when tied" and not untied)


def baseline_model() -> str:
    """The bag-of-words baseline's name."""
    return next(name for name, entry in MODELS.items() if entry.baseline)


def choices(option: str) -> tuple | None:
    """The values some model allows cell option ``option`` (None: any value of
    its type): those the option declares, else every value an entry names."""
    declared = CELL_OPTIONS[option].choices
    if declared is not None:
        return declared
    named = [value for entry in MODELS.values() for value in entry.options.get(option) or ()]
    return tuple(dict.fromkeys(named)) or None


def takers(option: str) -> list:
    """The models that take ``option``, in the table's order."""
    return [name for name, entry in MODELS.items() if option in entry.options]
