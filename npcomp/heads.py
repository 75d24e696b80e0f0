"""Output heads: softmax or ordinal at the labelled nodes of a forest, and
over the two sentences of a pair the similarity head (relatedness) or the
pair classifier (entailment and other classes of pairs).

Every node head has ``parameter_shapes``, ``initialise``, ``outputs(params, h)``
(what ``npcomp predict`` reports), ``decode(outputs)`` -> labels, and
``loss``/``backward`` over the labelled nodes' states.

Softmax classifier:

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

from npcomp.cells.kernels.activations import uniform_fan_in

__all__ = [
    "HEADS",
    "PAIR_HEADS",
    "SoftmaxClassifier",
    "OrdinalClassifier",
    "SimilarityHead",
    "PairClassifierHead",
    "make_head",
    "softmax",
    "dropout_mask",
]


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
class HeadCache:
    inputs: np.ndarray  # (m, d) classifier inputs after dropout
    outputs: np.ndarray  # (m, C) probabilities, or (m, C-1) cumulative ones
    mask: np.ndarray | None  # (m, d) dropout mask or None
    losses: np.ndarray | None = None  # (m,) each row's loss (their sum is the loss)


class AffineHead:
    """What both heads share: logits = h W + b with W (d, width), b (width,),
    dropout on h, and the backward from dLoss/dlogits."""

    width_less_than_classes = 0  # the ordinal head has C-1 outputs

    def __init__(self, input_dim: int, n_classes: int):
        self.input_dim = input_dim
        self.n_classes = n_classes
        self.width = n_classes - self.width_less_than_classes

    def parameter_shapes(self) -> list:
        return [("W", (self.input_dim, self.width)), ("b", (self.width,))]

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        uniform_fan_in(params["W"], self.input_dim, rng)
        uniform_fan_in(params["b"], self.input_dim, rng)

    @staticmethod
    def _logits(params: dict, h: np.ndarray, mask: np.ndarray | None):
        """(classifier inputs after dropout, their logits)."""
        inputs = h if mask is None else h * mask
        return inputs, inputs @ params["W"] + params["b"]

    @staticmethod
    def _backward_from_logits(
        params: dict, cache: HeadCache, d_logits: np.ndarray, scale: float, grads: dict
    ) -> np.ndarray:
        """Adds scale * dW, db into ``grads``; returns scale * dLoss/dh (m, d)."""
        d_logits *= scale
        grads["W"] += cache.inputs.T @ d_logits
        grads["b"] += d_logits.sum(axis=0)
        d_h = d_logits @ params["W"].T
        if cache.mask is not None:
            d_h *= cache.mask
        return d_h


class SoftmaxClassifier(AffineHead):
    """Softmax over ``n_classes`` from ``input_dim``-dimensional node states."""

    def outputs(self, params: dict, h: np.ndarray) -> np.ndarray:
        """(m, d) states -> (m, C) class probabilities (no dropout)."""
        return softmax(h @ params["W"] + params["b"])

    @staticmethod
    def decode(outputs: np.ndarray) -> np.ndarray:
        """The most probable class of each row."""
        return outputs.argmax(axis=1)

    def loss(self, params: dict, h: np.ndarray, labels: np.ndarray, mask: np.ndarray | None = None):
        """Summed negative log-likelihood of ``labels`` (m,) and its cache."""
        inputs, logits = self._logits(params, h, mask)
        probabilities = softmax(logits)
        picked = probabilities[np.arange(labels.shape[0]), labels]
        losses = -np.log(np.maximum(picked, np.finfo(picked.dtype).tiny))
        return float(losses.sum()), HeadCache(inputs, probabilities, mask, losses)

    def backward(self, params: dict, cache: HeadCache, labels: np.ndarray, scale: float, grads: dict) -> np.ndarray:
        """Gradient of ``scale`` * loss: adds into ``grads``, returns dLoss/dh (m, d)."""
        d_logits = cache.outputs.copy()
        d_logits[np.arange(labels.shape[0]), labels] -= 1.0
        return self._backward_from_logits(params, cache, d_logits, scale, grads)


class OrdinalClassifier(AffineHead):
    r"""Ordinal regression (Irsoy & Cardie 2015, Sec. 4.2, after Cheng et al. 2008).

    Classes 0..C-1 are ordered; class y is coded as the cumulative target
    r = [1]*y + [0]*(C-1-y): r_k = 1 when y > k (Irsoy's r_i = 1 for i < k in
    1-based classes; the C-th entry is 0 for every class, so it is not an
    output).  C-1 sigmoid outputs estimate q_k = P(y > k):

        q = sigma( h W + b )                            W (d, C-1), b (C-1,)
        loss = - sum_k [ r_k log q_k + (1 - r_k) log(1 - q_k) ]
        d z_k = q_k - r_k

    (the loss is each output's binary cross-entropy: Irsoy name the sigmoid
    outputs and the targets but not the loss; this is our reading.)
    Decoding (Irsoy): threshold q at 0.5 and read up to the first 0 — the
    label is the number of leading ones, so [1, 0, 1, 0] decodes to 1.
    Dropout as for the softmax head.
    """

    width_less_than_classes = 1

    def __init__(self, input_dim: int, n_classes: int):
        if n_classes < 2:
            raise ValueError("an ordinal head needs at least two classes")
        super().__init__(input_dim, n_classes)

    def outputs(self, params: dict, h: np.ndarray) -> np.ndarray:
        """(m, d) states -> (m, C-1) cumulative probabilities q_k = P(y > k)."""
        return _sigmoid(h @ params["W"] + params["b"])

    @staticmethod
    def decode(outputs: np.ndarray) -> np.ndarray:
        """Monotone decoding: the number of leading outputs >= 0.5."""
        above = outputs >= 0.5
        # the first output below 0.5 ends the count (C-1 when none is)
        return np.where(above.all(axis=1), above.shape[1], np.argmin(above, axis=1))

    def targets(self, labels: np.ndarray, dtype) -> np.ndarray:
        """(m, C-1) cumulative targets r of ``labels``."""
        return (labels[:, None] > np.arange(self.n_classes - 1)[None, :]).astype(dtype)

    def loss(self, params: dict, h: np.ndarray, labels: np.ndarray, mask: np.ndarray | None = None):
        inputs, logits = self._logits(params, h, mask)
        q = _sigmoid(logits)
        r = self.targets(labels, logits.dtype)
        # log sigma(z) = -log(1 + e^-z), log(1 - sigma(z)) = -log(1 + e^z): stable forms
        losses = (r * np.logaddexp(0.0, -logits) + (1.0 - r) * np.logaddexp(0.0, logits)).sum(axis=1)
        return float(losses.sum()), HeadCache(inputs, q, mask, losses)

    def backward(self, params: dict, cache: HeadCache, labels: np.ndarray, scale: float, grads: dict) -> np.ndarray:
        d_logits = cache.outputs - self.targets(labels, cache.outputs.dtype)
        return self._backward_from_logits(params, cache, d_logits, scale, grads)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp overflow gives exactly 0
        return 1.0 / (1.0 + np.exp(-z))


class PairFeatureHead:
    r"""What both pair heads share: Tai, Socher & Manning 2015, Sec. 4.2,
    eq. 15 up to the softmax.  From the two sentence representations h_L,
    h_R (rows of (m, d)), in row-vector form (the paper's W^(x) h_x is our
    h_x W_times):

        h_x   = h_L * h_R                                              (15a)
        h_+   = |h_L - h_R|                                            (15b)
        h_s   = sigma( h_x W_times + h_+ W_plus + b_h )                (15c)
        p_hat = softmax( h_s W_p + b_p )                               (15d)

    ==========  ==========  =========
    paper       code        shape
    ==========  ==========  =========
    W^(x)       W_times     (d, H)
    W^(+)       W_plus      (d, H)
    b^(h)       b_h         (H,)
    W^(p)       W_p         (H, K)
    b^(p)       b_p         (K,)
    ==========  ==========  =========

    Backward from delta_p = dLoss/d(h_s W_p + b_p), every symbol a row per pair:

        delta_s  = (delta_p W_p^T) * h_s * (1 - h_s)                   (15d, 15c)
        delta_x  = delta_s W_times^T,  delta_+ = delta_s W_plus^T
        dh_L     = delta_x * h_R + delta_+ * sign(h_L - h_R)           (15a, 15b)
        dh_R     = delta_x * h_L - delta_+ * sign(h_L - h_R)

    (|.| has no derivative at 0: sign(0) = 0 takes the subgradient 0 there.)
    A subclass gives the target and the loss, and so delta_p.
    """

    def __init__(self, input_dim: int, hidden_dim: int = 50, n_classes: int = 5):
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.n_classes = n_classes

    def parameter_shapes(self) -> list:
        d, hidden, classes = self.input_dim, self.hidden_dim, self.n_classes
        return [
            ("W_times", (d, hidden)),
            ("W_plus", (d, hidden)),
            ("b_h", (hidden,)),
            ("W_p", (hidden, classes)),
            ("b_p", (classes,)),
        ]

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        # h_x and h_+ both feed the hidden layer: its fan-in is 2d
        for name in ("W_times", "W_plus", "b_h"):
            uniform_fan_in(params[name], 2 * self.input_dim, rng)
        for name in ("W_p", "b_p"):
            uniform_fan_in(params[name], self.hidden_dim, rng)

    def _forward(self, params: dict, h_left: np.ndarray, h_right: np.ndarray):
        h_times = h_left * h_right  # (15a)
        difference = h_left - h_right
        h_plus = np.abs(difference)  # (15b)
        h_s = _sigmoid(h_times @ params["W_times"] + h_plus @ params["W_plus"] + params["b_h"])  # (15c)
        p_hat = softmax(h_s @ params["W_p"] + params["b_p"])  # (15d)
        return h_times, h_plus, difference, h_s, p_hat

    def outputs(self, params: dict, h_left: np.ndarray, h_right: np.ndarray) -> np.ndarray:
        """(m, K) predicted distributions p_hat."""
        return self._forward(params, h_left, h_right)[-1]

    def predict(self, params: dict, h_left: np.ndarray, h_right: np.ndarray) -> np.ndarray:
        """(m,) each pair's prediction (``decode`` of its p_hat)."""
        return self.decode(self.outputs(params, h_left, h_right))

    @staticmethod
    def _cache(h_left, h_right, forward: tuple, target: np.ndarray) -> dict:
        h_times, h_plus, difference, h_s, p_hat = forward
        return dict(
            h_left=h_left,
            h_right=h_right,
            h_times=h_times,
            h_plus=h_plus,
            difference=difference,
            h_s=h_s,
            p_hat=p_hat,
            target=target,
        )

    def backward(self, params: dict, cache: dict, scale: float, grads: dict):
        """Gradient of ``scale`` * loss: adds into ``grads``; returns (dh_L, dh_R), (m, d) each.
        Both losses have delta_p = p_hat - target (the target sums to 1 per pair)."""
        delta_p = (cache["p_hat"] - cache["target"]) * scale
        h_s = cache["h_s"]
        grads["W_p"] += h_s.T @ delta_p  # (15d)
        grads["b_p"] += delta_p.sum(axis=0)
        delta_s = (delta_p @ params["W_p"].T) * h_s * (1.0 - h_s)  # (15c)
        grads["W_times"] += cache["h_times"].T @ delta_s
        grads["W_plus"] += cache["h_plus"].T @ delta_s
        grads["b_h"] += delta_s.sum(axis=0)
        delta_times = delta_s @ params["W_times"].T  # (15a)
        delta_plus = (delta_s @ params["W_plus"].T) * np.sign(cache["difference"])  # (15b)
        d_left = delta_times * cache["h_right"] + delta_plus
        d_right = delta_times * cache["h_left"] - delta_plus
        return d_left, d_right


