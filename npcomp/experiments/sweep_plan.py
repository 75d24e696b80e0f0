"""A sweep's runs and their place in SWEEP_DIR: one run per setting and
seed, named ``SETTING-sSEED``; the plan of them all, ``plan.json``, never
silently changed; each run's directory, log and state.

Each (setting, seed) is one ordinary run directory,
``SWEEP_DIR/runs/SETTING-sSEED``, which ``eval``, ``predict`` and
``summary`` read like any other.  SWEEP_DIR holds:

* ``plan.json``: every run planned, with its options (written before any run
  starts; a sweep whose runs would differ is refused, ``--extend`` adds runs);
* ``runs/SETTING-sSEED/``: the run directories;
* ``logs/SETTING-sSEED.txt``: what each run printed, attempt after attempt;
* ``sweep.json`` and ``sweep.md``: the results (``sweep_results.py``).
"""

from __future__ import annotations

import itertools
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from npcomp.cells import registry
from npcomp.configuration.options import OPTIONS
from npcomp.training.run_data import run_finished
from npcomp.runfiles.rundir import RunDirectory, RunDirectoryError, RunFileError
from .sweep_spec import SpecError, SweepSpec

PLAN = "plan.json"
RUNS = "runs"
LOGS = "logs"


class SweepDirectoryError(RunDirectoryError):
    """SWEEP_DIR holds another sweep, or cannot be used."""


# --------------------------------------------------------------------------
# the runs: one per setting and seed
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedRun:
    """One run of the sweep: ``name`` (its directory under runs/),
    ``setting``, ``seed``, ``options`` (base + setting, without the seed)
    and, cross-validating (``folds`` among the options), the ``fold`` it
    holds out as its test split."""

    name: str
    setting: str
    seed: int
    options: dict
    fold: int | None = None

    def record(self) -> dict:
        record = {"setting": self.setting, "seed": self.seed, "options": self.options}
        if self.fold is not None:
            record["fold"] = self.fold
        return record


def value_text(option: str, value) -> str:
    """A value as a setting's name shows it: ``0.05``, ``1e-05``, a vector
    file's stem."""
    if isinstance(value, bool):
        return "" if value else "no"
    if isinstance(value, float):
        text = f"{value:g}"
    else:
        text = str(value)
    if option == "vectors":
        text = Path(text).name.removesuffix(".gz").removesuffix(".txt").removesuffix(".bin")
    return re.sub(r"[^A-Za-z0-9_.+=-]", "_", text)


def grid_point_name(point: dict) -> str:
    """{"lr": 0.05, "dropout": 0.3} -> ``lr0.05-dropout0.3``; a switch shows as
    its name, or no-name when false."""
    parts = []
    for option, value in point.items():
        name = option.replace("_", "-")
        if isinstance(value, bool):
            parts.append(name if value else f"no-{name}")
        else:
            parts.append(f"{name}{value_text(option, value)}")
    return "-".join(parts)


def settings_of(spec: SweepSpec) -> dict:
    """setting name -> (options it sets over the base, {option: section it
    came from}), in order: each named setting (or the base alone, named
    ``base``) combined with each grid point."""
    named = spec.settings or {"": {}}
    points = [dict(zip(spec.grid, values)) for values in itertools.product(*spec.grid.values())]
    settings = {}
    for name, options in named.items():
        for point in points:
            setting = "-".join(part for part in (name, grid_point_name(point)) if part) or "base"
            if setting in settings:
                raise SpecError(
                    f"{spec.where('grid')}: two "
                    f"settings are both named {setting}: values that print alike "
                    "(0.1 and 0.10) or a setting named like a grid point"
                )
            both = sorted(set(options) & set(point))
            if both:
                raise SpecError(
                    f"{spec.where('grid', both[0])}: {both[0]} is both in the grid "
                    f"and in setting {name} ({spec.where(f'settings.{name}', both[0])})"
                    ": give it in one place"
                )
            sources = {option: "base" for option in spec.base}
            sources.update({option: f"settings.{name}" for option in options})
            sources.update({option: "grid" for option in point})
            settings[setting] = ({**options, **point}, sources)
    return settings


def plan_runs(spec: SweepSpec) -> list:
    """Every run of the sweep, setting by setting, seed by seed, and with
    ``folds`` K among a setting's options fold by fold: K runs a seed, run k
    holding fold k of the training file out as its test split
    (``SETTING-foldK-sSEED``)."""
    runs = []
    for setting, (options, sources) in settings_of(spec).items():
        options = {**spec.base, **options}
        folds = _folds(options, sources, spec)
        for seed in spec.seeds:
            if folds is None:
                runs.append(PlannedRun(f"{setting}-s{seed}", setting, seed, options))
                continue
            runs += [PlannedRun(f"{setting}-fold{fold}-s{seed}", setting, seed, options, fold) for fold in range(folds)]
    return runs


