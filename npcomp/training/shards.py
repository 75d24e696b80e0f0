"""A minibatch in shards: its examples split into a fixed number of shards,
each shard's forward and backward on a thread or a helper process of its own
(shard_processes.py), and their losses and gradients summed in a fixed order
before the one optimiser step.

How a minibatch is split depends on the run's configuration (``shards``)
and on the minibatch alone, never on the thread count, and the shards' sums
are taken in shard order whichever thread computed them: a run gives the
same numbers, bit for bit, on one thread or on several.  For shard k:

    J_k = (1/Z) sum over its labelled nodes (pairs) of their loss
          [+ (lambda/2) ||theta||^2 on shard 0 alone]
    g_k = dJ_k / dparams, into a gradient buffer of the shard's own

    J = ((J_0 + J_1) + J_2) + ...        g = ((g_0 + g_1) + g_2) + ...

Z is the whole minibatch's (its sentences, labelled nodes or pairs: the
model's ``units`` summed over the shards), so J and g are the minibatch's
objective and gradient up to the order of floating-point sums (models/).
The word-vector rows of g are the union of the shards' rows, sorted; each
row is summed in shard order.

A shard is a run of consecutive examples of the minibatch, cut where the
running node count comes nearest to an equal share of the minibatch's
nodes; a minibatch of fewer examples than ``shards`` has a shard per
example.  Dropout masks are drawn on the calling thread, shard after shard,
from the run's generator, before any shard runs.  The trainer cuts the next
minibatch while the helpers finish this one's shards (``loss_and_gradient``'s
``meanwhile``): its masks are still drawn after this minibatch's.

NumPy's matrix products and the cells' numba kernels (``nogil``) release
the GIL, so shards on threads compute at once, but the Python of each
level's calls runs on one thread at a time and the GIL changes hands at
every call: helper processes (``start_shards``) have no GIL between them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from npcomp.models import DropoutMasks
from .finite_outputs import naming_the_sentence
from npcomp.params import Parameters
from npcomp.training.shard_processes import ShardProcesses, add_and_zero, can_fork, share


def shard_bounds(sizes, shards: int) -> list:
    """[(start, stop)] of each shard of a minibatch whose examples have
    ``sizes`` nodes (in the minibatch's order): consecutive runs, each cut
    where the running node count is nearest to k/shards of the total, each
    at least one example; min(shards, examples) of them."""
    sizes = np.asarray(sizes, dtype=np.int64)
    count = max(min(shards, sizes.shape[0]), 1)
    # the running node count before each example, times ``count``: the k-th
    # cut's target is then k times the total, a whole number (no rounding)
    scaled = np.concatenate([[0], np.cumsum(sizes)]) * count
    total = int(scaled[-1]) // count
    cuts = [0]
    for k in range(1, count):
        target = k * total
        after = int(np.searchsorted(scaled, target))  # the first cut at or past it
        nearest = after
        if after > 0 and target - scaled[after - 1] < scaled[after] - target:
            nearest = after - 1
        # each shard before and after this cut keeps an example at least
        cuts.append(min(max(nearest, cuts[-1] + 1), sizes.shape[0] - (count - k)))
    cuts.append(sizes.shape[0])
    return list(zip(cuts[:-1], cuts[1:]))


@dataclass
class Shard:
    """One shard of a minibatch: its examples (indices into the split, in the
    minibatch's order), their batch (a forest, or a PairBatch), its trees in
    the forest's order (to name a sentence whose state overflows) and its
    dropout masks."""

    indices: np.ndarray
    batch: object
    trees: list
    masks: DropoutMasks


class ShardedGradient:
    """The loss and gradient of minibatches computed in ``shards`` shards.

    ``grads`` (the caller's, laid out as the parameters; ``self.grads``
    once ``use_processes`` has moved it into shared memory) takes shard 0's
    gradient and then the sum; the other shards have buffers of their own.
    Every buffer is kept zero between steps as ``loss_and_gradient``'s
    ``accumulate`` expects: the caller's by its optimiser, which zeroes what
    a step consumed, the others here once summed.  ``helpers`` (an executor)
    runs shards 1.. while the calling thread runs shard 0, and then any shard
    no helper has started; None: every shard on the calling thread."""

    def __init__(self, model, grads: Parameters, shards: int, helpers=None):
        if shards < 1:
            raise ValueError(f"shards must be at least 1, not {shards}")
        self.model = model
        self.buffers = [grads] + [grads.zeros_like() for _ in range(shards - 1)]
        self.helpers = helpers
        self.processes = None

    @property
    def grads(self) -> Parameters:
        """The buffer the minibatch's gradient is summed into: the caller's
        ``grads``, or its copy in shared memory after ``use_processes``."""
        return self.buffers[0]

    def use_processes(self, params: Parameters, count: int, private: tuple = ()) -> None:
        """Compute shards 1.. on ``count`` helper processes from now on
        (shard_processes.py), at ``params``, which must be in memory the
        helpers share (``shard_processes.share``; shards at other parameters
        still run on threads); the helpers close the file descriptors
        ``private``.  The gradient buffers move into shared memory too, the
        caller's included: read the sum from ``self.grads`` from now on.
        Call ``close`` when done."""
        self.buffers = [share(buffer) for buffer in self.buffers]
        self.processes = ShardProcesses(self.model, params, self.buffers, min(count, len(self.buffers) - 1), private)

    def close(self) -> None:
        """Stop the helper processes, if any."""
        if self.processes is not None:
            self.processes.close()
            self.processes = None

    def shards_of(
        self,
        params: Parameters,
        split,
        indices,
        rng=None,
        dropout: float = 0.0,
        embedding_dropout: float = 0.0,
        recurrent_dropout=0.0,
    ) -> list:
        """The shards (Shard) of the minibatch ``indices`` of ``split`` (an
        encoded split: ``batch``, ``forest_trees``, ``node_counts``), their
        dropout masks drawn from ``rng`` in shard order."""
        indices = np.asarray(indices)
        shards = []
        for start, stop in shard_bounds(split.node_counts(indices), len(self.buffers)):
            part = indices[start:stop]
            batch = split.batch(part)
            masks = self.model.draw_masks(params, batch, rng, dropout, embedding_dropout, recurrent_dropout)
            shards.append(Shard(part, batch, split.forest_trees(part), masks))
        return shards

    def loss_and_gradient(
        self, params: Parameters, shards: list, average: str = "sentences", l2: float = 0.0, meanwhile=None
    ) -> tuple:
        """(J, rows) of the minibatch made of ``shards`` (``shards_of``): J its
        objective (module docstring), its gradient added into ``grads``, rows
        (r,) the sorted embedding rows it read (what the sparse step updates).
        The calling thread's NumPy error handling (``np.errstate``) holds on
        every shard's thread.

        ``meanwhile``: a function of no arguments called once on the calling
        thread, after its own shards and before it waits for the helpers'
        (after every shard when there are no helpers): work of the caller's
        that the helpers' last shards can hide, such as cutting the next
        minibatch (``shards_of``)."""
        if len(shards) > len(self.buffers):
            raise ValueError(f"{len(shards)} shards for {len(self.buffers)} gradient buffers")
        normaliser = max(sum(self.model.units(shard.batch, average) for shard in shards), 1)
        errors = np.geterr()

        def shard_pass(k: int) -> tuple:
            shard = shards[k]
            with naming_the_sentence(shard.trees), np.errstate(**errors):
                return self.model.loss_and_gradient(
                    params,
                    shard.batch,
                    self.buffers[k],
                    masks=shard.masks,
                    average=average,
                    l2=l2 if k == 0 else 0.0,
                    accumulate=True,
                    normaliser=normaliser,
                )

        summed = 1  # shards whose gradients are in the sum
        if self.processes is not None and params.flat is self.processes.params.flat:
            results = self.processes.compute(shards, shard_pass, average, normaliser, errors, meanwhile)
            summed += self.processes.helped(len(shards))
        else:
            results = self._each_shard(shard_pass, len(shards), meanwhile)
        loss = 0.0
        for shard_loss, _ in results:
            loss += shard_loss
        return loss, self._sum_gradients([rows for _, rows in results], summed)

    def _each_shard(self, shard_pass, count: int, meanwhile=None) -> list:
        """[shard_pass(k) for k < count], shards 1.. on the helpers when there
        are some, ``meanwhile()`` after shard 0 (after every shard without
        helpers); nothing is still running when this returns or raises."""
        if self.helpers is None or count == 1:
            results = [shard_pass(k) for k in range(count)]
            if meanwhile is not None:
                meanwhile()
            return results
        futures = [self.helpers.submit(shard_pass, k) for k in range(1, count)]
        try:
            results = [shard_pass(0)]
            if meanwhile is not None:
                meanwhile()
            for k, future in enumerate(futures, start=1):
                # a shard no helper has started yet runs here
                results.append(shard_pass(k) if future.cancel() else future.result())
        finally:
            for future in futures:
                future.cancel()
            wait(futures)
        return results

    def _sum_gradients(self, shard_rows: list, summed: int = 1) -> np.ndarray:
        """Adds shards ``summed``.. into shard 0's buffer (the caller's) in
        shard order, zeroing theirs (the shards before ``summed`` are in it
        already); the union of every shard's embedding rows, sorted."""
        for k in range(summed, len(shard_rows)):
            add_and_zero(self.buffers[0], self.buffers[k], shard_rows[k], self.model.dense_size)
        if len(shard_rows) == 1:
            return shard_rows[0]
        return np.unique(np.concatenate(shard_rows))


def start_shards(model, params: Parameters, grads: Parameters, shards: int, threads: int, private: tuple = ()) -> tuple:
    """(sharded, params, helpers) of a run computing ``shards`` shards on
    ``threads`` threads: at threads > 1, helper processes take shards 1..
    of each minibatch where this process can fork them
    (shard_processes.py; ``params`` is then their copy in memory the helpers
    share, which the run uses from now on, and the gradient is summed into
    ``sharded.grads``, a shared copy of ``grads``), helper threads otherwise; the
    helper threads (``helpers``, an executor, None at one thread) also
    evaluate every other forest.  BLAS itself runs one thread (cli/__init__.py).  The helper
    processes close the file descriptors ``private`` (a run directory's
    lock: ``RunDirectory.held_descriptors``).  ``sharded.close()``
    stops the processes, ``helpers.shutdown()`` the threads."""
    sharded = ShardedGradient(model, grads, shards)
    if threads > 1 and shards > 1 and can_fork():
        # forked before any helper thread starts: a fork copies only its own thread
        params = share(params)
        sharded.use_processes(params, threads - 1, private)
    helpers = None
    if threads > 1:
        helpers = ThreadPoolExecutor(max_workers=threads - 1)
        sharded.helpers = helpers
    return sharded, params, helpers
