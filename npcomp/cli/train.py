"""`npcomp train`: its options, read into ``npcomp.runs.train`` (the run's
configuration from the model's paper defaults and the options given, a
fresh, replacing or resumed run, and its bag-of-words baseline)."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

from npcomp.configuration.options import OPTIONS

from ..cells import registry


def add_parser(commands) -> None:
    """The train command's options."""
    model, task = OPTIONS["model"].default, OPTIONS["task"].default
    train = commands.add_parser(
        "train",
        help=f"train a model (default: {model} on the {task} treebank)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a model on a task and write RUN_DIR/{metrics.json,model.npz,\n"
        "log.jsonl}. Every unset option takes the model's paper setting for the task\n"
        "(see --help-defaults).",
        epilog=_models_epilog(),
    )
    add_training_options(train)
    train.add_argument(
        "--out",
        default=None,
        help="run directory (default runs/MODEL-TASK[-OPTIONS]-sSEED, the options "
        "given named in it); one holding a run is refused unless --resume or "
        "--overwrite",
    )
    train.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run in --out: its files are moved to OUT/replaced/ and "
        "deleted once the new run has finished an epoch",
    )
    *others, last = [option.flag for option in OPTIONS.values() if option.resumable]
    resumable = f"{', '.join(others)} and {last}"
    train.add_argument(
        "--resume",
        metavar="RUN_DIR",
        default=None,
        help="continue a killed run from its latest dev evaluation, with the "
        f"settings it was started with; only {resumable} may be given too",
    )
    train.add_argument(
        "--help-defaults", action="store_true", help="print the default settings of --model for --task and exit"
    )
    train.add_argument("--quiet", action="store_true", help="no progress bar")


def add_training_options(parser, leave_out=()) -> None:
    """Every training option of the table (``options.py``) but those in
    ``leave_out``, as `npcomp train` takes them.  None marks an option not
    given (build_config applies the defaults), so --resume and a run's
    default directory name tell the options given from the defaults."""
    for name, option in OPTIONS.items():
        if name in leave_out:
            continue
        help_text = option.help
        if option.cell:
            help_text = f"{option.help}. Models: {_takers(name)}"
        if option.kind is bool:
            on, off = option.flags
            if on:
                parser.add_argument(on, dest=name, action="store_true", default=None, help=help_text)
            parser.add_argument(
                off, dest=name, action="store_false", default=None, help=option.off_help if on else help_text
            )
        else:
            kind = option.kind if option.kind in (int, float) else str
            parser.add_argument(
                option.flag,
                dest=name,
                type=kind,
                default=None,
                choices=option.choices,
                metavar=option.metavar,
                help=help_text,
            )


def _takers(option: str) -> str:
    """The models that take a cell option, each with the values it allows."""
    return "; ".join(
        name
        + (f" ({', '.join(registry.MODELS[name].options[option])})" if registry.MODELS[name].options[option] else "")
        for name in registry.takers(option)
    )


def _models_epilog() -> str:
    """The models, each with its paper."""
    width = max(len(name) for name in registry.MODELS) + 4
    lines = [
        textwrap.fill(entry.paper, 79, initial_indent=f"  {name:<{width - 2}}", subsequent_indent=" " * width)
        for name, entry in registry.MODELS.items()
    ]
    return "models:\n" + "\n".join(lines)


def given_options(args) -> dict:
    """The training options given on the command line (config keys -> values),
    ``threads`` as given (not the cores it defaults to)."""
    given = {name: value for name, value in vars(args).items() if value is not None and name in OPTIONS}
    threads = getattr(args, "threads_given", args.threads)
    given.pop("threads", None)
    if threads is not None:
        given["threads"] = threads
    return given


def default_run_dir(args) -> Path:
    """The run directory `npcomp train` names for ``args`` without --out
    (``runs.training.default_run_dir``)."""
    from npcomp.runs.training import default_run_dir as named

    given = given_options(args)
    return named(given.pop("model", None), given.pop("task", None), given)


def train_config(args) -> dict:
    """The run's config of the options given (``runs.training.train_config``)."""
    from npcomp.runs.training import train_config as config

    given = dict(given_options(args), threads=args.threads)
    return config(given.pop("model", None), given.pop("task", None), **given)


def run(args) -> int:
    from npcomp.runs import training

    given = dict(given_options(args), threads=args.threads)
    model, task = given.pop("model", None), given.pop("task", None)
    if args.help_defaults:
        print(
            json.dumps(
                training.run_defaults(model, task, given.get("train"), given.get("protocol"), given.get("supervision")),
                indent=2,
            )
        )
        return 0
    training.train(model, task, out=args.out, overwrite=args.overwrite, resume=args.resume, quiet=args.quiet, **given)
    return 0
