"""A failure as `npcomp` reports it: an exit status and a one-line message
naming the option (by its flag), the file and line, or the run directory at
fault.  The command line prints it; a sweep's Dask task records it for each
run that fails, as `npcomp train` would have printed it."""

from __future__ import annotations

# exit statuses (docs/exit-statuses.md)
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def flag(option: str) -> str:
    """The command-line flag of a config key (a training option's as the
    option table declares it, a switch's flags both)."""
    from npcomp.configuration.options import OPTIONS

    return OPTIONS[option].flag if option in OPTIONS else "--" + option.replace("_", "-")


def failure(error: Exception, argument=flag) -> tuple:
    """(exit status, message) for a failure; ``argument(option)`` names the
    config key of a ConfigError as the command's arguments do."""
    from npcomp.data.downloads.download import DownloadError
    from npcomp.errors import ConfigError, DataError, for_command_line
    from npcomp.experiments.sweep_spec import SpecError
    from npcomp.configuration.options import OptionFormError
    from npcomp.runfiles.rundir import RunDirectoryError, RunFileError
    from npcomp.training.step import TrainingStopped

    if isinstance(error, ConfigError):
        return EXIT_USAGE, (f"{argument(error.option)}: {for_command_line(error.reason, flag)}")
    # bad input, named by file and line (or by the option given in a wrong form)
    if isinstance(error, DataError):
        return EXIT_USAGE, error.message(flag)
    if isinstance(error, (SpecError, OptionFormError)):
        return EXIT_USAGE, str(error)
    if isinstance(error, RunDirectoryError) and error.ways_on:
        flags = {"resume": f"--resume {error.path}", "run_dir": "another --out", "overwrite": "--overwrite"}
        return EXIT_FAILED, (f"{error.reason} Ways on: {', '.join(flags[way] for way in error.ways_on)}.")
    if isinstance(error, (DownloadError, RunDirectoryError, RunFileError, TrainingStopped, ValueError, ImportError)):
        return EXIT_FAILED, str(error)
    if isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        return EXIT_FAILED, f"{where}{error.strerror or error}"
    if isinstance(error, MemoryError):
        return EXIT_FAILED, "out of memory (a smaller --batch-size or --eval-batch-size helps)"
    return EXIT_FAILED, (
        f"internal error, {type(error).__name__}: {error} (please report it; NPCOMP_TRACEBACK=1 shows where)"
    )
