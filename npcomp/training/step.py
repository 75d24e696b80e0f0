"""One training step of a run (``train_step``): its minibatch in shards,
the loss and gradient, the checks that stop a run going wrong (a
non-finite loss, gradient or optimiser state; a diverging loss), and the
update; and the warm-up that compiles a run's kernels before its first
timed step (``warm_up``).  ``run`` is the trainer's ``Run``.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from npcomp.data.datasets import PAIR_TASKS
from npcomp.forest import Forest
from .encoding import EncodedPairs
from .shard_processes import HelperStopped
from .shards import ShardedGradient


class TrainingStopped(Exception):
    """Training stopped on a non-finite or diverging quantity; the run
    directory keeps the last good checkpoint and the best model so far."""


class HelperLost(TrainingStopped):
    """A helper process computing shards died during a step (killed, out of
    memory): the step failed and was not taken; the run directory keeps the
    checkpoint of its latest dev evaluation, from which it resumes."""


# the mean loss per labelled node (per pair) of the latest DIVERGENCE_WINDOW
# minibatches above DIVERGENCE_FACTOR times that of the run's first minibatch
# (the model as initialised) stops training as diverged
DIVERGENCE_FACTOR = 10.0
DIVERGENCE_WINDOW = 10


def train_step(run, indices, epoch: int, minibatch: int, shards=None, following=None) -> tuple:
    """One minibatch, in the run's shards (shards.py): loss and gradient,
    checked, then the update.  ``shards``: this minibatch's, when the step
    before cut them; ``following``: the indices of the next minibatch, or
    None.  Returns (the loss, the shards of ``following`` or None).

    The next minibatch is cut while the helpers finish this one's shards
    (``ShardedGradient.loss_and_gradient``'s ``meanwhile``), its dropout
    masks drawn from the run's generator after this one's, as they would be
    in a step of their own: the same numbers either way."""
    config = run.config
    if run.sharded is None:  # a run not started by ``train`` (estimate.py): threads only
        run.sharded = ShardedGradient(run.model, run.grads, config["shards"], run.helper)
    regularisation = _regularisation(config)
    l2 = regularisation.pop("l2")
    if shards is None:
        shards = run.sharded.shards_of(run.params, run.splits["train"], indices, run.rng, **regularisation)
    ahead = []

    def cut_the_next() -> None:
        ahead.append(run.sharded.shards_of(run.params, run.splits["train"], following, run.rng, **regularisation))

    # numbers out of range are checked below and stop the run with a message:
    # NumPy's overflow warnings would only print before it.  The buffer is
    # zero where it matters: the optimiser zeroes what each step consumed
    where = f"epoch {epoch}, minibatch {minibatch}"
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            loss, rows = run.sharded.loss_and_gradient(
                run.params, shards, config["average"], l2, meanwhile=None if following is None else cut_the_next
            )
    except HelperStopped as error:
        # the sum may hold half an addition: the step is not taken
        stop_run(run, f"{error} at {where}", HelperLost)
    if not math.isfinite(loss):
        stop_run(run, f"the loss became {loss} at {where}")
    if not _finite(run, run.grads.flat, rows):
        stop_run(run, f"a gradient became non-finite at {where}")
    _check_divergence(run, loss, [shard.batch for shard in shards], where)
    fixed = config["fixed_embeddings"]
    with np.errstate(over="ignore", invalid="ignore"):
        run.optimizer.step(run.params.flat, run.grads.flat, None if fixed else rows)
    if fixed:
        run.grads["embedding"][rows] = 0.0
    if not all(_finite(run, state, rows) for state in run.optimizer.state.values()):
        stop_run(
            run,
            f"the optimiser's state became non-finite at {where} (gradients too large "
            "to square: word vectors or a learning rate far out of scale)",
        )
    return loss, (ahead[0] if ahead else None)


def _finite(run, flat: np.ndarray, rows) -> bool:
    """Whether ``flat`` (laid out as the parameters) is finite on its dense
    part and on the embedding ``rows`` a minibatch touched."""
    embedding = run.model.layout["embedding"]
    dim = run.config["embedding_dim"]
    if not np.isfinite(flat[: run.model.dense_size]).all():
        return False
    table = flat[embedding.offset : embedding.offset + embedding.size].reshape(-1, dim)
    return bool(np.isfinite(table[rows]).all())


def _check_divergence(run, loss: float, batches: list, where: str) -> None:
    """Stop when the recent loss per labelled node (per pair) of a
    minibatch (its shards' ``batches``) exceeds DIVERGENCE_FACTOR times that
    of the model as initialised."""
    per_unit = loss
    if isinstance(batches[0], Forest) and run.config["average"] == "sentences":
        labelled = sum(int(np.count_nonzero(batch.label >= 0)) for batch in batches)
        per_unit = loss * sum(batch.n_trees for batch in batches) / max(labelled, 1)
    if run.metrics.get("initial_loss") is None:
        run.metrics["initial_loss"] = per_unit
    run.recent_losses = (run.recent_losses + [per_unit])[-DIVERGENCE_WINDOW:]
    recent = float(np.mean(run.recent_losses))
    if len(run.recent_losses) == DIVERGENCE_WINDOW and recent > DIVERGENCE_FACTOR * run.metrics["initial_loss"]:
        stop_run(
            run,
            f"training diverged at {where}: the loss of the latest "
            f"{DIVERGENCE_WINDOW} minibatches, {recent:.4g} per labelled "
            f"{'pair' if run.task.name in PAIR_TASKS else 'node'}, is over "
            f"{DIVERGENCE_FACTOR:g} times the {run.metrics['initial_loss']:.4g} of the "
            "model as initialised",
        )


def stop_run(run, reason: str, kind: type = TrainingStopped) -> None:
    """Record why training stopped and raise ``kind`` (TrainingStopped, or
    HelperLost); the run's files keep their last good state (nothing
    non-finite is ever written)."""
    done = len(run.metrics["epochs"])
    saved = run.directory.holds("checkpoint.npz")
    kept = (
        "its best model (model.npz) and last checkpoint are those of its latest dev "
        f"evaluation (after epoch {done} or inside epoch {done + 1})"
        if saved
        else "no dev evaluation came before, so it holds no model (start it again with overwrite)"
    )
    run.directory.append_log({"event": "stopped", "reason": reason})
    if kind is HelperLost:
        advice = (
            f"Resume it from there (npcomp train --resume {run.directory.path}; resume=True in Python)"
            if saved
            else "Start it again"
        )
    else:
        advice = "A lower learning rate (lr, emb_lr) or stronger regularisation usually helps"
    raise kind(f"{reason}. {run.directory.path}: {kept}. {advice}")


def _regularisation(config) -> dict:
    """The training step's weight decay and dropout rates, as keyword arguments
    of ``loss_and_gradient`` (the warm-up must take the same code paths)."""
    return {
        "l2": config["l2"],
        "dropout": config["dropout"],
        "embedding_dropout": config["embedding_dropout"],
        "recurrent_dropout": config["recurrent_dropout"],
    }


def warm_up(model, params, optimizer, split, config):
    """Compile (or load from cache) every kernel, untimed, on the split's two
    largest examples: a minibatch of one-word spans, which has no inner node,
    would leave the inner nodes' kernels to compile inside the first timed
    step.  It draws dropout masks at the run's rates (their code paths differ)
    from a generator of its own, and updates copies, so the run's random
    stream, parameters and optimiser state stay as they were."""
    trees = split.left if isinstance(split, EncodedPairs) else split
    sizes = np.fromiter((len(words) for words in trees.words), dtype=np.int64, count=len(trees))
    batch = split.batch(np.argsort(sizes, kind="stable")[-2:])
    grads = params.zeros_like()
    _, rows = model.loss_and_gradient(
        params, batch, grads, rng=np.random.default_rng(0), accumulate=True, **_regularisation(config)
    )
    copy.deepcopy(optimizer).step(params.flat.copy(), grads.flat, None if config["fixed_embeddings"] else rows)
    model.outputs(params, batch)
