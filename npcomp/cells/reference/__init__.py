r"""Reference implementations of the cells: slow, readable oracles.

Every cell in ``npcomp/cells/`` computes a whole minibatch level by level
with numba kernels, fused matrix products and the row-vector orientation.
The module of the same name here computes the same function the way the
paper prints it: one tree node by node (children first) or one sentence
time step by time step, in the paper's column orientation (``W @ x``), with
the paper's symbol names and each line's equation number in a comment.
Plain NumPy, no numba, no batching, no caches: what is slow here is meant
to be read.  The tests (``tests/test_cell_*.py``) compare every fast cell's
forward with its reference in float64; the dicts a reference returns let a
user (or a command) print every forward quantity under the paper's symbols.

One entry point per module, ``forward``:

* tree cells: ``forward(tree, x, params, **options)`` with ``tree`` an
  ``npcomp.data.readers.formats.Tree`` and ``x`` (T, d_x) one vector per token of the
  sentence (node j reads ``x[tree.token_index[j]]`` when it reads a word);
* sequence cells: ``forward(x, params, **options)`` with ``x`` (T, d_x) the
  sentence's word vectors in word order;
* ``params``: the cell's named parameters in the cell's own layout (a dict,
  or the views ``Parameters.prefixed("cell")`` returns); where the layout
  packs several of the paper's matrices into one, the module's
  ``paper_parameters(params)`` returns them under the paper's names, in the
  paper's orientation;
* options: those of the cell's options that change its forward (each
  module's ``OPTIONS``), with the cell's defaults; ``masks``, where the cell
  has recurrent dropout, is the sentence's row (d,) of each recurrent mask,
  in the order of the cell's ``recurrent_widths()``, or None.

The tree cells' modules also write the backward pass out node by node, from
the root down, in the paper's symbols with the errata of docs/EQUATIONS.md
and docs/cells/ as comments where they decide a line:

* ``backward(tree, x, params, d_h, **options)`` with ``d_h`` (n, d) the
  head's dJ/dh per node in tree order returns each error term the fast
  cell's ``backward_terms`` shows, under the same symbol, one row per node
  (NaN where a node has none), ``grads`` (dJ/d each of the cell's parameters
  in the cell's own layout: the paper matrices' gradients transposed back)
  and ``d_x`` (T, d_x), dJ/dx per token (tests/cells/test_reference_backward.py).

``forward`` returns a dict of float64 arrays keyed by the paper's symbols,
one row per node (tree order) or per time step (word order), for every
quantity the equations name (gates, cells, states; a quantity of the whole
sentence, such as an attention context, is one vector); ``"out"`` is always
what the fast cell outputs for these nodes, row for row.  A quantity a node
does not have (a gate at a leaf that has no memory block) is NaN there.
Each module's docstring lists its keys.

Imports flow one way: these modules use NumPy and ``npcomp.data.readers.formats`` only
(the package, the registry to find them),
never the cells they check, the tests, gradcheck, the trainer or the CLI.
"""

from __future__ import annotations

from importlib import import_module

from .. import registry

__all__ = ["reference_module", "reads_trees"]


def reference_module(name: str):
    """The reference module of the model registered as ``name``: the module
    of the cell's own name (``cells/registry.py``) in this package."""
    return import_module(f"{__name__}.{registry.model(name).module}")


def reads_trees(name: str) -> bool:
    """Whether the reference of ``name`` reads one tree (``forward(tree, x,
    params)``) rather than one sentence's word vectors (``forward(x, params)``)."""
    return registry.model(name).composes != "sequence"
