"""A model made from a training configuration: its cell and head
(``build_model``), and a new model's parameters (``initial_parameters``) in
the configuration's dtype (``DTYPES``).
"""

from __future__ import annotations

import numpy as np

from npcomp.cells import make_cell
from npcomp.data.readers.embeddings import Vocabulary, build_embedding_matrix
from npcomp.data.datasets import PAIR_CLASS_TASKS, PAIR_TASKS
from npcomp.models import PairModel, TreeModel
from npcomp.configuration.options import cell_options

DTYPES = {"float32": np.float32, "float64": np.float64}


def build_model(config: dict, vocab: Vocabulary, n_classes: int):
    """A TreeModel, or a PairModel for a pair task (SICK's relatedness or
    entailment); ``n_classes`` are the classes (ratings) it predicts."""
    # a cell option not in the config is not given: the cell's own default
    cell = make_cell(
        config["model"],
        config["embedding_dim"],
        config["dim"],
        **{option: config.get(option) for option in cell_options()},
    )
    if config["task"] in PAIR_TASKS:
        # entailment and other classes of pairs: the similarity head's hidden
        # layer into a softmax over the classes (heads.PairClassifierHead)
        return PairModel(
            cell,
            len(vocab),
            config["embedding_dim"],
            hidden_dim=config["similarity_dim"],
            n_classes=n_classes,
            head="pair_softmax" if config["task"] in PAIR_CLASS_TASKS else "similarity",
        )
    return TreeModel(
        cell,
        n_classes,
        len(vocab),
        config["embedding_dim"],
        head=config["head"],
        training_only_classes=int(config["neutral"] == "train"),
    )


def initial_parameters(config, model, vocab, vectors, rng, report):
    """A new model's parameters in the config's dtype: the cell's and heads'
    initialisation, the word vectors from ``vectors`` (or drawn as
    ``config["oov"]`` says); ``report["embedding"]`` says how."""
    # word matrices (matrix-space model): the cell knows their starting point
    embedding = model.cell.initial_embedding(len(vocab), rng) if vectors is None else None
    if embedding is not None:
        report["embedding"] = {"initialised_by": config["model"]}
    else:
        embedding, report["embedding"] = build_embedding_matrix(
            vocab,
            config["embedding_dim"],
            rng,
            vectors=vectors,
            oov=config["oov"],
            scale=config["oov_scale"],
            dtype=np.float64,
        )
    return model.new_parameters(rng, embedding, dtype=DTYPES[config["dtype"]])
