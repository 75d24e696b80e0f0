"""How long a run would take on this machine, measured rather than guessed:
the run's own setup and kernels, a few of its training steps, and one forest
of its dev sentences, scaled to the whole run (``npcomp reproduce``'s plan).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from npcomp.configuration.defaults import with_defaults
from npcomp.training.encoding import first_examples
from npcomp.training.evaluation import evaluate
from npcomp.training.memory import retain_freed_memory
from npcomp.runfiles.rundir import RunDirectory
from npcomp.training.step import train_step, warm_up
from npcomp.training.thread_pools import pinned_thread_pools
from npcomp.training.trainer import prepare_run


@pinned_thread_pools()
def estimate_seconds(config: dict, minibatches: int = 8) -> float:
    """The seconds a run of ``config`` would take here, measured on a few
    minibatches: its kernels warmed up, ``minibatches`` timed training steps
    of its own minibatch size, and one forest of dev sentences evaluated,
    scaled to its epochs, dev evaluations, training-sentence accuracy and
    test; reading the data is counted once.  Nothing is written."""
    tick = time.perf_counter()
    retain_freed_memory()
    run = prepare_run(with_defaults(config, saved=False), RunDirectory(Path(".")), None, echo=lambda *args: None)
    warm_up(run.model, run.params, run.optimizer, run.splits["train"], run.config)
    setup = time.perf_counter() - tick
    config, batch_size = run.config, run.config["batch_size"]
    train = run.splits["train"]
    order = run.rng.permutation(len(train))
    times, shards = [], None
    for k in range(minibatches):
        following = order[(k + 1) * batch_size : (k + 2) * batch_size] if k + 1 < minibatches else None
        tick = time.perf_counter()
        _, shards = train_step(run, order[k * batch_size : (k + 1) * batch_size], 1, k + 1, shards, following)
        times.append(time.perf_counter() - tick)
    step = float(np.median(times))  # a step slowed by another process counts less
    examples = len(train)
    if config["span_samples"]:
        examples = len(run.task.span_groups.whole) * (1 + config["span_samples"])
    dev = run.splits["dev"]
    sample = min(len(dev), config["eval_batch_size"])
    tick = time.perf_counter()
    evaluate(run.model, run.params, first_examples(dev, sample), config["eval_batch_size"], run.helper)
    per_sentence = (time.perf_counter() - tick) / max(sample, 1)
    evaluated = (
        config["epochs"] * config["evals_per_epoch"] * len(dev)
        + config["epochs"] * len(run.train_sentences) * config["train_eval"]
        + len(run.splits.get("test", ()))
    )
    return setup + config["epochs"] * -(-examples // batch_size) * step + evaluated * per_sentence
