r"""Semantic dependency-tree RNN, SDT-RNN (Socher, Karpathy, Le, Manning & Ng
2014), as Tai et al. 2015 train it on SICK (Table 3): the DT-RNN
(``dtrnn.py``) with each child read through the matrix of its dependency
relation to its head instead of its position:

    h_i = f( (1/l(i)) ( W_v x_i + sum_{j in C(i)} l(j) W_rel(i,j) h_j ) + b )    (SDT1)

rel(i, j) the relation of child j's word to its head i (SICK's ``*.rels``),
one of the fixed table ``npcomp/data/readers/dependency_relations.py`` (49 Stanford
basic dependencies; an unknown label reads as ``dep``).  A tree without
relations (a bare ``*.parents`` tree) reads every child through W_dep (SD1).

Everything else, the forward and backward passes and their kernels, is the
DT-RNN's, with the relation id as the child's slot: docs/cells/dtrnn.md and
docs/cells/sdtrnn.md.

=========================  ==================================  ================
paper                      code                                shape
=========================  ==================================  ================
W_v                        ``W_v``                             (d_x, d)
W_r (r a relation)         ``W[r * d:(r + 1) * d]`` (its transpose)  (49 d, d)
b                          ``b``                               (d,)
=========================  ==================================  ================
"""

from __future__ import annotations

import numpy as np

from ..forest import Forest
from npcomp.data.readers.dependency_relations import GENERIC, RELATIONS, relation_id
from .dtrnn import DTRNN
from .interface import Term


class SDTRNN(DTRNN):
    """Semantic dependency-tree RNN: DT-RNN with a matrix per relation."""

    name = "sdtrnn"

    def __init__(self, input_dim: int, hidden_dim: int):
        super().__init__(input_dim, hidden_dim, positions=1)
        self.n_matrices = len(RELATIONS)

    def report_slices(self) -> dict:
        return {}

    def forward_terms(self, forest: Forest, cache) -> list:
        """The DT-RNN's terms, the children's sums by relation (SD1)."""
        terms = super().forward_terms(forest, cache)
        return [
            Term("sum_j l(j) h_j by relation", "SDT1", term.values, "SD1")
            if term.symbol.endswith("by position")
            else Term(term.symbol, "SDT1", term.values)
            for term in terms
        ]

    def backward_terms(self, forest: Forest, cache) -> list:
        return [
            Term(term.symbol, term.equation.replace("DT1", "SDT1"), term.values, "SD1" if term.erratum else "")
            for term in super().backward_terms(forest, cache)
        ]

    def child_slots(self, forest: Forest) -> np.ndarray:
        """(n,) every node's relation id to its head (-1 at a root); W_dep's
        for every node of a forest without relations (SD1)."""
        slots = np.full(forest.n_nodes, -1, dtype=np.int64)
        child = forest.parent >= 0
        if forest.relation is None:
            slots[child] = relation_id(GENERIC)
        else:
            slots[child] = forest.relation[child]
            # a child without a word of its own (a constituency node): the generic relation
            slots[child & (forest.relation < 0)] = relation_id(GENERIC)
        return slots
