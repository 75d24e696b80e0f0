"""Many training runs over seeds and settings (``npcomp sweep``).

A sweep is a base training configuration (any ``npcomp train`` option), the
seeds, and what varies: a grid (every combination of the values given for
some options) and/or named settings (each a set of options).  With both,
every named setting is combined with every grid point.  Each (setting, seed)
is one ordinary run directory, ``SWEEP_DIR/runs/SETTING-sSEED``, which
``eval``, ``predict`` and ``summary`` read like any other.

The runs go through Dask distributed: a ``LocalCluster`` of worker processes
bound to 127.0.0.1, or an existing scheduler (``tcp://HOST:PORT``) whose
workers see the data and SWEEP_DIR on a shared file system.  Faults:

* a run's task decides in its worker, from the run directory, whether to
  start, resume (a checkpoint exists: ``npcomp train --resume``) or skip it
  (finished), so a task resubmitted after its worker died continues from the
  run's latest dev evaluation, losing nothing finished; the scheduler
  resubmits it up to ``ALLOWED_FAILURES`` times;
* a run that fails (a bad setting, divergence) returns its error as a value,
  so it is reported and the other runs go on;
* re-running a sweep skips its finished runs (without starting a cluster when
  nothing is left) and resumes the others; then it settles the finished
  runs' files (``settle_finished``: paths relative, figure counts kept).

SWEEP_DIR holds:

* ``plan.json``: every run planned, with its options (written before any run
  starts; a sweep whose runs would differ is refused, ``--extend`` adds runs);
* ``runs/SETTING-sSEED/``: the run directories;
* ``logs/SETTING-sSEED.txt``: what each run printed, attempt after attempt;
* ``sweep.json``: per setting, n, mean, sample std, 95% confidence interval,
  median, min and max of every test and dev metric over the seeds
  (``summary.describe``); the best setting by mean dev metric; every run's
  status, error and the thread counts it saw; paths relative to SWEEP_DIR;
* ``sweep.md``: the same as a Markdown table.
"""
from __future__ import annotations

import itertools
import os
import re
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from npcomp.cells import registry
from npcomp.training.options import OPTIONS
from npcomp.training.rundir import RunDirectory, RunDirectoryError, RunFileError
from .scheduler import SCHEDULER_TIMEOUT, check_scheduler

PLAN = "plan.json"
RESULTS = "sweep.json"
TABLE = "sweep.md"
RUNS = "runs"
LOGS = "logs"
# times the scheduler resubmits a run whose worker died before reporting it
# failed (Dask's distributed.scheduler.allowed-failures, set on a local cluster)
ALLOWED_FAILURES = 3
# sections of a SPEC file
_SECTIONS = ("seeds", "base", "grid", "settings")


class SpecError(Exception):
    """A sweep specification that cannot be used; the message names the file
    and line (or the command-line option) at fault."""


class SweepDirectoryError(RunDirectoryError):
    """SWEEP_DIR holds another sweep, or cannot be used."""


class ClusterError(ConnectionError):
    """The Dask scheduler stopped answering after it had answered as one."""


# --------------------------------------------------------------------------
# the specification: a TOML file and/or command-line options
# --------------------------------------------------------------------------

@dataclass
class SweepSpec:
    """What a sweep trains.  Options are train config keys (``lr``,
    ``data_dir``: a flag's name with underscores) mapped to values: TOML
    scalars from a file, the parsed values of the command line's options.

    ``base``: the options every run takes; ``grid``: option -> its values;
    ``settings``: name -> options; ``seeds``: ints; ``source``: the SPEC
    file or None; ``lines``: (section, option) -> the line it is on in the
    file (section ``settings.NAME`` for a named setting); ``command_line``:
    the (section, option) pairs given on the command line instead."""
    base: dict = field(default_factory=dict)
    seeds: list = field(default_factory=lambda: [1])
    grid: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    source: str | None = None
    lines: dict = field(default_factory=dict)
    command_line: set = field(default_factory=set)

    def where(self, section: str, option: str | None = None) -> str:
        """``FILE:LINE`` of an option (or a section header, or the top-level
        key ``section``'s line) in the SPEC file, or ``the command line`` for
        what was given there."""
        if self.source is None or (section, option) in self.command_line:
            return "the command line"
        line = (self.lines.get((section, option)) if option is not None else None) \
            or self.lines.get((section, None)) or self.lines.get(("", section))
        return f"{self.source}:{line}" if line else str(self.source)