class SimilarityHead(PairFeatureHead):
    r"""Similarity of a sentence pair (Tai, Socher & Manning 2015, Sec. 4.2,
    eq. 15): ``PairFeatureHead``'s p_hat over the ratings 1..K, and

        y_hat = r^T p_hat,   r = [1, 2, ..., K]                        (15e)

    Target: the sparse distribution p with r^T p = y (Tai Sec. 4.2): mass
    y - floor(y) on class floor(y) + 1 and floor(y) - y + 1 on floor(y)
    (all on class K when y = K).  Loss per pair: KL(p || p_hat) =
    sum_i p_i (log p_i - log p_hat_i), with 0 log 0 = 0, so that

        delta_p  = p_hat - p                         dKL/d(logits): sum p = 1
    """

    classifies = False

    def ratings(self, dtype=np.float64) -> np.ndarray:
        """r = [1, 2, ..., K]."""
        return np.arange(1, self.n_classes + 1, dtype=dtype)

    def decode(self, p_hat: np.ndarray) -> np.ndarray:
        """(m,) predicted scores y_hat = r^T p_hat (15e)."""
        return p_hat @ self.ratings(p_hat.dtype)

    def target_distribution(self, scores: np.ndarray, dtype) -> np.ndarray:
        """(m,) gold scores in [1, K] -> (m, K) sparse targets p with r^T p = y."""
        scores = np.asarray(scores, dtype=np.float64)
        if not np.all((scores >= 1.0) & (scores <= self.n_classes)):  # NaN fails too
            raise ValueError(f"relatedness scores must lie in [1, {self.n_classes}]")
        lower = np.minimum(np.floor(scores), self.n_classes - 1).astype(np.int64)  # 1-based
        upper_share = scores - lower  # mass on class lower + 1, in [0, 1]
        target = np.zeros((scores.shape[0], self.n_classes), dtype=dtype)
        rows = np.arange(scores.shape[0])
        target[rows, lower - 1] = 1.0 - upper_share
        target[rows, lower] = upper_share
        return target

    def loss(self, params: dict, h_left: np.ndarray, h_right: np.ndarray, scores: np.ndarray):
        """Summed KL(p || p_hat) over the m pairs, and the cache for ``backward``."""
        forward = self._forward(params, h_left, h_right)
        p_hat = forward[-1]
        target = self.target_distribution(scores, p_hat.dtype)
        tiny = np.finfo(p_hat.dtype).tiny
        supported = target > 0.0
        loss = float(
            np.sum(target[supported] * (np.log(target[supported]) - np.log(np.maximum(p_hat[supported], tiny))))
        )
        return loss, self._cache(h_left, h_right, forward, target)


