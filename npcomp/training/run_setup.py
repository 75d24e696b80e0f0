"""A training run made ready: its data read and checked against the model,
the vocabulary, the model, its initial parameters and optimiser, and the
metrics record it starts from (``prepare_run``), held together as a
``Run`` that the trainer's steps share (``trainer.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from npcomp.configuration.defaults import dim_follows_embedding
from npcomp.configuration.model_building import DTYPES, build_model, initial_parameters
from npcomp.data.datasets.tasks import SPLITS, given_task, task_trees
from npcomp.data.readers.embeddings import Vocabulary
from npcomp.data.readers.vectors import read_vectors
from npcomp.forest import supervised_labels
from npcomp.params import Parameters
from npcomp.runfiles.checkpoints import check_same_data, config_digest, data_fingerprints
from npcomp.runfiles.machine import machine_description
from npcomp.runfiles.rundir import RunDirectory
from .encoding import EncodedSplit, check_splits, encode, encode_task
from .evaluation import selection_metric
from .optimizers import make_optimizer
from .run_data import run_task
from .shards import ShardedGradient


@dataclass
class Run:
    """A training run under way: what its steps share."""

    config: dict
    directory: RunDirectory
    task: object
    vocab: Vocabulary
    splits: dict
    train_sentences: object
    model: object
    params: Parameters
    grads: Parameters
    optimizer: object
    rng: np.random.Generator
    metrics: dict
    fingerprints: dict
    helper: object = None
    sharded: ShardedGradient | None = None
    echo: object = print
    recent_losses: list = field(default_factory=list)
    callbacks: tuple = ()
    stopped: bool = False  # a callback asked to stop

    @property
    def selected(self) -> str:
        return selection_metric(self.config["task"])


def prepare_run(config: dict, directory: RunDirectory, saved: dict | None, echo, data=None) -> Run:
    """Read the data (``data`` when given) and the vectors of a fresh run,
    check every split against the model, and build the model, parameters and
    optimiser."""
    vectors = None
    if saved is None and config.get("vectors"):
        vectors = read_vectors(config["vectors"])
        config["embedding_dim"] = vectors.dim
    if dim_follows_embedding(config):
        config["dim"] = config["embedding_dim"]
    # tasks given in memory, a built-in task, or the user's files (run_data.py)
    task = given_task(data, config["task"]) if data is not None else run_task(config, echo)
    fingerprints = data_fingerprints(task)
    fingerprints["config"] = config_digest(config)
    if saved is not None:
        check_same_data(saved, fingerprints, config, directory)
        vocab = Vocabulary.from_list(list(saved["vocab"]))
    else:
        vocab = Vocabulary.from_trees(t for split in SPLITS if split in task.splits for t in task_trees(task, split))
    model = build_model(config, vocab, task.n_classes)
    check_splits(task, model.cell)
    splits = encode_task(task, vocab)  # a user's pair scores as the head's ratings
    # per-epoch training accuracy (Nayebi's curves) on the training sentences
    train_sentences = encode(task.train_sentences, vocab) if task.train_sentences is not None else splits["train"]
    if isinstance(splits["train"], EncodedSplit):
        splits["train"].labels = [supervised_labels(tree, config["supervision"]) for tree in splits["train"].trees]
    rng = np.random.default_rng(config["seed"])
    report = {}
    params = initial_parameters(config, model, vocab, vectors, rng, report)
    dtype = DTYPES[config["dtype"]]
    optimizer = make_optimizer(
        config["optimizer"],
        size=model.layout.size,
        dense_size=model.dense_size,
        embedding_offset=model.layout["embedding"].offset,
        embedding_dim=config["embedding_dim"],
        lr=config["lr"],
        embedding_lr=config["emb_lr"],
        dtype=dtype,
        embedding_rule=config["emb_optimizer"],
        epsilon=config.get("epsilon"),
    )
    metrics = {
        "model": config["model"],
        "task": config["task"],
        "config": config,
        "epochs": [],
        "best_epoch": None,
        "best_at": None,
        "dev": None,
        "test": None,
        "train_wall_s": 0.0,
        "train_sentences_per_s": None,
        "parameters": int(model.dense_size),
        "vocabulary": len(vocab),
        "embedding": report.get("embedding"),
        "machine": machine_description(),
    }
    if task.record is not None:  # what the run read of the user's files
        metrics["data"] = task.record
    return Run(
        config=config,
        directory=directory,
        task=task,
        vocab=vocab,
        splits=splits,
        train_sentences=train_sentences,
        model=model,
        params=params,
        grads=params.zeros_like(),
        optimizer=optimizer,
        rng=rng,
        metrics=metrics,
        fingerprints=fingerprints,
        echo=echo,
    )
