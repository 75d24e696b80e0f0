"""What the PyTorch and DyNet counterparts of npcomp's models share
(``torch_cells.py``, ``dynet_cells.py``): the npcomp models they can copy,
and how their loss and gradients are compared with npcomp's."""

from __future__ import annotations

import numpy as np


def softmax_model_sizes(model, library: str) -> tuple:
    """(vocabulary size, word-vector size, classes) of an npcomp ``TreeModel``
    with the softmax head at every labelled node, the only tree model the
    counterparts in ``library`` copy; ValueError for another."""
    if model.head_name != "softmax" or model.leaf_head is not None:
        raise ValueError(f"the {library} models have the softmax head at every labelled node")
    return model.vocab_size, model.embedding_dim, model.n_classes + model.training_only_classes


def worst_gradient(result: dict) -> tuple:
    """(name, difference) of the parameter whose gradient differs most in a
    ``comparison``."""
    return max(result["gradient_difference"].items(), key=lambda item: item[1])


def comparison(ours: float, theirs: float, gradients: dict, grads) -> dict:
    """npcomp's loss ``ours`` and gradients ``grads`` (``npcomp.params``)
    against a counterpart's loss ``theirs`` and ``gradients`` (by npcomp name):
    {"loss", "loss_difference": |J - J'| / |J|, "gradient_difference":
    {name: max |g - g'| / max |g|}}."""
    differences = {}
    for name, value in gradients.items():
        expected = grads[name]
        scale = max(float(np.abs(expected).max()), 1e-300)
        differences[name] = float(np.abs(value - expected).max()) / scale
    return {"loss": ours, "loss_difference": abs(ours - theirs) / abs(ours), "gradient_difference": differences}
