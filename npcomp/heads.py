"""Output heads: a softmax classifier at the labelled nodes of a forest.

Tai et al. Sec. 4.1, in row-vector form:

    p_hat(y | {x}_j) = softmax( h_j W^(s) + b^(s) )
    y_hat_j          = argmax_y p_hat(y | {x}_j)
    loss             = - sum over labelled j of log p_hat(y_j | {x}_j)

Dropout (Srivastava et al.) acts on the classifier input h_j: training
multiplies it by a mask of Bernoulli(1-p)/(1-p) entries (inverted dropout, so
evaluation uses h_j unchanged).

Backward: d logits = p_hat - onehot(y); dW^(s) = h^T d logits;
db^(s) = sum of d logits; dh = d logits W^(s)^T (times the mask).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cells.activations import uniform_fan_in


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax, max subtracted first."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    np.exp(shifted, out=shifted)
    shifted /= shifted.sum(axis=1, keepdims=True)
    return shifted


def dropout_mask(shape, rate: float, rng: np.random.Generator, dtype) -> np.ndarray | None:
    """Inverted-dropout mask: 0 with probability ``rate``, else 1/(1-rate)."""
    if rate <= 0.0:
        return None
    draw_type = np.float32 if np.dtype(dtype) == np.float32 else np.float64
    keep = rng.random(shape, dtype=draw_type) >= rate
    return keep * np.asarray(1.0 / (1.0 - rate), dtype=dtype)


@dataclass
class SoftmaxCache:
    inputs: np.ndarray         # (m, d) classifier inputs after dropout
    probabilities: np.ndarray  # (m, C)
    mask: np.ndarray | None    # (m, d) dropout mask or None


class SoftmaxClassifier:
    """Softmax over ``n_classes`` from ``input_dim``-dimensional node states."""

    def __init__(self, input_dim: int, n_classes: int):
        self.input_dim = input_dim
        self.n_classes = n_classes

    def parameter_shapes(self) -> list:
        return [("W", (self.input_dim, self.n_classes)), ("b", (self.n_classes,))]

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        uniform_fan_in(params["W"], self.input_dim, rng)
        uniform_fan_in(params["b"], self.input_dim, rng)

    def probabilities(self, params: dict, h: np.ndarray) -> np.ndarray:
        """(m, d) states -> (m, C) class probabilities (no dropout)."""
        return softmax(h @ params["W"] + params["b"])

    def loss(self, params: dict, h: np.ndarray, labels: np.ndarray,
             mask: np.ndarray | None = None):
        """Summed negative log-likelihood of ``labels`` (m,) and its cache."""
        inputs = h if mask is None else h * mask
        probabilities = softmax(inputs @ params["W"] + params["b"])
        picked = probabilities[np.arange(labels.shape[0]), labels]
        loss = -float(np.log(np.maximum(picked, np.finfo(picked.dtype).tiny)).sum())
        return loss, SoftmaxCache(inputs, probabilities, mask)

    def backward(self, params: dict, cache: SoftmaxCache, labels: np.ndarray,
                 scale: float, grads: dict) -> np.ndarray:
        """Gradient of ``scale`` * loss: adds into ``grads``, returns dLoss/dh (m, d)."""
        d_logits = cache.probabilities.copy()
        d_logits[np.arange(labels.shape[0]), labels] -= 1.0
        d_logits *= scale
        grads["W"] += cache.inputs.T @ d_logits
        grads["b"] += d_logits.sum(axis=0)
        d_h = d_logits @ params["W"].T
        if cache.mask is not None:
            d_h *= cache.mask
        return d_h
