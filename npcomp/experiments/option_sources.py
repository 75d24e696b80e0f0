"""Where each option of a paper table's setting comes from.

Every option a setting trains with (the model's defaults for the task,
``defaults.defaults_for``, with the row's options on top) has a source:

* ``paper``: the paper prints it; ``where`` names the section (``PRINTED``,
  per model and protocol, and the row's ``option_sources``);
* ``default``: npcomp's, where the paper is silent;
* ``substitute``: what the row runs in place of what the paper used (50-d
  GloVe 6B for the paper's 300-d 840B: a row's ``Deviation`` of its
  vectors), never called the paper's;
* ``dev``: an option of a row's ``-dev`` setting that differs from the
  printed one, when the committed runs chose that setting on dev
  (``report.dev_choices``); otherwise such an option is ``alternative``
  (tried, not chosen), or ``undecided`` while the settings compared lack
  seeds.

Imports neither NumPy nor the cells.
"""

from __future__ import annotations

from npcomp.configuration.defaults import SICK, defaults_for, dim_follows_embedding
from npcomp.configuration.options import NOT_A_SETTING, OPTIONS
from .paper_rows import DEFAULT, DEV, PAPER, SUBSTITUTE, VECTORS, config_task

ALTERNATIVE, UNDECIDED = "alternative", "undecided"
# config keys a setting's options leave out, as how or where a run runs rather
# than what it trains: those the option table names so (setting no run apart,
# where_it_runs, or how the numbers are computed: the floating-point type and
# a minibatch's shards, which it counts as settings as results depend on
# them); the dev evaluations per epoch; the records a row's setting carries
# beside its options
HIDDEN = (
    *NOT_A_SETTING,
    *(
        name
        for name, option in OPTIONS.items()
        if (option.where_it_runs or option.computation) and name not in NOT_A_SETTING
    ),
    "evals_per_epoch",
    "source",
    "protocol",
    "vectors_name",
)
# the dimension of the vector files the tables name
VECTOR_DIMS = {
    "glove.6B.50d.sst-sick.txt": 50,
    "word2vec.GoogleNews.300d.bolukbasi26k.sst-sick.txt": 300,
    "glove.840B.300d": 300,
}


def _section(where: str, *options) -> dict:
    return {option: where for option in options}


TAI = "Tai et al. 2015"
TAI_TRAINING = _section(f"{TAI}, Sec. 5.3", "optimizer", "lr", "emb_lr", "batch_size", "l2", "dropout", "embedding_dim")
TAI_TREE = {**TAI_TRAINING, "dim": f"{TAI}, Table 1", "supervision": f"{TAI}, Sec. 5.1 (every node labelled)"}
TAI_DEPENDENCY = {**TAI_TREE, "structure": f"{TAI}, Sec. 5.1 (dependency parses)"}
TAI_SEQUENCE = {
    **TAI_TRAINING,
    "dim": f"{TAI}, Table 1",
    **_section(f"{TAI}, Sec. 5.1 (trained on the spans of labelled nodes)", "structure", "supervision"),
}
TAI_SICK = {
    **_section(
        f"{TAI}, Sec. 5.3", "optimizer", "lr", "emb_lr", "batch_size", "l2", "fixed_embeddings", "embedding_dim"
    ),
    "dropout": f"{TAI}, Sec. 5.3 (no dropout on relatedness)",
    "similarity_dim": f"{TAI}, Sec. 5.2",
    "dim": f"{TAI}, Table 1",
    "output_gate": f"{TAI}, Table 1 (its parameter counts)",
    "supervision": f"{TAI}, Sec. 6.2 (supervision at the root)",
}
ZHU = _section("Zhu et al. 2015, Sec. 5", "dim", "batch_size", "lr", "emb_lr", "optimizer")
LE_ZUIDEMA = {
    **_section("Le & Zuidema 2015, Sec. 5.2", "dim", "lr", "emb_lr", "l2", "batch_size", "epochs", "embedding_dim"),
    "optimizer": "Le & Zuidema 2015, Sec. 4",
    "activation": "Le & Zuidema 2015, Table 1 (tanh)",
    "untied": "Le & Zuidema 2015, Secs. 3-4",
}
SOCHER = _section("Socher et al. 2013, Sec. 5", "dim", "embedding_dim", "batch_size", "optimizer")
NAYEBI = {
    **_section(
        "Nayebi & Blundell, Sec. 4.1",
        "dim",
        "embedding_dim",
        "lr",
        "emb_lr",
        "optimizer",
        "batch_size",
        "embedding_dropout",
        "recurrent_dropout",
        "untied",
        "embedding_masks",
        "oov",
        "oov_scale",
    ),
    "l2": "Nayebi & Blundell, Sec. 4.1 (Keras' l2(0.01), our lambda 0.02)",
    "epochs": "Nayebi & Blundell, Sec. 4.1 (overfit at or before 20 epochs)",
    "supervision": "Nayebi & Blundell, Table 1 (root labels)",
    "structure": "Nayebi & Blundell, Sec. 3",
}
IRSOY = {
    **_section("Irsoy & Cardie 2015, Sec. 5.1", "fixed_embeddings", "embedding_dim", "structure"),
    "supervision": "Irsoy & Cardie 2015, Sec. 5.1 (phrases as partial sentences)",
}
# per (model, protocol): the options of its default setting its paper prints
PRINTED = {
    ("treelstm-nary", "paper"): TAI_TREE,
    ("treelstm-childsum", "paper"): TAI_DEPENDENCY,
    ("lstm", "paper"): TAI_SEQUENCE,
    ("bilstm", "paper"): {**TAI_SEQUENCE, "untied": f"{TAI}, footnote 2"},
    ("lstm2", "paper"): TAI_SEQUENCE,
    ("bilstm2", "paper"): {**TAI_SEQUENCE, "untied": f"{TAI}, footnote 2"},
    ("mean-vectors", "paper"): TAI_TRAINING,
    ("slstm", "paper"): ZHU,
    ("lstm-rnn", "paper"): LE_ZUIDEMA,
    ("recnn", "paper"): LE_ZUIDEMA,
    ("rntn", "paper"): SOCHER,
    # Tai et al.'s RAE and MV-RNN figures are Socher et al. 2013's, at the setting
    # that paper gives all its models
    ("rae", "paper"): SOCHER,
    ("mvrnn", "paper"): SOCHER,
    ("lstm", "nayebi"): NAYEBI,
    ("bilstm", "nayebi"): NAYEBI,
    ("lstm-global-attn", "paper"): NAYEBI,
    ("lstm-recurrent-attn", "paper"): NAYEBI,
    ("rnn", "paper"): {
        **IRSOY,
        "dim": "Irsoy & Cardie 2015, Table 2 (d_h = 315)",
        "activation": "Irsoy & Cardie 2015, Table 2 (rectifier)",
    },
    ("mrnn", "paper"): {
        **IRSOY,
        "dim": "Irsoy & Cardie 2015, Table 2 (d_h = 20)",
        "activation": "Irsoy & Cardie 2015, Table 2 (rectifier)",
    },
    ("matrix-space", "paper"): {**IRSOY, "dim": "Irsoy & Cardie 2015, Table 1 (MPQA, d_h = 3)"},
}


