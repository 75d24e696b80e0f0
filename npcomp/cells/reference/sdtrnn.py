r"""Semantic dependency-tree RNN, node by node (Socher et al. 2014): the
DT-RNN of ``dtrnn.py`` with each child read through the matrix of its
relation to its head (SDT1), W_dep for a tree without relations (SD1).

``forward(tree, x, params)`` and ``backward(tree, x, params, d_h)`` return
what ``dtrnn``'s do.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree
from .dtrnn import composed, composed_backward

OPTIONS = ()

# the relations' fixed order (npcomp/data/readers/dependency_relations.py), written out
# again here so the oracle does not read the code it checks
RELATIONS = (
    "acomp",
    "advcl",
    "advmod",
    "agent",
    "amod",
    "appos",
    "aux",
    "auxpass",
    "cc",
    "ccomp",
    "conj",
    "cop",
    "csubj",
    "csubjpass",
    "dep",
    "det",
    "discourse",
    "dobj",
    "expl",
    "goeswith",
    "iobj",
    "mark",
    "mwe",
    "neg",
    "nn",
    "npadvmod",
    "nsubj",
    "nsubjpass",
    "num",
    "number",
    "parataxis",
    "pcomp",
    "pobj",
    "poss",
    "possessive",
    "preconj",
    "predet",
    "prep",
    "prepc",
    "prt",
    "punct",
    "quantmod",
    "rcmod",
    "ref",
    "root",
    "tmod",
    "vmod",
    "xcomp",
    "xsubj",
)


def relations_of(tree: Tree) -> dict:
    """{child: the index of its relation's matrix}."""
    generic = RELATIONS.index("dep")
    out = {}
    for i, kids in enumerate(tree.children()):
        for j in kids:
            token = tree.token_index[j]
            label = tree.relations[token].lower() if tree.relations is not None and token >= 0 else "dep"
            out[j] = RELATIONS.index(label) if label in RELATIONS else generic
    return out


def forward(tree: Tree, x: np.ndarray, params: dict) -> dict:
    """(SDT1) for one tree of any arity."""
    return composed(tree, x, params, relations_of(tree))


def backward(tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray) -> dict:
    """(SDT1) reversed node by node, parents first."""
    return composed_backward(tree, x, params, d_h, relations_of(tree))
