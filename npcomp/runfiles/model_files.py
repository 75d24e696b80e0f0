"""A run's best-dev model, ``model.npz``: the parameters by name
(``param.NAME``), the configuration (JSON), the vocabulary and the number of
classes; written at every better dev evaluation, read back whole or refused
as damaged (``RunFileError``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from npcomp.data.readers.embeddings import Vocabulary
from npcomp.params import Parameters
from npcomp.configuration.defaults import with_defaults
from npcomp.configuration.model_building import DTYPES, build_model
from npcomp.runfiles.run_paths import FILES_FROM, found_files, stored_files
from npcomp.runfiles.rundir import RunDirectory, RunFileError


def save_model(directory: RunDirectory, params: Parameters, config: dict, vocab: Vocabulary, n_classes: int) -> None:
    arrays = {f"param.{name}": value for name, value in params.items()}
    if directory.on_disk:  # a user's files, found again from any working directory
        config = stored_files(config, directory.path)
        arrays[FILES_FROM] = np.array("run_dir")
    directory.save_npz(
        "model.npz",
        config=np.array(json.dumps(config)),
        vocab=np.array(vocab.to_list()),
        n_classes=np.array(n_classes),
        **arrays,
    )


def load_model(run_dir: str | Path | RunDirectory):
    """(model, params, config, vocab) of a run's best-dev checkpoint (the
    run's directory, or a ``RunDirectory`` such as a run kept in memory)."""
    directory = run_dir if isinstance(run_dir, RunDirectory) else RunDirectory(run_dir)
    if not directory.holds("model.npz"):
        raise RunFileError(
            f"{directory.model_path}: no model in this run directory (training writes it at the first dev evaluation)"
        )
    archive = directory.load_npz("model.npz", required=("config", "vocab", "n_classes"))
    try:
        config = with_defaults(json.loads(str(archive["config"])))
        if FILES_FROM in archive:
            config = found_files(config, directory.path)
        vocab = Vocabulary.from_list(list(archive["vocab"]))
        n_classes = int(archive["n_classes"])
        model = build_model(config, vocab, n_classes)
        params = Parameters(model.layout, DTYPES[config["dtype"]])
        for name, view in params.items():
            view[...] = archive[f"param.{name}"]
    except (KeyError, ValueError, TypeError, json.JSONDecodeError) as error:
        raise RunFileError(f"{directory.model_path}: damaged run file ({type(error).__name__}: {error})") from None
    return model, params, config, vocab
