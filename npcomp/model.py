"""A tree classifier: word embeddings -> composition cell -> softmax head.

The objective of one minibatch (a forest of B trees), in one place:

    J = (1/Z) * sum over labelled nodes j of -log p_hat(y_j | {x}_j)
        + (lambda/2) * ||theta||^2

Z is the number of trees in the minibatch (``average="sentences"``: each
sentence's summed node losses, averaged over the sentences actually in the
batch, as in Tai et al.'s code) or the number of labelled nodes
(``average="nodes"``).  theta is every parameter except the embedding table
(Tai et al. regularise the composition and classifier weights, biases
included, once per minibatch).

Parameters live in one flat vector: ``cell.*`` (the cell's own names),
``softmax.W``, ``softmax.b``, then ``embedding`` (V, d_x) last, so the
regularised, densely-updated part is the prefix ``flat[:embedding offset]``.
"""
from __future__ import annotations

import numpy as np

from .forest import Forest
from .heads import SoftmaxClassifier, dropout_mask
from .params import Layout, Parameters

AVERAGES = ("sentences", "nodes")


class TreeModel:
    """Embedding table + cell + softmax classifier at labelled nodes."""

    def __init__(self, cell, n_classes: int, vocab_size: int, embedding_dim: int):
        self.cell = cell
        self.head = SoftmaxClassifier(cell.output_dim, n_classes)
        self.n_classes = n_classes
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        shapes = [("cell." + name, shape) for name, shape in cell.parameter_shapes()]
        shapes += [("softmax." + name, shape) for name, shape in self.head.parameter_shapes()]
        shapes.append(("embedding", (vocab_size, embedding_dim)))
        self.layout = Layout(shapes)
        self.dense_size = self.layout["embedding"].offset

    def new_parameters(self, rng: np.random.Generator, embedding: np.ndarray | None = None,
                       dtype=np.float32) -> Parameters:
        params = Parameters(self.layout, np.float64)
        self.cell.initialise(params.prefixed("cell"), rng)
        self.head.initialise(params.prefixed("softmax"), rng)
        if embedding is not None:
            params["embedding"][...] = embedding
        return params.astype(dtype)

    def loss_and_gradient(self, params: Parameters, forest, grads: Parameters,
                          l2: float = 0.0, dropout: float = 0.0,
                          rng: np.random.Generator | None = None,
                          mask: np.ndarray | None = None, average: str = "sentences",
                          workers: "Workers | None" = None):
        """Objective J of a minibatch; adds dJ/dparams into ``grads``.

        ``forest`` is one Forest or a list of forests that together make the
        minibatch (``workers`` then evaluates them at once, each into its own
        gradient buffer).  ``grads`` must be zero on entry except the embedding
        rows, which must be zero at least on the rows the minibatch reads.
        ``mask`` (m, d), for the m labelled nodes of a single forest in node
        order, fixes the dropout mask (gradient checks); otherwise masks are
        drawn from ``rng`` when ``dropout`` > 0.
        Returns (J, the embedding rows touched: sorted unique word ids).
        """
        parts = [forest] if isinstance(forest, Forest) else list(forest)
        if mask is not None and len(parts) != 1:
            raise ValueError("a fixed dropout mask needs a single forest")
        if average == "sentences":
            normaliser = sum(part.n_trees for part in parts)
        elif average == "nodes":
            normaliser = max(sum(int(np.sum(part.label >= 0)) for part in parts), 1)
        else:
            raise ValueError(f"average must be one of {AVERAGES}, not {average!r}")
        seeds = (rng.integers(0, 2**63, size=len(parts)) if rng is not None and dropout > 0
                 else [None] * len(parts))

        def data_term(k: int, target: Parameters):
            part_rng = np.random.default_rng(seeds[k]) if seeds[k] is not None else None
            return self._data_term(params, parts[k], target, 1.0 / normaliser, dropout,
                                   part_rng, mask)

        if workers is None or len(parts) == 1:
            results = [data_term(k, grads) for k in range(len(parts))]
        else:
            results = workers.run(data_term, len(parts), grads)
        data_loss = sum(loss for loss, _ in results)
        regularised = params.flat[:self.dense_size]
        loss = data_loss / normaliser + 0.5 * l2 * float(regularised @ regularised)
        grads.flat[:self.dense_size] += l2 * regularised
        rows = results[0][1] if len(results) == 1 else np.unique(np.concatenate(
            [part_rows for _, part_rows in results]))
        return loss, rows

    def _data_term(self, params, forest, grads, scale, dropout, rng, mask):
        """Summed NLL of a forest's labelled nodes; adds ``scale`` times its gradient."""
        self.cell.check_forest(forest)
        words, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
        x = params["embedding"][words]
        cell_params = params.prefixed("cell")
        h, cell_cache = self.cell.forward(cell_params, forest, x, word_index)

        labelled = np.flatnonzero(forest.label >= 0)
        labels = forest.label[labelled]
        if mask is None and dropout > 0.0:
            mask = dropout_mask((labelled.shape[0], h.shape[1]), dropout, rng, h.dtype)
        head_params = params.prefixed("softmax")
        data_loss, head_cache = self.head.loss(head_params, h[labelled], labels, mask)

        d_h = np.zeros_like(h)
        d_h[labelled] = self.head.backward(head_params, head_cache, labels, scale,
                                           grads.prefixed("softmax"))
        d_x = self.cell.backward(cell_params, forest, cell_cache, d_h, grads.prefixed("cell"))
        grads["embedding"][words] += d_x  # distinct rows: a plain fancy-index add
        return data_loss, words

    def probabilities(self, params: Parameters, forest: Forest) -> np.ndarray:
        """Class probabilities (n, C) at every node of the forest."""
        self.cell.check_forest(forest)
        words, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
        h, _ = self.cell.forward(params.prefixed("cell"), forest, params["embedding"][words],
                                 word_index)
        return self.head.probabilities(params.prefixed("softmax"), h)


