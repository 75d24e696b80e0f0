"""One place that checks a training configuration before anything runs.

A configuration is the dict ``run_config.build_config`` builds from the
model's paper defaults and the options given, and that ``metrics.json``
records.  ``check(config)`` raises ``ConfigError`` naming the offending key,
in the library's terms; the command line turns the key into its flag (``lr``
-> ``--lr``).  The ranges are the option table's (``options.py``).
"""

from __future__ import annotations

import math
import numbers

from npcomp.cells import registry
from npcomp.data.datasets import FILE_TASKS, PAIR_TASKS
from npcomp.errors import ConfigError

from npcomp.configuration.options import LIST_KINDS, OPTIONS, class_name_list, form, rates, score_range

FLOAT32_MAX = 3.4028234663852886e38


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
    """Raise ConfigError unless ``value`` lies in ``option``'s range (None:
    unset), as the option table (``options.py``) declares it."""
    if value is None or option not in OPTIONS:
        return
    declared = OPTIONS[option]
    if declared.kind is int and declared.counts:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < declared.lowest:
            raise ConfigError(option, f"{declared.counts} must be a whole number >= {declared.lowest}, not {value!r}")
    elif declared.kind is float:
        lowest = -math.inf if declared.lowest is None else declared.lowest
        highest = declared.below
        ok = (
            isinstance(value, numbers.Real)
            and math.isfinite(value)
            and (value > lowest if declared.above else value >= lowest)
            and (highest is None or value < highest)
        )
        if not ok:
            opening = "(" if declared.above else "["  # whether lowest itself is taken
            bounds = (
                f"a number in {opening}{lowest:g}, {highest:g})"
                if highest is not None
                else "a finite number"
                if lowest == -math.inf
                else f"a finite number {'>' if declared.above else '>='} {lowest:g}"
            )
            raise ConfigError(option, f"must be {bounds}, not {value!r}")
    elif declared.kind is rates:
        values = value if isinstance(value, (list, tuple)) else [value]
        lowest, below = declared.lowest, declared.below
        if not values or not all(isinstance(rate, numbers.Real) and lowest <= rate < below for rate in values):
            raise ConfigError(option, f"rates must be numbers in [{lowest:g}, {below:g}), not {value!r}")
    elif declared.kind is class_name_list:
        from npcomp.data.datasets.class_list import checked_classes

        checked_classes(value if isinstance(value, (list, tuple)) else [value])
    elif declared.kind is score_range:
        from npcomp.data.datasets.score_scale import checked_range

        checked_range(value if isinstance(value, (list, tuple)) else [value])


def read(option: str, value):
    """Option ``option``'s value from ``value`` as `npcomp train`'s parser
    reads its text: a switch from true/false, any other option from the text
    of ``value`` (0.05 and "0.05" alike; a comma list of rates), in its
    choices; None stays None.  OptionFormError (``options.form``) for an
    unknown option or a value of the wrong form, ConfigError for text its
    type or choices refuse."""
    if value is None:
        return None
    value = form(option, value)
    declared = OPTIONS[option]
    if declared.kind is bool:
        return value
    text = str(value)
    if declared.kind in LIST_KINDS:
        try:
            return declared.kind(text)
        except ValueError:
            raise ConfigError(option, f"takes {LIST_KINDS[declared.kind]}, not {text!r}") from None
    try:
        value = declared.kind(text)
    except ValueError:
        raise ConfigError(option, f"invalid {declared.kind.__name__} value: {text!r}") from None
    choices = declared.choices
    if choices is not None and value not in choices:
        raise ConfigError(
            option, f"invalid choice: {value!r} (choose from {', '.join(repr(choice) for choice in choices)})"
        )
    return value


def check(config: dict) -> None:
    """Every value of ``config`` in its range, the cell options ones its model
    takes (``cells/registry.py``), and the options consistent with each other
    and with the task."""
    for option, value in config.items():
        check_value(option, value)
    entry = registry.model(config["model"])
    for option in registry.CELL_OPTIONS:
        value = config.get(option)
        if value is None:
            continue
        if option not in entry.options:
            raise ConfigError(option, f"does not apply to {entry.name}")
        allowed = entry.allowed(option)
        if allowed is not None and value not in allowed:
            raise ConfigError(option, f"{entry.name} takes one of {', '.join(allowed)}, not {value!r}")
    if config.get("dtype", "float32") == "float32":
        for option in ("lr", "emb_lr", "epsilon", "l2"):
            value = config.get(option)
            if value is not None and abs(value) > FLOAT32_MAX:
                raise ConfigError(option, f"{value!r} is beyond the range of float32, the training dtype")
    task = config.get("task")
    if config.get("span_samples") and config.get("supervision") != "spans":
        raise ConfigError("span_samples", "draws from the phrase spans: it needs supervision 'spans'")
    if config.get("neutral", "unlabelled") != "unlabelled" and task != "sst2":
        raise ConfigError("neutral", "applies to sst2 alone: the other tasks predict neutral")
    if task in PAIR_TASKS and config.get("dropout", 0.0) > 0.0:  # a pair config built by hand
        raise ConfigError("dropout", f"does not apply to {task}: {OPTIONS['dropout'].help}")
    if task in FILE_TASKS:
        _check_file_options(config)
    recurrent = config.get("recurrent_dropout") or [0.0]
    if max(recurrent if isinstance(recurrent, (list, tuple)) else [recurrent]) > 0.0 and not entry.recurrent:
        raise ConfigError(
            "recurrent_dropout", f"does not apply to {config.get('model')} (no recurrence over a sequence)"
        )


def _check_file_options(config: dict) -> None:
    """The options of a run on a user's files (``--train``) consistent."""
    if config.get("supervision") == "spans":
        raise ConfigError(
            "supervision",
            "spans: a user's files are not read as phrase spans "
            "yet; train on every labelled node (all) or the "
            "roots (root)",
        )
    folds, fold = config.get("folds"), config.get("fold")
    if folds is None:
        if fold is not None:
            raise ConfigError("fold", "goes with --folds K, the number of folds")
        return
    if config.get("test"):
        raise ConfigError(
            "folds", "cross-validation takes each fold's test split from the training file: leave --test out"
        )
    if fold is None:
        raise ConfigError(
            "folds",
            f"a run trains one fold: give the fold it holds out as its "
            f"test split (--fold 0..{folds - 1}), or train them all "
            f"with npcomp sweep --folds {folds}",
        )
    if fold >= folds:
        raise ConfigError("fold", f"fold {fold} of {folds}: the folds are numbered 0..{folds - 1}")
