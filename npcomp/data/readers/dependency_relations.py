"""The dependency relations a tree's words may carry (SICK's ``*.rels``
files: the Stanford basic dependencies of de Marneffe & Manning's manual),
as fixed ids, so that a model's relation matrices mean the same relation in
every split and every saved model.

A label outside the table reads as ``dep``, the scheme's own generic
"dependent" relation (SICK's files hold none outside it).
"""

from __future__ import annotations

import numpy as np

__all__ = ["RELATIONS", "GENERIC", "relation_id", "node_relations"]

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
GENERIC = "dep"
_IDS = {name: k for k, name in enumerate(RELATIONS)}


def relation_id(label: str) -> int:
    """The id of relation ``label`` (lower-cased; an unknown one: ``dep``'s)."""
    return _IDS.get(label.lower(), _IDS[GENERIC])


def node_relations(tree) -> np.ndarray | None:
    """(n_nodes,) int32: the relation id of each node's word to its head (-1 for
    a node without a word), or None for a tree without relations."""
    if tree.relations is None:
        return None
    ids = np.array([relation_id(label) for label in tree.relations], dtype=np.int32)
    return np.where(tree.token_index >= 0, ids[np.maximum(tree.token_index, 0)], -1).astype(np.int32)
