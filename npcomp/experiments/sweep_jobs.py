"""The runs of a sweep as its Dask tasks take them: each run's options (its
own over the sweep's base, paths made absolute for a worker started
elsewhere), its configuration built by ``run_config.build_config`` (so a bad
option is refused, naming the setting and the SPEC line, before anything
trains), and the arguments of ``sweep_task.train_in_worker`` for each run
not finished."""

from __future__ import annotations

from pathlib import Path

from npcomp.configuration.options import OPTIONS, form

# train options a sweep sets for each run itself, and why
SET_BY_THE_SWEEP = {
    "out": "each run's directory is SWEEP_DIR/runs/SETTING-sSEED (--out is SWEEP_DIR)",
    "seed": "the seeds are given by seeds (--seeds)",
    "resume": "a sweep resumes its unfinished runs by itself when run again",
    "overwrite": "a sweep never replaces a run it finished",
    "threads": "each run's threads are --threads-per-run",
    "quiet": "runs print to SWEEP_DIR/logs/",
    "help_defaults": "it is not a training option",
}


def check_forms(options: dict, where) -> None:
    """SpecError unless every option of ``options`` (config key -> value) is a
    training option in the form it takes and not one the sweep sets itself;
    ``where(option)`` names the place an option was given."""
    from npcomp.configuration.options import OptionFormError

    for option, value in options.items():
        if option in SET_BY_THE_SWEEP:
            raise _refused(where(option), f"{option} is set by the sweep: {SET_BY_THE_SWEEP[option]}")
        try:
            form(option, value)
        except OptionFormError as error:
            raise _refused(where(option), str(error)) from None


def run_options(run, threads: int, pinned: dict | None = None) -> dict:
    """A fresh run's options as `npcomp train` takes them: its own (paths made
    absolute) over the ``pinned`` options every run of the sweep takes
    without its plan recording them (``runs.sweeps.run_sweep``), its seed, the fold it
    holds out when cross-validating, and its threads."""
    fold = {} if run.fold is None else {"fold": run.fold}
    return dict(pinned or {}, **absolute_paths(run.options), seed=run.seed, **fold, threads=threads)


def options_as_given(run, threads: int, pinned: dict | None = None) -> dict:
    """``run_options`` with the paths as given (relative to this directory),
    to check a run's data here before any worker trains it."""
    fold = {} if run.fold is None else {"fold": run.fold}
    return dict(pinned or {}, **run.options, seed=run.seed, **fold, threads=threads)


def config_of(options: dict) -> dict:
    """The configuration of a run given ``options`` (``run_options``; model and
    task among them), as ``run_config.build_config`` builds it."""
    from npcomp.configuration.checks import read
    from npcomp.configuration.run_config import build_config

    options = dict(options)
    model, task = (read(name, options.pop(name, None)) for name in ("model", "task"))
    return build_config(model, task, options)


def resumed_options(run, threads: int) -> dict:
    """The options a resumed run takes anew (the table's resumable ones, paths
    made absolute) and its threads."""
    return dict(
        {key: value for key, value in absolute_paths(run.options).items() if OPTIONS[key].resumable}, threads=threads
    )


def absolute_paths(options: dict) -> dict:
    """``options`` with the paths relative to this directory made absolute,
    as a worker started elsewhere must read them: the data directory (this
    process's default when not given: $NPCOMP_DATA, else ./data), the parses,
    and a vector file found here (a bare name is looked up in the data
    directory's vectors/)."""
    from npcomp.data.datasets.tasks import default_data_dir

    options = dict(options)
    data_dir = options.get("data_dir")
    options["data_dir"] = str(Path(data_dir if data_dir is not None else default_data_dir()).resolve())
    for key in ("parses_dir", "train", "dev", "test"):  # the parses, a user's files
        if options.get(key) is not None:
            options[key] = str(Path(options[key]).resolve())
    vectors = options.get("vectors")
    if isinstance(vectors, str) and vectors != "random" and Path(vectors).is_file():
        options["vectors"] = str(Path(vectors).resolve())
    return options


def _refused(where: str, message: str):
    from .sweep_spec import SpecError

    return SpecError(f"{where}: {message}")


def check_settings(spec, runs: list, threads: int, pinned: dict | None = None) -> None:
    """Every option of every run in the form it takes, and every setting
    built into its run configuration (``config_of``, with the ``pinned``
    options): a bad option raises
    SpecError naming the setting and where it was given; a missing file
    (vectors) is named likewise."""
    from npcomp.errors import ConfigError
    from npcomp.training.run_data import check_run_data

    from .failures import failure
    from .sweep_plan import settings_of
    from .sweep_spec import SpecError

    sources = {name: sources for name, (_, sources) in settings_of(spec).items()}
    checked = set()
    for run in runs:
        setting_sources = sources.get(run.setting, {})

        def where(option, setting_sources=setting_sources):
            return spec.where(setting_sources.get(option, "base"), option)

        check_forms(run.options, where)
        if run.setting in checked:
            continue
        checked.add(run.setting)
        try:
            # a user's files read and checked against the model, as the runs will,
            # here at the paths as given, so that a message names a file as given
            check_run_data(config_of(options_as_given(run, threads, pinned)))
            continue
        except ConfigError as error:
            option, message = error.option, failure(error)[1]
        except (ValueError, OSError) as error:
            option = "vectors" if _about_vectors(error, run.options) else None
            message = failure(error)[1]
        place = where(option) if option in run.options else spec.where("base")
        raise SpecError(f"setting {run.setting} ({place}): {message}")


def _about_vectors(error: Exception, options: dict) -> bool:
    """Whether ``error`` is about the vector file of a run's ``options``."""
    vectors = options.get("vectors")
    path = getattr(error, "path", None) or getattr(error, "filename", None)
    return "--vectors" in str(error) or (
        isinstance(vectors, str) and path is not None and Path(str(path)).resolve() == Path(vectors).resolve()
    )


def sweep_jobs(runs: list, sweep_dir: Path, threads: int, pinned: dict) -> tuple:
    """The task arguments of train_in_worker for each run not finished (run
    name -> tuple; ``pinned``: as ``run_options``), and how many runs are in
    each state (run_state)."""
    from .sweep_plan import PLAN, log_path, run_directory, run_state

    jobs, states = {}, {}
    for run in runs:
        run_dir = run_directory(sweep_dir, run)
        state = run_state(run_dir)
        states[state] = states.get(state, 0) + 1
        if state == "finished":
            continue
        # a run planned by an earlier SPEC (--extend) was checked then; one
        # whose options cannot be passed on is named by the plan
        check_forms(run.options, lambda option: str(sweep_dir / PLAN))
        # absolute: a worker of an existing cluster runs in a directory of its own
        jobs[run.name] = (
            run_options(run, threads, pinned),
            resumed_options(run, threads),
            str(run_dir.resolve()),
            str(log_path(sweep_dir, run).resolve()),
        )
    return jobs, states
