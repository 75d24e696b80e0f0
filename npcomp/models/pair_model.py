"""The sentence-pair model: one ``SentenceEncoder`` for both sentences of
each pair, and a pair head on the two roots' states (Tai et al. Sec. 4.2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from npcomp.forest import Forest
from npcomp.heads import PAIR_HEADS
from npcomp.params import Parameters
from .encoder import DropoutMasks, HeadPass, SentenceEncoder


@dataclass
class PairBatch:
    """A minibatch of m sentence pairs: one forest of 2m trees, the left
    sentences first (trees 0..m-1, then their partners m..2m-1), and the gold
    relatedness scores (m,) or class numbers ``labels`` (m,) (None when
    predicting, or not the head's)."""

    forest: Forest
    scores: np.ndarray | None = None
    labels: np.ndarray | None = None

    @property
    def n_pairs(self) -> int:
        return self.forest.n_trees // 2


class PairModel(SentenceEncoder):
    """Embedding table + one cell encoding both sentences of each pair + a
    pair head on the two roots' states (``heads.PAIR_HEADS``): the
    similarity head of Tai et al. eq. 15 (``head="similarity"``), or the
    pair classifier over its features (``"pair_softmax"``).

    Objective (Tai Sec. 4.2), per minibatch of m pairs:

        J = (1/m) sum_k KL(p^(k) || p_hat^(k)) + (lambda/2) ||theta||^2

    (the classifier's KL is to the one-hot class: the cross-entropy.)

    Both sentences of a pair go through the same cell in one forest, so the
    gradients dJ/dh_L and dJ/dh_R reach the cell's weights through one
    backward pass.  Dropout on the word vectors and recurrences as for the
    classifier; the head itself takes none (Tai: no gain from dropout here).
    """

    def __init__(
        self,
        cell,
        vocab_size: int,
        embedding_dim: int,
        hidden_dim: int = 50,
        n_classes: int = 5,
        head: str = "similarity",
    ):
        super().__init__(cell, vocab_size, embedding_dim)
        if head not in PAIR_HEADS:
            raise ValueError(f"head must be one of {sorted(PAIR_HEADS)}, not {head!r}")
        self.head_name = self.prefix = head
        self.head = PAIR_HEADS[head](cell.output_dim, hidden_dim, n_classes)
        self.n_classes = n_classes
        self._build_layout([(f"{self.prefix}.{name}", shape) for name, shape in self.head.parameter_shapes()])

    def new_parameters(
        self, rng: np.random.Generator, embedding: np.ndarray | None = None, dtype=np.float32
    ) -> Parameters:
        return self._new_parameters([(self.head, self.prefix)], rng, embedding, dtype)

    def dropout_masks(
        self,
        forest: Forest,
        rate: float,
        rng: np.random.Generator,
        dtype,
        embedding_rate: float = 0.0,
        recurrent_rate=0.0,
    ) -> DropoutMasks:
        """Word-vector and recurrent masks, one per sentence; ``rate`` (the
        classifier input's) must be 0: the pair heads have no dropout."""
        if rate > 0.0:
            raise ValueError(
                "the similarity head takes no dropout on its input (dropout 0); use embedding or recurrent dropout"
            )
        embedding, recurrent = self._sequence_masks(forest, rng, dtype, embedding_rate, recurrent_rate)
        return DropoutMasks([], embedding, recurrent)

    @staticmethod
    def _sides(batch: PairBatch) -> tuple:
        roots = batch.forest.root
        return roots[: batch.n_pairs], roots[batch.n_pairs :]

    @staticmethod
    def _forest_of(batch: PairBatch) -> Forest:
        return batch.forest

    def units(self, batch: PairBatch, average: str) -> int:
        """What Z counts in ``batch``: its pairs (``average`` is unused)."""
        return batch.n_pairs

    def _objective(
        self, params: Parameters, batch: PairBatch, h: np.ndarray, encoding: dict, masks: DropoutMasks, normaliser: int
    ) -> tuple:
        """The data term of J, the KL summed over the pairs over Z =
        ``normaliser`` (the pairs m), and what its backward needs (HeadPass)."""
        left, right = self._sides(batch)
        data_loss, cache = self.head.loss(
            params.prefixed(self.prefix), h[left], h[right], batch.labels if self.head.classifies else batch.scores
        )
        return self.cell.head_weight * data_loss / normaliser, HeadPass(cache, normaliser, {})

    def _objective_backward(
        self, params: Parameters, batch: PairBatch, h: np.ndarray, passed: "HeadPass", grads: Parameters
    ) -> tuple:
        """Back through the pair head, adding into ``grads``: (dJ/dh, None)."""
        d_left, d_right = self.head.backward(
            params.prefixed(self.prefix),
            passed.cache,
            self.cell.head_weight / passed.normaliser,
            grads.prefixed(self.prefix),
        )
        left, right = self._sides(batch)
        d_h = np.zeros_like(h)
        d_h[left] = d_left
        d_h[right] = d_right
        return d_h, None

    def outputs(self, params: Parameters, batch: PairBatch) -> np.ndarray:
        """(m, K) predicted distributions over the ratings 1..K (the classes)."""
        h, _ = self._encode(params, batch.forest)
        left, right = self._sides(batch)
        return self.head.outputs(params.prefixed(self.prefix), h[left], h[right])

    def predict(self, params: Parameters, batch: PairBatch) -> np.ndarray:
        """(m,) predicted relatedness y_hat = r^T p_hat (the classes)."""
        return self.head.decode(self.outputs(params, batch))

    def predict_states(self, params: Parameters, h_left: np.ndarray, h_right: np.ndarray) -> np.ndarray:
        """Relatedness (classes) of pairs given their sentence representations."""
        return self.head.predict(params.prefixed(self.prefix), h_left, h_right)