def _folds(options: dict, sources: dict, spec: SweepSpec) -> int | None:
    """A setting's number of folds (None: no cross-validation); SpecError for
    a fold given (the sweep trains each) or a count that is no count."""
    where = spec.where(sources.get("folds", "base"), "folds")
    if "fold" in options:
        raise SpecError(
            f"{spec.where(sources.get('fold', 'base'), 'fold')}: fold is set by "
            "the sweep: with folds K it trains every fold, each run holding one out"
        )
    value = options.get("folds")
    if value is None:
        return None
    try:
        folds = int(str(value))
    except ValueError:
        folds = 0
    if isinstance(value, bool) or folds < 2:
        raise SpecError(f"{where}: folds: cross-validation needs a whole number of folds >= 2, not {value!r}")
    return folds


# --------------------------------------------------------------------------
# SWEEP_DIR: its plan, never silently changed
# --------------------------------------------------------------------------


def plan_record(spec: SweepSpec, runs: list) -> dict:
    """SWEEP_DIR/plan.json's record of ``spec``, its paths where the runs
    run (data, parses) relative to this directory, as run files record them
    (``run_paths.py``)."""
    from npcomp.runfiles.run_paths import relative_where

    return {
        "specs": [
            {
                "source": spec.source,
                "base": relative_where(spec.base),
                "seeds": spec.seeds,
                "grid": spec.grid,
                "settings": {name: relative_where(options) for name, options in spec.settings.items()},
            }
        ],
        "runs": {run.name: dict(run.record(), options=relative_where(run.options)) for run in runs},
    }


def _what_is_trained(record: dict) -> dict:
    """A planned run's setting, seed and options, without those that say where
    it runs rather than what it trains (the option table's ``where_it_runs``;
    the parses' directory too: the runs' data fingerprints check what they
    read), each value as `npcomp train` receives it (text: 0.05 from a SPEC
    file and "0.05" from --grid plan the same run)."""
    return {
        **record,
        "options": {
            key: value if isinstance(value, bool) else str(value)
            for key, value in record["options"].items()
            if key not in OPTIONS or not OPTIONS[key].where_it_runs
        },
    }


@contextmanager
def sweep_lock(sweep_dir: str | Path):
    """SWEEP_DIR made if need be and held by this process (an exclusive
    ``flock`` on its ``.lock``, as a run directory's) while the context
    lasts: a second sweep into it meanwhile is refused, with nothing
    changed, rather than planning and reporting its runs while the first
    trains them.  The kernel lets the lock go with the process, killed or
    not."""
    directory = RunDirectory(sweep_dir)
    if directory.path.exists() and not directory.path.is_dir():
        raise SweepDirectoryError(f"{directory.path} is a file, not a sweep directory")
    directory.path.mkdir(parents=True, exist_ok=True)
    try:
        directory.lock()
    except RunDirectoryError:
        raise SweepDirectoryError(
            f"{directory.path}: another npcomp sweep is running in this sweep directory; "
            "nothing was changed. Wait for it to end (the same command then reports its runs, "
            "and continues any it left unfinished), or choose another directory with "
            "--out"
        ) from None
    try:
        yield directory
    finally:
        directory.unlock()


