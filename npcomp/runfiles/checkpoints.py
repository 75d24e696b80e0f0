"""A run's checkpoint, ``checkpoint.npz``: everything ``--resume`` needs.

Written after every dev evaluation: the parameters (flat), the optimiser's
state, the random generator's state, the metrics record, the configuration
and the vocabulary, with the epoch's minibatch order and progress when the
evaluation fell inside an epoch, and the fingerprints (SHA-256 digests) of
the configuration and of every split's data.  A resumed run keeps the
checkpoint's configuration but for the resumable options, and refuses data
other than the run's.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from npcomp.data.readers.embeddings import Vocabulary
from npcomp.errors import ConfigError
from npcomp.data.readers.sick import SickPair
from npcomp.data.datasets.tasks import SPLITS
from npcomp.params import Parameters
from npcomp.configuration.defaults import applies
from npcomp.configuration.options import RESUMABLE
from npcomp.runfiles.run_paths import FILES_FROM, found_files, stored_files
from npcomp.runfiles.rundir import RunDirectory, RunFileError

CHECKPOINT_KEYS = ("params", "config", "rng", "metrics", "vocab", "fingerprints")


def fingerprint(items) -> str:
    """A digest of a split's trees (or pairs): words, structure, labels, scores."""
    digest = hashlib.sha256()
    for item in items:
        trees = (item.tree_a, item.tree_b) if isinstance(item, SickPair) else (item,)
        for tree in trees:
            digest.update("\x1f".join(tree.tokens).encode("utf-8", "surrogatepass"))
            for array in (tree.parent, tree.token_index, tree.label):
                digest.update(np.ascontiguousarray(array, dtype=np.int32).tobytes())
        if isinstance(item, SickPair):
            digest.update(np.float64(item.score).tobytes())
            if item.label >= 0:  # a pair's class (none: the digest of before classes)
                digest.update(np.int64(item.label).tobytes())
    return digest.hexdigest()


def data_fingerprints(task) -> dict:
    """The fingerprint of each split ``task`` has and, for a user's files,
    the SHA-256 of each file's bytes by its role (train, dev, test)."""
    prints = {split: fingerprint(items) for split, items in task.splits.items()}
    if task.record is not None:
        prints["files"] = {role: file["sha256"] for role, file in task.record["files"].items()}
    return prints


def config_digest(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()


def write_checkpoint(
    directory: RunDirectory,
    params: Parameters,
    optimizer_state: dict,
    rng: np.random.Generator,
    config: dict,
    metrics: dict,
    vocab: Vocabulary,
    fingerprints: dict,
    epoch_order: np.ndarray | None = None,
    epoch_progress: dict | None = None,
) -> None:
    """``checkpoint.npz``; ``epoch_order`` and ``epoch_progress`` when the
    run is inside an epoch (``epoch_in_progress`` reads them back)."""
    inside = (
        {} if epoch_order is None else {"epoch_order": epoch_order, "epoch_state": np.array(json.dumps(epoch_progress))}
    )
    if directory.on_disk:  # a user's files, found again from any working directory
        config = stored_files(config, directory.path)
        metrics = dict(metrics, config=config)
        fingerprints = dict(fingerprints, config=config_digest(config))
        inside[FILES_FROM] = np.array("run_dir")
    directory.save_npz(
        "checkpoint.npz",
        params=params.flat,
        config=np.array(json.dumps(config)),
        rng=np.array(json.dumps(rng.bit_generator.state)),
        metrics=np.array(json.dumps(metrics)),
        vocab=np.array(vocab.to_list()),
        fingerprints=np.array(json.dumps(fingerprints)),
        **optimizer_state,
        **inside,
    )


def read_checkpoint(directory: RunDirectory) -> dict:
    """The checkpoint's arrays, its config and metrics decoded; RunFileError
    when it is missing or damaged."""
    if not directory.holds("checkpoint.npz"):
        raise RunFileError(
            f"{directory.checkpoint_path}: nothing to resume (a run writes its checkpoint at its first dev evaluation)"
        )
    saved = directory.load_npz("checkpoint.npz", required=CHECKPOINT_KEYS)
    try:
        saved["config"] = json.loads(str(saved["config"]))
        saved["metrics"] = json.loads(str(saved["metrics"]))
        saved["rng"] = json.loads(str(saved["rng"]))
        saved["fingerprints"] = json.loads(str(saved["fingerprints"]))
    except json.JSONDecodeError as error:
        raise RunFileError(f"{directory.checkpoint_path}: damaged run file ({error})") from None
    if saved["fingerprints"].get("config") != config_digest(saved["config"]):
        raise RunFileError(
            f"{directory.checkpoint_path}: damaged run file (its configuration "
            "does not match the digest recorded with it)"
        )
    if FILES_FROM in saved:
        saved["config"] = found_files(saved["config"], directory.path)
        if isinstance(saved["metrics"].get("config"), dict):
            saved["metrics"]["config"] = saved["config"]
    return saved


def epoch_in_progress(saved: dict) -> tuple | None:
    """(order, progress) of the epoch a checkpoint (``read_checkpoint``) was
    written inside; None when it was written at an epoch's end."""
    if "epoch_order" not in saved:
        return None
    return saved["epoch_order"], json.loads(str(saved["epoch_state"]))


def resumed_config(saved: dict, changes: dict) -> dict:
    """The checkpoint's config with ``changes`` applied: the resumable options
    (``options.RESUMABLE``: more epochs, another data directory or thread
    count); any other key must keep its saved value."""
    config = dict(saved)
    # a user's files are resumable on a run trained on files alone
    refused = {
        key: value
        for key, value in changes.items()
        if (key not in RESUMABLE or not applies(key, saved.get("task"))) and saved.get(key) != value
    }
    if refused:
        listed = ", ".join(f"{key} {value!r} (the run has {saved.get(key)!r})" for key, value in refused.items())
        raise ConfigError(
            next(iter(refused)),
            f"a resumed run continues with its own "
            f"settings; it cannot take {listed}. Only {', '.join(RESUMABLE)} "
            "may change; start a new run for other settings",
        )
    config.update({key: value for key, value in changes.items() if key in RESUMABLE})
    return config


def check_same_data(saved: dict, fingerprints: dict, config: dict, directory: RunDirectory) -> None:
    """Refuse to resume on data other than the run's: a user's file whose
    bytes differ (named by its option), or a split whose trees do."""
    saved_files = saved["fingerprints"].get("files") or {}
    files = fingerprints.get("files") or {}
    for role in dict.fromkeys([*saved_files, *files]):
        if saved_files.get(role) != files.get(role):
            what = (
                f"{config.get(role)}: not the bytes of the {role} file"
                if files.get(role) and saved_files.get(role)
                else f"a {role} file where there was none"
                if files.get(role)
                else f"no {role} file, where there was one"
            )
            raise ConfigError(
                role,
                f"{what} {directory.path} was trained on (their SHA-256 "
                "differ): resuming would bind its parameters to other "
                "sentences; give the run's own file, or start a new run",
            )
    changed = [split for split in SPLITS if saved["fingerprints"].get(split) != fingerprints.get(split)]
    if changed:
        raise ConfigError(
            "data_dir",
            f"the {' and '.join(changed)} data of {config['task']} "
            f"differ from those {directory.path} was trained on (files edited, "
            "or another data directory): resuming would bind its parameters "
            "to other sentences; start a new run instead",
        )
