r"""Mean of word vectors, node by node (Tai et al. 2015 Table 3 "Mean
vectors"; Irsoy & Cardie 2015 "VecAvg").

The bag-of-words baseline: a node's state is the mean of the word vectors in
its span (its own word, if it reads one, and its descendants' words):

    h_j = (1 / |span(j)|) sum_{w in span(j)} x_w

``forward(tree, x, params=None)`` returns, one row per node in tree order:
``n`` (n,), the number of words in the span, and ``h``, ``out`` (= h), each
(n, d_x).  The cell has no parameters.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree

OPTIONS = ()


def forward(tree: Tree, x: np.ndarray, params: dict | None = None) -> dict:
    """The span means of one tree.  x: (T, d_x), row t the vector of token t."""
    spans = tree.span_tokens()  # the tokens under each node
    n_words = np.array([len(span) for span in spans], dtype=float)
    h = np.array([np.mean([x[t] for t in span], axis=0) for span in spans])
    return {"n": n_words, "h": h, "out": h.copy()}
