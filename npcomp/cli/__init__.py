"""The ``npcomp`` command line: one module per command (train, eval, predict,
neighbours, summary, sweep, reproduce, plot, explain, parse, download), each with
``add_parser(commands)``
and ``run(args) -> exit status``.

Heavy modules (numpy, numba) are imported only after the arguments are read,
so ``--threads`` can set the BLAS and numba thread counts before they load.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import examples, gradcheck
from . import download, evaluate, explain, neighbours, parse, plot, predict, reproduce, summary, sweep, train
from npcomp.experiments.failures import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, flag
from npcomp.experiments.failures import failure as _failure

from .train import default_run_dir, given_options, train_config

__all__ = [
    "main",
    "build_parser",
    "flag",
    "run_parsed",
    "outcome",
    "failure",
    "EXIT_OK",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "EXIT_INTERRUPTED",
    "default_run_dir",
    "given_options",
    "train_config",
]

# command name -> its module
COMMANDS = {
    "train": train,
    "eval": evaluate,
    "predict": predict,
    "neighbours": neighbours,
    "parse": parse,
    "summary": summary,
    "sweep": sweep,
    "reproduce": reproduce,
    "plot": plot,
    "explain": explain,
    "download": download,
    "gradcheck": gradcheck,
}


def _argument_name(command: str | None, option: str) -> str:
    """How ``command``'s command line names the config key ``option``: a
    positional argument by its metavar (TABLE), anything else by its flag."""
    if command in COMMANDS:
        commands = argparse.ArgumentParser().add_subparsers()
        COMMANDS[command].add_parser(commands)
        for action in commands.choices[command]._actions:
            if action.dest == option and not action.option_strings:
                return action.metavar or action.dest.upper()
    return flag(option)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command."""
    parser = argparse.ArgumentParser(
        prog="npcomp",
        description="Compositional sentence models with hand-written, "
        "gradient-checked backpropagation (NumPy + numba, CPU).",
        epilog="examples:\n"
        "  npcomp train                      the N-ary Tree-LSTM on the synthetic "
        "treebank\n"
        "  npcomp train --model lstm --task sst5 --data-dir data --seed 1\n"
        '  npcomp explain --model treelstm-nary "(3 (2 not) (3 good))"\n'
        "  npcomp COMMAND --help             a command's options and examples",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from npcomp import __version__

    parser.add_argument("--version", action="version", version=f"npcomp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(commands)
    for name, command in commands.choices.items():  # each command's examples
        if examples.epilog(name) and "examples:" not in (command.epilog or ""):
            command.epilog = "\n\n".join(filter(None, (command.epilog, examples.epilog(name))))
            if command.formatter_class is argparse.HelpFormatter:
                command.formatter_class = _ExamplesFormatter
    return parser


class _ExamplesFormatter(argparse.HelpFormatter):
    """Help as argparse wraps it, the ``examples:`` block kept line by line."""

    def _fill_text(self, text, width, indent):
        before, found, block = text.partition("examples:\n")
        if not found:
            return super()._fill_text(text, width, indent)
        kept = "".join(indent + line for line in (found + block).splitlines(keepends=True))
        return (super()._fill_text(before, width, indent) + "\n\n" if before.strip() else "") + kept


def _set_threads(threads: int | None) -> int:
    """Compute threads (default: every core, ``options.default_threads``).
    npcomp's own threads take the shards of a minibatch (training/shards.py),
    so BLAS and numba are kept to one thread each (set before numpy loads)."""
    from npcomp.configuration.options import default_threads

    if threads is None:
        threads = default_threads()
    variables = ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"]
    # numba reads its own when it loads, and once its threads have started it
    # refuses any other value at the next compilation: where it is loaded
    # already (a sweep's worker, which has pinned it) the variable stays as is
    if "numba" not in sys.modules:
        variables.append("NUMBA_NUM_THREADS")
    for variable in variables:
        os.environ[variable] = "1"
    return threads


def main(argv=None) -> int:
    """Run a command; every failure becomes a one-line message and an exit
    status, never a traceback (set NPCOMP_TRACEBACK=1 to see one)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        status, message = run_parsed(args)
    except KeyboardInterrupt:
        print(
            "\nnpcomp: interrupted; a run is saved as of its latest dev evaluation "
            "(continue it with npcomp train --resume RUN_DIR)",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    if message is not None:
        print(f"npcomp {args.command}: error: {message}", file=sys.stderr)
    return status


def run_parsed(args) -> tuple:
    """Run a parsed command: (exit status, None) or, for a failure, (exit
    status, its one-line message), which ``main`` prints."""
    return outcome(_run, args, argument=lambda option: _argument_name(args.command, option))


def outcome(command, *arguments, argument=flag) -> tuple:
    """(``command(*arguments)``, None), or for a failure (its exit status,
    its one-line message): what `npcomp` prints and exits with; ``argument``
    names a config key as the command's arguments do (its flag)."""
    try:
        return command(*arguments), None
    except BrokenPipeError as error:
        if not _output_closed():  # another pipe broke: a failure like any other
            return _failure(error, argument)
        # the reader of the output went away (`npcomp predict ... | head`): stop quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed pipe
        return EXIT_OK, None
    except Exception as error:  # noqa: BLE001 - the command line's last word on any failure
        if os.environ.get("NPCOMP_TRACEBACK"):
            raise
        return _failure(error, argument)


def _output_closed() -> bool:
    """Whether standard output is a pipe its reader has closed (poll says
    so on Linux and macOS); True where that cannot be asked."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no descriptor, or no poll
        return True


def _run(args) -> int:
    from npcomp.configuration.checks import check_value

    check_value("threads", getattr(args, "threads", None))  # before numpy loads
    if hasattr(args, "threads"):
        args.threads_given = args.threads
        args.threads = _set_threads(args.threads)
    return COMMANDS[args.command].run(args)


def failure(error: Exception, command: str | None = None) -> tuple:
    """(exit status, message) for a failure of ``command``."""
    return _failure(error, lambda option: _argument_name(command, option))