def settle_plan(sweep_dir: str | Path, spec: SweepSpec, runs: list, extend: bool = False) -> list:
    """Record the sweep's plan in SWEEP_DIR/plan.json and return the runs to
    carry out.  A SWEEP_DIR that holds another sweep is refused (nothing is
    changed): its runs would be resumed with other options, or mixed into
    statistics they do not belong to.  With ``extend`` the new runs are
    added to the recorded ones, provided every run already planned keeps
    its options; then the runs are all of them, old and new."""
    directory = RunDirectory(sweep_dir)
    if directory.path.exists() and not directory.path.is_dir():
        raise SweepDirectoryError(f"{directory.path} is a file, not a sweep directory")
    new = plan_record(spec, runs)
    if not (directory.path / PLAN).is_file():
        if (directory.path / RUNS).exists() or directory.run_files():
            raise SweepDirectoryError(
                f"{directory.path} holds runs but no {PLAN}: it is not a sweep directory this "
                "command made; nothing was changed. Choose another directory with --out"
            )
        directory.path.mkdir(parents=True, exist_ok=True)
        directory.write_json(PLAN, new)
        return runs
    old = directory.read_json(PLAN)
    changed = [
        name
        for name in old["runs"]
        if name in new["runs"] and _what_is_trained(old["runs"][name]) != _what_is_trained(new["runs"][name])
    ]
    if changed:
        name = changed[0]
        then, now = (_what_is_trained(plan["runs"][name])["options"] for plan in (old, new))
        differences = ", ".join(
            f"{key} {then.get(key, '(not given)')} there, {now.get(key, '(not given)')} here"
            for key in dict.fromkeys([*then, *now])
            if then.get(key) != now.get(key)
        )
        raise SweepDirectoryError(
            f"{directory.path} holds another sweep: its run {name} has other options "
            f"({differences or 'another setting or seed'})"
            f"{f'; {len(changed) - 1} more runs differ' if len(changed) > 1 else ''}. "
            "Nothing was changed. Choose another directory with --out (or move that one "
            "aside)"
        )
    added = [name for name in new["runs"] if name not in old["runs"]]
    dropped = [name for name in old["runs"] if name not in new["runs"]]
    if (added or dropped) and not extend:
        what = []
        if added:
            what.append(
                f"adds {len(added)} run{'s' * (len(added) > 1)} ({added[0]}{', ...' if len(added) > 1 else ''})"
            )
        if dropped:
            what.append(f"leaves out {len(dropped)} of its runs ({dropped[0]}{', ...' if len(dropped) > 1 else ''})")
        raise SweepDirectoryError(
            f"{directory.path} holds another sweep: this one {' and '.join(what)}; nothing "
            "was changed. Run the same specification to continue it, add the new runs to it "
            "with --extend (those it has are kept and reported too), or choose another "
            "directory with --out"
        )
    merged = {
        "specs": old["specs"] + ([new["specs"][0]] if new["specs"][0] not in old["specs"] else []),
        "runs": {**old["runs"], **new["runs"]},
    }
    if merged != old:
        directory.write_json(PLAN, merged)
    return [
        PlannedRun(
            name=name,
            setting=record["setting"],
            seed=record["seed"],
            options=record["options"],
            fold=record.get("fold"),
        )
        for name, record in merged["runs"].items()
    ]


def predating_options(sweep_dir: str | Path, runs: list) -> dict:
    """{option: the value runs made before it existed ran at} for each option
    of the table with such a value (``Option.before``: ``shards``) that the
    config of one of the sweep's runs lacks (its metrics.json, written from
    its first dev evaluation): the runs the sweep starts now take it, so that
    the runs of a setting stay one setting.  {} for a sweep of newer runs."""
    later = {name: option.before for name, option in OPTIONS.items() if option.before is not None}
    found = {}
    for run in runs:
        if found.keys() == later.keys():
            break
        directory = RunDirectory(run_directory(sweep_dir, run))
        if not (directory.path / "metrics.json").is_file():
            continue
        try:
            metrics = directory.read_json("metrics.json")
        except RunFileError:
            continue  # run_state counts it as not finished
        config = metrics.get("config") if isinstance(metrics, dict) else None
        if not isinstance(config, dict):
            continue
        found.update({name: value for name, value in later.items() if name not in config})
    return found


def run_directory(sweep_dir: str | Path, run: PlannedRun) -> Path:
    return Path(sweep_dir) / RUNS / run.name


def log_path(sweep_dir: str | Path, run: PlannedRun) -> Path:
    return Path(sweep_dir) / LOGS / f"{run.name}.txt"


def run_state(run_dir: str | Path) -> str:
    """Where a run stands: ``finished`` (test metrics written, or the end of
    a run without a test split; and its bag-of-words baseline's when it
    trains one), ``resumable`` (a checkpoint:
    a dev evaluation was written), ``started`` (run files but no checkpoint:
    stopped before its first dev evaluation, nothing finished to keep) or
    ``new``."""
    directory = RunDirectory(run_dir)
    held = directory.run_files()
    if "metrics.json" in held:
        try:
            metrics = directory.read_json("metrics.json")
        except RunFileError:
            metrics = {}
        config = metrics.get("config") or {}
        baseline_due = config.get("baseline") and config.get("model") != registry.baseline_model()
        if run_finished(metrics) and (not baseline_due or run_state(directory.path / "baseline") == "finished"):
            return "finished"
    if "checkpoint.npz" in held:
        return "resumable"
    return "started" if held else "new"