class PairClassifierHead(PairFeatureHead):
    r"""A class for a sentence pair (entailment: NEUTRAL, ENTAILMENT,
    CONTRADICTION; paraphrase; NLI): ``PairFeatureHead``'s pair features and
    sigmoid hidden layer, eqs. 15a-15c of Tai et al. 2015, and its softmax
    (15d) over the C classes instead of the ratings.  Tai et al. give no
    entailment head: reading their relatedness features into a softmax over
    the classes with the cross-entropy objective is npcomp's choice.

        p_hat  = softmax( h_s W_p + b_p )                    (15d), C classes
        y_hat  = argmax_c p_hat_c
        loss   = - sum over pairs k of log p_hat^(k)_(y_k)
        delta_p = p_hat - onehot(y)                  d loss/d(logits)

    (the cross-entropy is the KL divergence of the one-hot target, so the
    backward from delta_p is the similarity head's.)
    """

    classifies = True

    @staticmethod
    def decode(p_hat: np.ndarray) -> np.ndarray:
        """(m,) the most probable class of each pair."""
        return p_hat.argmax(axis=1)

    def loss(self, params: dict, h_left: np.ndarray, h_right: np.ndarray, labels: np.ndarray):
        """Summed -log p_hat(y) over the m pairs of class numbers ``labels``
        (m,), and the cache for ``backward``."""
        labels = np.asarray(labels)
        if labels.shape[0] and not ((labels >= 0) & (labels < self.n_classes)).all():
            raise ValueError(f"pair classes must be class numbers 0..{self.n_classes - 1}")
        forward = self._forward(params, h_left, h_right)
        p_hat = forward[-1]
        rows = np.arange(labels.shape[0])
        picked = p_hat[rows, labels]
        loss = float(-np.log(np.maximum(picked, np.finfo(p_hat.dtype).tiny)).sum())
        target = np.zeros_like(p_hat)
        target[rows, labels] = 1.0
        return loss, self._cache(h_left, h_right, forward, target)


# the heads of sentence pairs: relatedness, or a class (model.PairModel's ``head``)
PAIR_HEADS = {"similarity": SimilarityHead, "pair_softmax": PairClassifierHead}


HEADS = {"softmax": SoftmaxClassifier, "ordinal": OrdinalClassifier}


def make_head(name: str, input_dim: int, n_classes: int):
    try:
        return HEADS[name](input_dim, n_classes)
    except KeyError:
        raise ValueError(f"head must be one of {sorted(HEADS)}, not {name!r}") from None
