"""One place that checks a training configuration before anything runs.

A configuration is the dict ``npcomp train`` builds from the model's paper
defaults and the options given (``defaults.defaults_for``), and that
``metrics.json`` records.  ``check(config)`` raises ``ConfigError`` naming the
offending key, in the library's terms; the command line turns the key into
its flag (``lr`` -> ``--lr``).
"""
from __future__ import annotations

import math
import numbers

from .cells import registry

# key -> (lowest allowed value, what it counts)
_INTEGERS = {
    "dim": (1, "the hidden dimension"),
    "embedding_dim": (1, "the word vector dimension"),
    "epochs": (1, "the number of epochs"),
    "evals_per_epoch": (1, "dev evaluations per epoch"),
    "batch_size": (1, "sentences per minibatch"),
    "eval_batch_size": (1, "sentences per evaluation forest"),
    "similarity_dim": (1, "the similarity layer's units"),
    "adagrad_reset": (0, "epochs between resets of the optimiser (0: never)"),
    "span_samples": (0, "phrases drawn per sentence (0: every phrase)"),
    "seed": (0, "the random seed"),
    "threads": (1, "compute threads"),
}
# key -> (lowest allowed value, whether it is allowed itself, upper bound or None)
_REALS = {
    "lr": (0.0, False, None),
    "emb_lr": (0.0, True, None),
    "epsilon": (0.0, False, None),
    "l2": (0.0, True, None),
    "oov_scale": (0.0, True, None),
    "forget_bias": (-math.inf, False, None),
    "dropout": (0.0, True, 1.0),
    "embedding_dropout": (0.0, True, 1.0),
}


FLOAT32_MAX = 3.4028234663852886e38


# the trees plain sentences get (predict, neighbours: --tree; text_trees.py) and
# the trees a split is scored on (eval --trees); here so the command line's
# options are read before numpy loads
TREE_CHOICES = ("parsed", "right", "left", "chain")
EVAL_TREES = ("gold", "parsed", "right", "left")


class ConfigError(ValueError):
    """A configuration value out of its range, or options that do not go
    together; ``option`` is the config key at fault."""

    def __init__(self, option: str, message: str):
        self.option = option
        self.reason = message
        super().__init__(f"{option}: {message}")


def check_output_directory(option: str, path) -> None:
    """ConfigError naming ``option`` when ``path``, a directory the command
    writes into (made if missing), is a file or lies under one."""
    from pathlib import Path
    path = Path(path)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        where = "is a file" if existing == path else f"lies under the file {existing}"
        raise ConfigError(option, f"{path} {where}: it names a directory to write into")


def check_value(option: str, value) -> None:
    """Raise ConfigError unless ``value`` lies in ``option``'s range (None: unset)."""
    if value is None:
        return
    if option in _INTEGERS:
        lowest, meaning = _INTEGERS[option]
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
                or value < lowest:
            raise ConfigError(option, f"{meaning} must be a whole number >= {lowest}, "
                                      f"not {value!r}")
    elif option in _REALS:
        lowest, inclusive, highest = _REALS[option]
        ok = (isinstance(value, numbers.Real) and math.isfinite(value)
              and (value >= lowest if inclusive else value > lowest)
              and (highest is None or value < highest))
        if not ok:
            bounds = (f"a number in [{lowest:g}, {highest:g})" if highest is not None else
                      "a finite number" if lowest == -math.inf else
                      f"a finite number {'>=' if inclusive else '>'} {lowest:g}")
            raise ConfigError(option, f"must be {bounds}, not {value!r}")
    elif option == "recurrent_dropout":
        rates = value if isinstance(value, (list, tuple)) else [value]
        if not rates or not all(isinstance(rate, numbers.Real) and 0.0 <= rate < 1.0
                                for rate in rates):
            raise ConfigError(option, f"rates must be numbers in [0, 1), not {value!r}")


def check(config: dict) -> None:
    """Every value of ``config`` in its range, the cell options ones its model
    takes (``cells/registry.py``), and the options consistent with each other
    and with the task."""
    for option, value in config.items():
        check_value(option, value)
    entry = registry.model(config["model"])
    for option in registry.OPTIONS:
        value = config.get(option)
        if value is None:
            continue
        if option not in entry.options:
            raise ConfigError(option, f"does not apply to {entry.name}")
        allowed = entry.allowed(option)
        if allowed is not None and value not in allowed:
            raise ConfigError(option, f"{entry.name} takes one of {', '.join(allowed)}, "
                                      f"not {value!r}")
    if config.get("dtype", "float32") == "float32":
        for option in ("lr", "emb_lr", "epsilon", "l2"):
            value = config.get(option)
            if value is not None and abs(value) > FLOAT32_MAX:
                raise ConfigError(option, f"{value!r} is beyond the range of float32, the "
                                          "training dtype")
    task = config.get("task")
    if config.get("span_samples") and config.get("supervision") != "spans":
        raise ConfigError("span_samples", "draws from the phrase spans: it needs "
                                          "supervision 'spans'")
    if config.get("neutral", "unlabelled") != "unlabelled" and task != "sst2":
        raise ConfigError("neutral", "applies to sst2 alone: the other tasks predict neutral")
    if task == "sick":
        if config.get("dropout", 0.0) > 0.0:
            raise ConfigError("dropout", "acts on a classifier's input; the similarity head "
                                         "of sick takes none (Tai et al.): use "
                                         "embedding_dropout")
    rates = config.get("recurrent_dropout") or [0.0]
    if max(rates if isinstance(rates, (list, tuple)) else [rates]) > 0.0 \
            and not entry.recurrent:
        raise ConfigError("recurrent_dropout", f"does not apply to {config.get('model')} "
                                               "(no recurrence over a sequence)")