def option_key(name: str) -> str:
    """``data-dir`` or ``data_dir`` -> ``data_dir``."""
    return name.strip().replace("-", "_")


def parse_seeds(text) -> list:
    """``1-5``, ``1,3,7``, ``1-3,10`` (or a list of ints from TOML) -> [ints],
    in order, without repeats; ValueError on anything else."""
    if isinstance(text, list):
        items = text
    else:
        items = []
        for part in str(text).split(","):
            match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
            if not match:
                raise ValueError(f"seeds are whole numbers >= 0 and ranges like 1-5, separated "
                                 f"by commas, not {text!r}")
            first, last = int(match[1]), int(match[2] or match[1])
            if last < first:
                raise ValueError(f"the seed range {part.strip()} runs backwards")
            items.extend(range(first, last + 1))
    seeds = []
    for seed in items:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seeds are whole numbers >= 0, not {seed!r}")
        if seed not in seeds:
            seeds.append(seed)
    if not seeds:
        raise ValueError("no seeds given")
    return seeds


def read_spec(path: str | Path) -> SweepSpec:
    """A SPEC file::

        seeds = "1-5"              # or [1, 2, 3]
        [base]                     # any npcomp train option, by its flag's name
        model = "treelstm-nary"
        task = "sst5"
        epochs = 10
        [grid]                     # every combination of these values
        lr = [0.05, 0.1]
        [settings.glove]           # named settings, each combined with the grid
        vectors = "glove.6B.50d.sst-sick.txt"
        [settings.random]
        vectors = "random"

    SpecError names the file and line of anything malformed."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise SpecError(f"{path}: no such sweep specification") from None
    except IsADirectoryError:
        raise SpecError(f"{path} is a directory, not a sweep specification (a TOML file)") \
            from None
    except UnicodeDecodeError as error:
        line = text_line(error.object, error.start)
        raise SpecError(f"{path}:{line}: not UTF-8 text (byte {error.start})") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        # the message ends "(at line L, column C)": name the place as FILE:LINE
        message = str(error)
        found = re.search(r"\(at line (\d+), column (\d+)\)", message)
        at_end = re.search(r"\(at end of document\)", message)
        if found:
            message = (f"{path}:{found[1]}: {message[:found.start()].strip()} "
                       f"(column {found[2]})")
        elif at_end:  # something left open: name the last line written
            last = max((number for number, line in enumerate(text.splitlines(), start=1)
                        if line.strip()), default=1)
            message = f"{path}:{last}: {message[:at_end.start()].strip()} at the end of the file"
        else:
            message = f"{path}: {message}"
        raise SpecError(f"{message}: not valid TOML") from None
    spec = SweepSpec(source=str(path), lines=_key_lines(text))
    for key in document:
        if key not in _SECTIONS:
            raise SpecError(f"{spec.where(key)}: unknown entry {key!r}; a sweep specification "
                            f"has {', '.join(_SECTIONS)} (training options go in [base])")
    if "seeds" in document:
        try:
            spec.seeds = parse_seeds(document["seeds"])
        except ValueError as error:
            raise SpecError(f"{spec.where('seeds')}: {error}") from None
    spec.base = _options(document.get("base", {}), "base", spec)
    grid = document.get("grid", {})
    if not isinstance(grid, dict):
        raise SpecError(f"{spec.where('grid')}: grid is a table of options and their values")
    for option, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SpecError(f"{spec.where('grid', option)}: a grid option takes a non-empty list "
                            f"of values ({option} = [0.05, 0.1]), not {values!r}")
        for value in values:
            _check_scalar(value, "grid", option, spec)
        spec.grid[option_key(option)] = values
        spec.lines[("grid", option_key(option))] = spec.lines.get(("grid", option))
    settings = document.get("settings", {})
    if not isinstance(settings, dict):
        raise SpecError(f"{spec.where('settings')}: settings are tables, [settings.NAME]")
    for name, options in settings.items():
        section = f"settings.{name}"
        if not isinstance(options, dict):
            raise SpecError(f"{spec.where('settings', name)}: a named setting is a table of "
                            f"options ([settings.{name}]), not {options!r}")
        if not re.fullmatch(r"[A-Za-z0-9_.+=-]+", name):
            raise SpecError(f"{spec.where(section)}: a setting's name becomes a directory "
                            f"name: letters, digits and . _ + = - only, not {name!r}")
        spec.settings[name] = _options(options, section, spec)
    return spec


def _options(table, section: str, spec: SweepSpec) -> dict:
    if not isinstance(table, dict):
        raise SpecError(f"{spec.where(section)}: {section} is a table of options")
    options = {}
    for option, value in table.items():
        _check_scalar(value, section, option, spec)
        options[option_key(option)] = value
        spec.lines[(section, option_key(option))] = spec.lines.get((section, option))
    return options


def _check_scalar(value, section: str, option: str, spec: SweepSpec) -> None:
    if isinstance(value, (dict, list)) or not isinstance(value, (str, int, float, bool)):
        raise SpecError(f"{spec.where(section, option)}: {option} takes one value (a string, "
                        f"number or true/false), not {value!r}")


def _key_lines(text: str) -> dict:
    """(section, key) -> line number of each ``key = value`` and ``[section]``
    header in a TOML text (section "" before the first header; a header is
    (section, None)), so errors found after parsing can name their line."""
    lines, section = {}, ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$", line)
        if header:
            section = ".".join(part.strip().strip('"\'') for part in header[1].split("."))
            lines.setdefault((section, None), number)
            if "." in section:  # [settings.glove] also names the key glove of [settings]
                parent, _, name = section.rpartition(".")
                lines.setdefault((parent, name), number)
            continue
        key = re.match(r"\s*([\"']?)([A-Za-z0-9_.+=-]+)\1\s*=", line)
        if key:
            lines.setdefault((section, key[2]), number)
    return lines


def text_line(data: bytes, offset: int) -> int:
    """The 1-based line of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