class Workers:
    """Threads that evaluate the parts of a minibatch at once.

    Each part after the first writes into a gradient buffer of its own, which
    is then added into the caller's buffer (dense prefix whole, embedding
    table on the part's rows only) and zeroed again.  The numba kernels and
    BLAS release the GIL, so with single-threaded BLAS the threads use
    separate cores.
    """

    def __init__(self, n_threads: int, params: Parameters):
        from concurrent.futures import ThreadPoolExecutor
        self.n_threads = n_threads
        self.pool = ThreadPoolExecutor(max_workers=n_threads)
        self.buffers = [params.zeros_like() for _ in range(n_threads - 1)]
        self.dense_size = params.layout["embedding"].offset

    def run(self, data_term, n_parts: int, grads: Parameters) -> list:
        if n_parts > self.n_threads:
            raise ValueError(f"{n_parts} parts for {self.n_threads} threads")
        targets = [grads] + self.buffers[:n_parts - 1]
        futures = [self.pool.submit(data_term, k, targets[k]) for k in range(n_parts)]
        results = [future.result() for future in futures]
        for (_, rows), buffer in zip(results[1:], targets[1:]):
            grads.flat[:self.dense_size] += buffer.flat[:self.dense_size]
            buffer.flat[:self.dense_size] = 0.0
            grads["embedding"][rows] += buffer["embedding"][rows]
            buffer["embedding"][rows] = 0.0
        return results

    def close(self) -> None:
        self.pool.shutdown()


def split_minibatch(indices: np.ndarray, sizes: np.ndarray, n_parts: int) -> list:
    """Split tree ``indices`` into up to ``n_parts`` groups of similar node counts
    (largest trees first, each to the currently smallest group)."""
    n_parts = max(1, min(n_parts, len(indices)))
    groups: list = [[] for _ in range(n_parts)]
    loads = np.zeros(n_parts)
    for index in sorted(indices, key=lambda i: -sizes[i]):
        smallest = int(np.argmin(loads))
        groups[smallest].append(index)
        loads[smallest] += sizes[index]
    return [np.array(group) for group in groups]
