"""Models: word embeddings -> composition cell -> a head.

``TreeModel`` classifies labelled nodes (``tree_model.py``); ``PairModel``
scores or classifies sentence pairs (``pair_model.py``); what both share,
the embedding look-up, the cell, dropout and the objective's frame, is
``SentenceEncoder`` (``encoder.py``, whose docstring gives the objective).
A model holds no parameters: each call takes them.
"""

from .encoder import AVERAGES, DropoutMasks, HeadPass, SentenceEncoder, layer_rates
from .pair_model import PairBatch, PairModel
from .tree_model import TreeModel

__all__ = [
    "TreeModel",
    "PairModel",
    "PairBatch",
    "SentenceEncoder",
    "DropoutMasks",
    "HeadPass",
    "layer_rates",
    "AVERAGES",
]