def grid_from_arguments(items) -> dict:
    """``["lr=0.05,0.1", "dropout=0.3,0.5"]`` -> {"lr": [0.05, 0.1], ...}:
    values read as a SPEC file's would be (numbers, true/false, else text),
    so the same sweep plans alike from either."""
    grid = {}
    for item in items or ():
        option, equals, values = item.partition("=")
        values = [_scalar(value.strip()) for value in values.split(",") if value.strip()]
        if not equals or not option.strip() or not values:
            raise SpecError(f"--grid {item}: give OPTION=VALUE,VALUE,... (--grid lr=0.05,0.1)")
        grid[option_key(option)] = values
    return grid


def _scalar(text: str):
    """``3`` -> 3, ``0.05`` -> 0.05, ``true`` -> True, anything else the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


# --------------------------------------------------------------------------
# the runs: one per setting and seed
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class PlannedRun:
    """One run of the sweep: ``name`` (its directory under runs/),
    ``setting``, ``seed`` and ``options`` (base + setting, without the seed)."""
    name: str
    setting: str
    seed: int
    options: dict

    def record(self) -> dict:
        return {"setting": self.setting, "seed": self.seed, "options": self.options}


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
                raise SpecError(f"{spec.where('grid')}: two "
                                f"settings are both named {setting}: values that print alike "
                                "(0.1 and 0.10) or a setting named like a grid point")
            both = sorted(set(options) & set(point))
            if both:
                raise SpecError(f"{spec.where('grid', both[0])}: {both[0]} is both in the grid "
                                f"and in setting {name} ({spec.where(f'settings.{name}', both[0])})"
                                ": give it in one place")
            sources = {option: "base" for option in spec.base}
            sources.update({option: f"settings.{name}" for option in options})
            sources.update({option: "grid" for option in point})
            settings[setting] = ({**options, **point}, sources)
    return settings


def plan_runs(spec: SweepSpec) -> list:
    """Every run of the sweep, setting by setting, seed by seed."""
    return [PlannedRun(name=f"{setting}-s{seed}", setting=setting, seed=seed,
                       options={**spec.base, **options})
            for setting, (options, _) in settings_of(spec).items() for seed in spec.seeds]


# --------------------------------------------------------------------------
# SWEEP_DIR: its plan, never silently changed
# --------------------------------------------------------------------------

def plan_record(spec: SweepSpec, runs: list) -> dict:
    """SWEEP_DIR/plan.json's record of ``spec``, its paths where the runs
    run (data, parses) relative to this directory, as run files record them
    (``run_paths.py``)."""
    from npcomp.training.run_paths import relative_where
    return {"specs": [{"source": spec.source, "base": relative_where(spec.base),
                       "seeds": spec.seeds, "grid": spec.grid,
                       "settings": {name: relative_where(options)
                                    for name, options in spec.settings.items()}}],
            "runs": {run.name: dict(run.record(), options=relative_where(run.options))
                     for run in runs}}


def _what_is_trained(record: dict) -> dict:
    """A planned run's setting, seed and options, without those that say where
    it runs rather than what it trains (the option table's ``where_it_runs``;
    the parses' directory too: the runs' data fingerprints check what they
    read), each value as `npcomp train` receives it (text: 0.05 from a SPEC
    file and "0.05" from --grid plan the same run)."""
    return {**record, "options": {key: value if isinstance(value, bool) else str(value)
                                  for key, value in record["options"].items()
                                  if key not in OPTIONS or not OPTIONS[key].where_it_runs}}


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
                "command made; nothing was changed. Choose another directory with --out")
        directory.path.mkdir(parents=True, exist_ok=True)
        directory.write_json(PLAN, new)
        return runs
    old = directory.read_json(PLAN)
    changed = [name for name in old["runs"] if name in new["runs"]
               and _what_is_trained(old["runs"][name]) != _what_is_trained(new["runs"][name])]
    if changed:
        name = changed[0]
        then, now = (_what_is_trained(plan["runs"][name])["options"] for plan in (old, new))
        differences = ", ".join(f"{key} {then.get(key, '(not given)')} there, "
                                f"{now.get(key, '(not given)')} here"
                                for key in dict.fromkeys([*then, *now])
                                if then.get(key) != now.get(key))
        raise SweepDirectoryError(
            f"{directory.path} holds another sweep: its run {name} has other options "
            f"({differences or 'another setting or seed'})"
            f"{f'; {len(changed) - 1} more runs differ' if len(changed) > 1 else ''}. "
            "Nothing was changed. Choose another directory with --out (or move that one "
            "aside)")
    added = [name for name in new["runs"] if name not in old["runs"]]
    dropped = [name for name in old["runs"] if name not in new["runs"]]
    if (added or dropped) and not extend:
        what = []
        if added:
            what.append(f"adds {len(added)} run{'s' * (len(added) > 1)} ({added[0]}"
                        f"{', ...' if len(added) > 1 else ''})")
        if dropped:
            what.append(f"leaves out {len(dropped)} of its runs ({dropped[0]}"
                        f"{', ...' if len(dropped) > 1 else ''})")
        raise SweepDirectoryError(
            f"{directory.path} holds another sweep: this one {' and '.join(what)}; nothing "
            "was changed. Run the same specification to continue it, add the new runs to it "
            "with --extend (those it has are kept and reported too), or choose another "
            "directory with --out")
    merged = {"specs": old["specs"] + ([new["specs"][0]] if new["specs"][0] not in
                                       old["specs"] else []),
              "runs": {**old["runs"], **new["runs"]}}
    if merged != old:
        directory.write_json(PLAN, merged)
    return [PlannedRun(name=name, setting=record["setting"], seed=record["seed"],
                       options=record["options"]) for name, record in merged["runs"].items()]


def run_directory(sweep_dir: str | Path, run: PlannedRun) -> Path:
    return Path(sweep_dir) / RUNS / run.name


def log_path(sweep_dir: str | Path, run: PlannedRun) -> Path:
    return Path(sweep_dir) / LOGS / f"{run.name}.txt"


def run_state(run_dir: str | Path) -> str:
    """Where a run stands: ``finished`` (test metrics written, and its
    bag-of-words baseline's when it trains one), ``resumable`` (a checkpoint:
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
        baseline_due = (config.get("baseline")
                        and config.get("model") != registry.baseline_model())
        if metrics.get("test") is not None and (
                not baseline_due or run_state(directory.path / "baseline") == "finished"):
            return "finished"
    if "checkpoint.npz" in held:
        return "resumable"
    return "started" if held else "new"


# --------------------------------------------------------------------------
# carrying the runs out on Dask distributed
# --------------------------------------------------------------------------

@contextmanager
def dask_client(scheduler: str | None = None, workers: int = 1, dashboard: str | None = None):
    """A ``distributed.Client``: of the existing scheduler at ``scheduler``,
    or of a new ``LocalCluster`` of ``workers`` processes, one task slot
    each, bound to 127.0.0.1 (the dashboard at ``dashboard`` if given, off
    otherwise), closed on leaving."""
    import logging

    import dask
    from distributed import Client, LocalCluster
    if scheduler:
        address = check_scheduler(scheduler)
        try:
            client = Client(address, timeout=f"{SCHEDULER_TIMEOUT:g}s")
        except (OSError, TimeoutError) as error:
            raise ClusterError(f"--scheduler {scheduler}: the Dask scheduler there stopped "
                               f"answering ({error})") from None
        # a lost scheduler is reported by the sweep, run by run: not by the
        # client's own log, with its traceback of each attempt to reconnect
        client_log = logging.getLogger("distributed.client")
        level = client_log.level
        client_log.setLevel(logging.CRITICAL)
        try:
            yield client
        finally:
            client.close()
            client_log.setLevel(level)
        return
    # a run whose worker died is resubmitted ALLOWED_FAILURES times; the
    # worker processes ignore Ctrl-C, which reaches them from the terminal
    # too: this process stops them, and they print no traceback meanwhile
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}), \
            _interrupts_ignored():
        # without a dashboard the scheduler still serves its health check over
        # HTTP: on a free port of 127.0.0.1, not Dask's default 8787 (which a
        # second sweep would find taken, with a warning)
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               host="127.0.0.1", scheduler_port=0,
                               dashboard_address=dashboard, silence_logs=logging.ERROR,
                               scheduler_kwargs=None if dashboard else
                               {"dashboard_address": "127.0.0.1:0"})
    try:
        client = Client(cluster)
        try:
            # and so do the workers a nanny starts again after one died
            from .sweep_workers import IgnoreInterrupts
            client.register_plugin(IgnoreInterrupts())
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


