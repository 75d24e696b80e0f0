"""Composition cells: one module per cell, equations at the top of each.

Every cell has the same small interface:

* ``parameter_shapes()`` -> [(name, shape)], ``initialise(params, rng)``;
* ``forward(params, forest, x, word_index, helper=None) -> (h (n, output_dim), cache)``: ``x``
  (U, d_x) holds the vectors of the minibatch's U distinct words and
  ``word_index`` the row each word-reading node reads (see ``inputs.py``);
* ``backward(params, forest, cache, d_h, grads, helper=None) -> d_x``: adds the
  parameter gradients into ``grads`` (same names) and returns dLoss/dx (U, d_x);
  ``helper`` (an executor with one thread) may take work off the critical path;
* ``report_slices()``: gate-level sub-blocks named for gradient-check reports.
"""
from __future__ import annotations

from .mean_vectors import MeanVectors
from .recnn import RecNN
from .treelstm_nary import TreeLSTMNary

CELLS = {cell.name: cell for cell in (TreeLSTMNary, RecNN, MeanVectors)}


def make_cell(name: str, input_dim: int, hidden_dim: int, activation: str = "tanh",
              untied: bool = False):
    if name == "treelstm-nary":
        return TreeLSTMNary(input_dim, hidden_dim)
    if name == "recnn":
        return RecNN(input_dim, hidden_dim, activation=activation, untied=untied)
    if name == "mean-vectors":
        return MeanVectors(input_dim)
    raise ValueError(f"model must be one of {sorted(CELLS)}, not {name!r}")