def resolved(options: dict) -> dict:
    """The config keys a setting trains with that say what is trained: the
    model's defaults for the task under the setting's protocol, its options
    on top, the word vectors' dimension where a file sets it."""
    config = defaults_for(
        options["model"], config_task(options["task"]), options.get("protocol"), options.get("supervision")
    )
    config.update({key: value for key, value in options.items() if key != "protocol"})
    vectors = config.get("vectors") or config.get("vectors_name")
    if vectors in (None, "random"):
        config["vectors"] = "random"
    else:
        config["vectors"] = vectors
        config["embedding_dim"] = VECTOR_DIMS.get(vectors, config["embedding_dim"])
    if dim_follows_embedding(config):
        config["dim"] = config["embedding_dim"]
    return {key: value for key, value in config.items() if key not in HIDDEN + ("model", "task") and value is not None}


def printed_sources(row, options: dict) -> dict:
    """Option -> (source, where) of a row's printed setting."""
    config = resolved(options)
    protocol = options.get("protocol") or "paper"
    printed = PRINTED.get((options["model"], protocol), {})
    if options["task"] in ("sick", "sick-entailment"):
        printed = {
            **{key: where for key, where in printed.items() if key not in SICK and key != "dim"},
            **TAI_SICK,
            "vectors": f"{TAI}, Sec. 5.3 (300-d GloVe 840B)",
        }
    out = {}
    if options["task"] == "sick-entailment":  # no paper: relatedness's settings, said so
        printed = {key: f"no paper gives entailment's; relatedness's, {where}" for key, where in printed.items()}
    for key in config:
        if key in row.option_sources:
            out[key] = row.option_sources[key]
        elif key == "vectors" and any(one.what == VECTORS for one in row.deviations):
            out[key] = (SUBSTITUTE, row.vectors)  # not the paper's, whatever it is called
        elif key in options and key not in ("model", "task"):
            out[key] = (
                PAPER,
                row.vectors if key == "vectors" else f"{row.source}: the row's setting" if row.source else "the row",
            )
        elif key in printed:
            out[key] = (DEFAULT if options["task"] == "sick-entailment" else PAPER, printed[key])
        else:
            out[key] = (DEFAULT, "npcomp's; the paper gives none")
    if "embedding_dim" in out and config["vectors"] != "random":
        out["embedding_dim"] = out["vectors"]
    if "dim" in out and dim_follows_embedding(dict(config, model=options["model"])):
        out["dim"] = out["embedding_dim"]
    return out


def setting_options(row, name: str, chosen: bool | None) -> list:
    """Every option of ``row``'s setting ``name`` with its value and source:
    [{option, value, source, where}].  ``chosen``: for a ``-dev`` setting,
    whether dev chose it (its options that differ from the printed
    setting's are then ``dev``, else ``alternative``; None: not decided)."""
    settings = row.settings()
    printed_name = row.name
    printed = resolved(settings[printed_name])
    sources = printed_sources(row, settings[printed_name])
    config = resolved(settings[name])
    out = []
    for key, value in config.items():
        if name == printed_name or printed.get(key) == value:
            source, where = sources.get(key, (DEFAULT, "npcomp's; the paper gives none"))
        elif chosen:
            source, where = DEV, "chosen on dev: this setting's mean dev figure is the row's best"
        elif chosen is False:
            source, where = ALTERNATIVE, "tried on dev, not chosen"
        else:
            source, where = UNDECIDED, "not yet compared on dev (too few seeds)"
        out.append({"option": key, "value": value, "source": source, "where": where})
    return out


def setting_kind(options: list) -> str:
    """``dev`` when an option comes from dev, ``alternative`` when one was
    tried and not chosen, ``undecided`` before the comparison has its
    seeds, ``paper`` otherwise (default options included)."""
    sources = {option["source"] for option in options}
    for kind in (DEV, ALTERNATIVE, UNDECIDED):
        if kind in sources:
            return kind
    return PAPER
