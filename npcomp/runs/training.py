"""``train``: one run as `npcomp train` makes it, from Python: its
configuration built from the model's paper defaults and the options given
(``run_config.build_config``, the one place a configuration is made), a
fresh, replacing or resumed run in its run directory, and its bag-of-words
baseline beside it (``experiments/trained_run.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from npcomp.configuration.options import OPTIONS


@dataclass(frozen=True)
class TrainResult:
    """A finished run: its directory, its metrics record (metrics.json's),
    and its baseline's (None without one)."""

    run_dir: Path
    metrics: dict
    baseline_metrics: dict | None = None

    @property
    def predictions(self) -> Path:
        """The best model's test predictions (RUN_DIR/predictions.jsonl)."""
        from npcomp.runfiles.rundir import PREDICTIONS

        return self.run_dir / PREDICTIONS


def train(
    model: str | None = None,
    task: str | None = None,
    *,
    out=None,
    overwrite: bool = False,
    resume=None,
    quiet: bool = False,
    echo=print,
    **options,
) -> TrainResult:
    """`npcomp train` from Python: ``model`` on ``task`` (None: the bare
    command's) with the training ``options`` (config keys as keywords, as
    ``npcomp.config`` takes them; None: not given; ``threads`` every core
    unless given) into the run directory ``out`` (default
    runs/MODEL-TASK[-OPTIONS]-sSEED, or the first free -2, -3, ... beside
    it).  ``overwrite`` replaces the run ``out`` holds; ``resume`` (a run
    directory) continues a killed run with the options a resumed run may
    take anew.  What `npcomp train` prints goes to ``echo``; ``quiet``: no
    progress bar.  ConfigError names an option at fault, RunDirectoryError
    a run directory that cannot be used, before anything is read."""
    from npcomp.experiments.trained_run import resume_run, train_run
    from npcomp.configuration.options import default_threads

    given = {name: value for name, value in options.items() if value is not None}
    threads = given.pop("threads", None)
    resolved = dict(given, threads=threads if threads is not None else default_threads())
    if resume:
        if out is not None or overwrite:
            from npcomp.errors import ConfigError

            raise ConfigError("resume", "continues the run in its own directory: it takes no --out or --overwrite")
        if model is not None or task is not None:
            resolved.update({key: value for key, value in (("model", model), ("task", task)) if value is not None})
        metrics, baseline = resume_run(resume, resolved, not quiet, echo)
        return TrainResult(Path(resume), metrics, baseline)
    config = train_config(model, task, **resolved)
    named = dict(given, **({"threads": threads} if threads is not None else {}))
    run_dir = (
        Path(out)
        if out
        else default_run_dir(model, task, named)
        if overwrite
        else fresh_run_dir(default_run_dir(model, task, named))
    )
    metrics, baseline = train_run(config, run_dir, set(named), overwrite=overwrite, progress=not quiet, echo=echo)
    return TrainResult(run_dir, metrics, baseline)


def train_config(model: str | None = None, task: str | None = None, **options) -> dict:
    """The configuration `npcomp train` runs for ``model`` on ``task`` with
    the training ``options`` given (``npcomp.config``'s)."""
    from npcomp.configuration.run_config import keyword_config

    return keyword_config(model, task, options)


def default_run_dir(model: str | None, task: str | None, given: dict) -> Path:
    """runs/MODEL-TASK[-OPTION-VALUE...]-sSEED: the options ``given`` that
    change what is trained are in the name, so distinct settings get
    distinct directories; a run on a user's files is named by its training
    file's name in place of the task (runs/treelstm-nary-reviews-s1)."""
    train_file = given.get("train")
    data = Path(train_file).stem if train_file else task or OPTIONS["task"].default
    parts = [model or OPTIONS["model"].default, data]
    for name, value in given.items():
        if name not in OPTIONS or not OPTIONS[name].in_run_name or name == "train":
            continue
        if name == "vectors":
            value = Path(value).name.removesuffix(".gz").removesuffix(".txt").removesuffix(".bin")
        name = name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(name if value else "no-" + name)
        else:
            text = f"{value:g}" if isinstance(value, float) else str(value)
            parts.append(f"{name}{text}".replace("/", "_").replace(" ", ""))
    seed = given.get("seed") or OPTIONS["seed"].default  # seed 0 is named as the default
    return Path("runs") / ("-".join(str(part) for part in parts) + f"-s{seed}")


def fresh_run_dir(run_dir: Path) -> Path:
    """``run_dir``, or where it holds something already, the first of
    ``run_dir-2``, ``run_dir-3``, ... that does not: a run without ``out``
    never meets an earlier one, and `npcomp train` prints the directory it
    takes."""
    candidate, number = run_dir, 1
    while candidate.exists() and (not candidate.is_dir() or any(candidate.iterdir())):
        number += 1
        candidate = run_dir.with_name(f"{run_dir.name}-{number}")
    return candidate


def run_defaults(
    model: str | None = None,
    task: str | None = None,
    train=None,
    protocol: str | None = None,
    supervision: str | None = None,
) -> dict:
    """The default settings of ``model`` for ``task`` (`npcomp train
    --help-defaults`): for a user's training file ``train``, those of the
    kind of file it holds."""
    from npcomp.configuration.defaults import defaults_for

    task = task or OPTIONS["task"].default
    if train is not None:
        from npcomp.configuration.run_config import file_task

        task = file_task(train)
    return defaults_for(model or OPTIONS["model"].default, task, protocol, supervision)