@contextmanager
def _interrupts_ignored():
    """SIGINT ignored while the local cluster starts its worker processes,
    which inherit that (in the main thread only: elsewhere Python cannot
    change a signal's handler)."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass
class Tally:
    """Runs of this sweep by state, for the progress bar."""
    finished: int = 0
    failed: int = 0
    running: int = 0

    def text(self) -> str:
        return f"finished {self.finished}, running {self.running}, failed {self.failed}"


def execute(client, jobs: dict, task, progress: bool = True, already_finished: int = 0,
            total: int | None = None, echo=print) -> dict:
    """Run ``task(*arguments)`` for each run name -> arguments of ``jobs`` on
    the cluster of ``client``; name -> the task's result (a dict with
    ``status``, 0 when the run finished, and ``error``), or {"status": 1,
    "error": ...} for a run the cluster could not carry out (its worker died
    ALLOWED_FAILURES times).  A progress bar over the runs shows finished,
    running and failed ones and the time left.  On KeyboardInterrupt the
    runs are cancelled and the workers running them restarted (an existing
    cluster keeps going for others), then the interrupt goes on."""
    from distributed import as_completed
    token = uuid.uuid4().hex[:8]
    futures = {client.submit(task, *arguments, key=f"npcomp-run-{name}-{token}", pure=False):
               name for name, arguments in jobs.items()}
    tally = Tally(finished=already_finished)
    bar = _progress_bar(total or len(jobs), already_finished, progress)
    results = {}
    try:
        completed = as_completed(futures)
        last_poll = 0.0
        while len(results) < len(futures):
            for future in completed.next_batch(block=False):
                name = futures[future]
                results[name] = _result(future)
                if results[name]["status"] == 0:
                    tally.finished += 1
                else:
                    tally.failed += results[name]["status"] is not None
                    message = (f"{name} failed: {results[name]['error']}"
                               if results[name]["status"] is not None else
                               f"{name} stopped: {results[name]['stopped']}")
                    echo(message) if bar is None else bar.write(message)
                if bar is not None:
                    tally.running = max(tally.running - 1, 0)
                    bar.set_description_str(f"sweep: {tally.text()}", refresh=False)
                    bar.update(1)
            if time.monotonic() - last_poll > 1.0:
                last_poll = time.monotonic()
                tally.running = _running(client, futures, results)
                if bar is not None:
                    bar.set_description_str(f"sweep: {tally.text()}", refresh=True)
            if len(results) < len(futures):
                time.sleep(0.2)
    except BaseException:
        _stop(client, futures, results)
        raise
    finally:
        if bar is not None:
            bar.close()
    return results


def _result(future) -> dict:
    """A finished future's result, or the failure that ended it: status 1
    and its error; status None and why it ``stopped`` for a run the cluster
    dropped (its scheduler lost), which stays resumable."""
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001 - any failure of one run is that run's
        from distributed.client import FutureCancelledError
        from distributed.scheduler import KilledWorker
        if isinstance(error, FutureCancelledError):
            why = ("the scheduler stopped answering" if error.reason ==
                   "scheduler-connection-lost" else f"the cluster cancelled it ({error.reason})")
            return {"status": None, "error": None,
                    "stopped": f"{why}; it goes on (from its checkpoint, if it has one) when "
                               "the sweep is run again"}
        if isinstance(error, KilledWorker):
            return {"status": 1, "error": "its workers died while training it more often "
                    "than the scheduler allows (Dask's allowed failures, 3 unless configured); "
                    "it resumes from its checkpoint when the sweep is run again"}
        return {"status": 1, "error": f"{type(error).__name__}: {error}"}


def _running(client, futures: dict, results: dict) -> int:
    """How many of the runs under way are running: the workers processing
    one (a worker of one thread, as a sweep's are, runs one task at a time;
    the scheduler may have sent it others to run next)."""
    keys = {future.key for future, name in futures.items() if name not in results}
    try:
        processing = client.processing()
    except Exception:  # noqa: BLE001 - the count is for the progress bar only
        return 0
    return sum(bool(keys.intersection(tasks)) for tasks in processing.values())


def _stop(client, futures: dict, results: dict) -> None:
    """Cancel the runs not done and restart the workers running them, so no
    run goes on training unseen (a run stopped so keeps its checkpoint)."""
    keys = {future.key for future, name in futures.items() if name not in results}
    try:
        busy = [worker for worker, tasks in client.processing().items()
                if keys.intersection(tasks)]
        client.cancel(list(futures))
        if busy and not hasattr(client.cluster, "workers"):
            # an existing cluster: only the workers busy with this sweep's runs
            client.restart_workers(busy)
    except Exception:  # noqa: BLE001 - stopping is best effort; a local cluster closes anyway
        pass


def _progress_bar(total: int, initial: int, enabled: bool):
    if not enabled:
        return None
    import sys

    from tqdm import tqdm
    return tqdm(total=total, initial=initial, desc="sweep", unit="run", dynamic_ncols=True,
                mininterval=0.5 if sys.stderr.isatty() else 10.0,
                bar_format="{desc} |{bar}| {n_fmt}/{total_fmt} runs done "
                           "[{elapsed} elapsed, {remaining} left]")


# --------------------------------------------------------------------------
# results: statistics per setting (summary.py's), the best setting
# --------------------------------------------------------------------------

def settle_finished(sweep_dir: str | Path, runs: list) -> int:
    """Bring the files of the sweep's finished runs to the present rules: their
    config's paths relative (``run_paths.settle_run``, for runs written before)
    and their figures' counts beside their predictions (``test-counts.json``);
    the number of runs changed."""
    from .figures import ensure_counts
    from npcomp.training.run_paths import settle_run
    changed = 0
    for run in runs:
        run_dir = run_directory(sweep_dir, run)
        if run_state(run_dir) == "finished":
            changed += settle_run(run_dir, run.options) | ensure_counts(run_dir)
    return changed


def sweep_results(sweep_dir: str | Path, runs: list, outcomes: dict | None = None) -> dict:
    """The record of SWEEP_DIR/sweep.json: per setting, ``summary.summarise``
    over its finished runs (n, mean, std, ci95, median, min, max of every
    test and dev metric), its options and failed runs; ``best``: the setting
    with the highest mean dev selection metric; ``runs``: each run's status
    (finished, failed, unfinished), error and the thread counts its worker
    reported (``outcomes``: name -> the task's result, for the runs run this
    time)."""
    from npcomp.training.run_paths import relative_where
    from .summary import read_runs, summarise
    from npcomp.training.evaluation import selection_metric
    outcomes = outcomes or {}
    sweep_dir = Path(sweep_dir)
    earlier = _earlier_runs(sweep_dir)
    setting_of, run_records = {}, {}
    for run in runs:
        run_dir = run_directory(sweep_dir, run)
        # a run trained by an earlier invocation keeps what its worker reported then
        outcome = outcomes.get(run.name) or {key: value for key, value in
                                             earlier.get(run.name, {}).items()
                                             if key in ("threads", "resumed", "worker")}
        state = run_state(run_dir)
        status = ("finished" if state == "finished" else
                  "failed" if outcome.get("status") not in (None, 0) else "unfinished")
        # relative to the sweep directory, so sweep.json reads the same wherever it is
        record = {"setting": run.setting, "seed": run.seed,
                  "run_dir": run_dir.relative_to(sweep_dir).as_posix(), "status": status}
        if status == "failed":
            record["error"] = outcome.get("error")
        if status == "unfinished" and outcome.get("stopped"):
            record["stopped"] = outcome["stopped"]
        for key in ("threads", "resumed", "worker"):
            if key in outcome:
                record[key] = outcome[key]
        run_records[run.name] = record
        if state == "finished":
            setting_of[str(run_dir)] = run.setting
    finished = read_runs(list(setting_of))
    summaries = {record["setting"]: record for record in
                 (dict(summary, setting=setting_of[summary["runs"][0]],
                       runs=[Path(path).relative_to(sweep_dir).as_posix()
                             for path in summary["runs"]]) for summary in
                  summarise(finished, group_of=lambda metrics: setting_of[metrics["run_dir"]]))}
    settings, best = [], None
    for name in dict.fromkeys(run.setting for run in runs):
        members = [run for run in runs if run.setting == name]
        record = {"setting": name, "options": relative_where(members[0].options),
                  **summaries.get(name, {"seeds": [], "runs": []}),
                  "failed": {run.name: run_records[run.name].get("error") for run in members
                             if run_records[run.name]["status"] == "failed"},
                  "unfinished": [run.name for run in members
                                 if run_records[run.name]["status"] == "unfinished"]}
        record["setting"] = name
        settings.append(record)
        if "task" in record:
            metric = f"dev_{selection_metric(record['task'])}"
            if metric in record and (best is None or record[metric]["mean"] > best["mean"]):
                best = {"setting": name, "metric": metric, "mean": record[metric]["mean"]}
    shown = os.path.relpath(sweep_dir) if sweep_dir.is_absolute() else str(sweep_dir)
    return {"sweep_dir": Path(shown).as_posix(), "runs_planned": len(runs),
            "finished": sum(r["status"] == "finished" for r in run_records.values()),
            "failed": sum(r["status"] == "failed" for r in run_records.values()),
            "unfinished": sum(r["status"] == "unfinished" for r in run_records.values()),
            "best": best, "settings": settings, "runs": run_records}


def _earlier_runs(sweep_dir: Path) -> dict:
    """The ``runs`` of SWEEP_DIR/sweep.json as the last invocation wrote it
    ({} if there is none, or it cannot be read: it is rewritten anyway)."""
    try:
        return RunDirectory(sweep_dir).read_json(RESULTS).get("runs") or {}
    except (RunFileError, AttributeError):
        return {}


def results_table(results: dict) -> str:
    """SWEEP_DIR/sweep.md: the settings as a Markdown table (summary.py's),
    the best setting, and the runs that failed with their errors."""
    from .summary import format_markdown
    lines = [f"# Sweep {results['sweep_dir']}", "",
             f"{results['finished']} of {results['runs_planned']} runs finished, "
             f"{results['failed']} failed, {results['unfinished']} unfinished.", ""]
    shown = [record for record in results["settings"] if "model" in record]
    if shown:
        lines += [format_markdown(shown, names=[record["setting"] for record in shown]), ""]
    if results["best"]:
        best = results["best"]
        lines += [f"Best setting by mean {best['metric'].replace('_', ' ')}: "
                  f"**{best['setting']}** ({best['mean']:.4g}).", ""]
    failed = [(name, record["error"]) for name, record in results["runs"].items()
              if record["status"] == "failed"]
    if failed:
        lines += ["Failed runs:", ""] + [f"- {name}: {error}" for name, error in failed] + [""]
    return "\n".join(lines)


def write_results(sweep_dir: str | Path, results: dict) -> None:
    directory = RunDirectory(sweep_dir)
    directory.write_json(RESULTS, results)
    directory.write_text(TABLE, results_table(results))

