"""Composition cells: one module per cell, equations at the top of each.

Every cell has the same small interface:

* ``Cell(input_dim, hidden_dim, **options)``: the options a cell takes are
  listed in its ``options`` class attribute (``activation``, ``untied``);
* ``parameter_shapes()`` -> [(name, shape)], ``initialise(params, rng)``;
* ``check_forest(forest)``: raises ValueError for a structure the cell cannot
  compose (too many children, a word where the cell reads none, ...);
* ``forward(params, forest, x, word_index, helper=None) -> (h (n, output_dim), cache)``: ``x``
  (U, d_x) holds the vectors of the minibatch's U distinct words and
  ``word_index`` the row each word-reading node reads (see ``inputs.py``);
* ``backward(params, forest, cache, d_h, grads, helper=None) -> d_x``: adds the
  parameter gradients into ``grads`` (same names) and returns dLoss/dx (U, d_x);
  ``helper`` (an executor with one thread) may take work off the critical path;
* ``report_slices()``: gate-level sub-blocks named for gradient-check reports.

Sequence cells with recurrent dropout (Gal 2015: one mask per sequence) also
have ``recurrent_widths()`` -> [width per recurrent connection] and take
``forward(..., recurrent_masks=[(trees, width) per connection] or None)``:
the state entering a recurrence at node t is multiplied by
``mask[forest.tree[t]]``; the outputs themselves are not masked.  A cell
that reads the word vectors through k connections, each with its own
word-vector dropout mask (the BiLSTM's two directions), says so with
``input_copies()`` -> k: under that dropout its ``x`` is (n, k d_x), the k
masked copies side by side, and its ``d_x`` the same shape.
"""
from __future__ import annotations

from importlib import import_module

# registry name -> (module, class); modules are imported when first used
CELLS = {
    "recnn": ("recnn", "RecNN"),
    "rntn": ("rntn", "RNTN"),
    "lstm-rnn": ("lstm_rnn", "LSTMRNN"),
    "treelstm-nary": ("treelstm_nary", "TreeLSTMNary"),
    "treelstm-childsum": ("treelstm_childsum", "TreeLSTMChildSum"),
    "slstm": ("slstm", "SLSTM"),
    "lstm": ("lstm", "ChainLSTM"),
    "bilstm": ("bilstm", "BiLSTM"),
    "lstm2": ("lstm2", "StackedLSTM"),
    "bilstm2": ("bilstm2", "StackedBiLSTM"),
    "lstm-global-attn": ("lstm_global_attention", "GlobalAttentionLSTM"),
    "lstm-recurrent-attn": ("lstm_recurrent_attention", "RecurrentAttentionLSTM"),
    "rnn": ("rnn", "ElmanRNN"),
    "mrnn": ("mrnn", "MultiplicativeRNN"),
    "matrix-space": ("matrix_space", "MatrixSpace"),
    "mean-vectors": ("mean_vectors", "MeanVectors"),
}

# every option some cell takes: configs and the command line name them so
CELL_OPTIONS = ("activation", "untied", "forget_bias", "output_gate", "layer_outputs",
                "leaf_activation", "embedding_masks")


def cell_class(name: str):
    """The class of the cell registered as ``name``."""
    try:
        module, class_name = CELLS[name]
    except KeyError:
        raise ValueError(f"model must be one of {sorted(CELLS)}, not {name!r}") from None
    return getattr(import_module(f"{__name__}.{module}"), class_name)


def make_cell(name: str, input_dim: int, hidden_dim: int, **options):
    """A cell built with the options it takes; options it does not take must be
    None (not given)."""
    cls = cell_class(name)
    accepted = getattr(cls, "options", ())
    unused = sorted(key for key, value in options.items()
                    if key not in accepted and value is not None)
    if unused:
        raise ValueError(f"{name} takes no option {', '.join(unused)}")
    return cls(input_dim, hidden_dim,
               **{key: value for key, value in options.items() if value is not None})
