"""`npcomp train`: the run's configuration from the model's paper defaults
and the options given, a fresh, replacing or resumed run, and its
bag-of-words baseline."""
from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

from ..cells import registry
from npcomp.configuration.options import OPTIONS
from npcomp.data.datasets import PAIR_TASKS


def add_parser(commands) -> None:
    """The train command's options."""
    model, task = OPTIONS["model"].default, OPTIONS["task"].default
    train = commands.add_parser(
        "train", help=f"train a model (default: {model} on the {task} treebank)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a model on a task and write RUN_DIR/{metrics.json,model.npz,\n"
        "log.jsonl}. Every unset option takes the model's paper setting for the task\n"
        "(see --help-defaults).", epilog=_models_epilog())
    add_training_options(train)
    train.add_argument("--out", default=None,
                       help="run directory (default runs/MODEL-TASK[-OPTIONS]-sSEED, the options "
                       "given named in it); one holding a run is refused unless --resume or "
                       "--overwrite")
    train.add_argument("--overwrite", action="store_true",
                       help="replace the run in --out: its files are moved to OUT/replaced/ and "
                       "deleted once the new run has finished an epoch")
    *others, last = [option.flag for option in OPTIONS.values() if option.resumable]
    resumable = f"{', '.join(others)} and {last}"
    train.add_argument("--resume", metavar="RUN_DIR", default=None,
                       help="continue a killed run from its latest dev evaluation, with the "
                       f"settings it was started with; only {resumable} may be given too")
    train.add_argument("--help-defaults", action="store_true",
                       help="print the default settings of --model for --task and exit")
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
                parser.add_argument(on, dest=name, action="store_true", default=None,
                                    help=help_text)
            parser.add_argument(off, dest=name, action="store_false", default=None,
                                help=option.off_help if on else help_text)
        else:
            kind = option.kind if option.kind in (int, float) else str
            parser.add_argument(option.flag, dest=name, type=kind, default=None,
                                choices=option.choices, metavar=option.metavar, help=help_text)


def _takers(option: str) -> str:
    """The models that take a cell option, each with the values it allows."""
    return "; ".join(
        name + (f" ({', '.join(registry.MODELS[name].options[option])})"
                if registry.MODELS[name].options[option] else "")
        for name in registry.takers(option))


def _models_epilog() -> str:
    """The models, each with its paper."""
    width = max(len(name) for name in registry.MODELS) + 4
    lines = [textwrap.fill(entry.paper, 79, initial_indent=f"  {name:<{width - 2}}",
                           subsequent_indent=" " * width)
             for name, entry in registry.MODELS.items()]
    return "models:\n" + "\n".join(lines)


def given_options(args) -> dict:
    """The training options given on the command line (config keys -> values),
    ``threads`` as given (not the cores it defaults to)."""
    given = {name: value for name, value in vars(args).items()
             if value is not None and name in OPTIONS}
    threads = getattr(args, "threads_given", args.threads)
    given.pop("threads", None)
    if threads is not None:
        given["threads"] = threads
    return given


def default_run_dir(args) -> Path:
    """runs/MODEL-TASK[-OPTION-VALUE...]-sSEED: the options given that change
    what is trained are in the name, so distinct settings get distinct
    directories; a run on a user's files is named by its training file's
    name in place of the task (runs/treelstm-nary-reviews-s1)."""
    train = getattr(args, "train", None)
    data = Path(train).stem if train else args.task or OPTIONS["task"].default
    parts = [args.model or OPTIONS["model"].default, data]
    for name, value in given_options(args).items():
        if not OPTIONS[name].in_run_name or name == "train":
            continue
        if name == "vectors":
            value = Path(value).name.removesuffix(".gz").removesuffix(".txt").removesuffix(".bin")
        name = name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(name if value else "no-" + name)
        else:
            text = f"{value:g}" if isinstance(value, float) else str(value)
            parts.append(f"{name}{text}".replace("/", "_").replace(" ", ""))
    seed = args.seed or OPTIONS["seed"].default   # seed 0 is named as the default
    return Path("runs") / ("-".join(str(part) for part in parts) + f"-s{seed}")


def fresh_run_dir(run_dir: Path) -> Path:
    """``run_dir``, or where it holds something already, the first of
    ``run_dir-2``, ``run_dir-3``, ... that does not: a run without --out never
    meets an earlier one, and `npcomp train` prints the directory it takes."""
    candidate, number = run_dir, 1
    while candidate.exists() and (not candidate.is_dir() or any(candidate.iterdir())):
        number += 1
        candidate = run_dir.with_name(f"{run_dir.name}-{number}")
    return candidate


def train_config(args) -> dict:
    """The run's config (``run_config.build_config``) of the options given."""
    from npcomp.configuration.run_config import build_config
    return build_config(args.model, args.task, dict(given_options(args), threads=args.threads))


def run(args) -> int:
    from npcomp.configuration.defaults import defaults_for
    if args.help_defaults:
        task = args.task or OPTIONS["task"].default
        if args.train is not None:   # the defaults of the kind of file it holds
            from npcomp.configuration.run_config import file_task
            task = file_task(args.train)
        print(json.dumps(defaults_for(args.model or OPTIONS["model"].default, task,
                                      args.protocol, args.supervision), indent=2))
        return 0
    progress = not args.quiet
    if args.resume:
        if args.out is not None or args.overwrite:
            from npcomp.errors import ConfigError
            raise ConfigError("resume", "continues the run in its own directory: it takes "
                                        "no --out or --overwrite")
        return resume_run(args.resume, dict(given_options(args), threads=args.threads),
                          progress)
    config = train_config(args)
    run_dir = (Path(args.out) if args.out else default_run_dir(args) if args.overwrite
               else fresh_run_dir(default_run_dir(args)))
    return train_run(config, run_dir, set(given_options(args)), overwrite=args.overwrite,
                     progress=progress)


def train_run(config: dict, run_dir: Path, given: set, overwrite: bool = False,
              progress: bool = True) -> int:
    """Train ``config`` into ``run_dir`` as `npcomp train` does, printing what
    it prints, with its baseline when the config asks for one (``given``: the
    options set, which the baseline shares)."""
    from npcomp.runfiles.rundir import RunDirectory
    from npcomp.training.trainer import train
    RunDirectory(run_dir).check_usable(overwrite)   # refused before it is announced
    print(f"training {config['model']} on {_data_named(config)} -> {run_dir}")
    metrics = train(config, run_dir, overwrite=overwrite, progress=progress)
    _print_result(metrics)
    return _baseline_beside(config, run_dir, metrics, given, overwrite, progress)


def resume_run(run_dir, options: dict, progress: bool = True) -> int:
    """Continue the run in ``run_dir`` as `npcomp train --resume` does, with
    the ``options`` given (those a resumed run may take anew), and its baseline."""
    from npcomp.experiments.baseline import shared_options_set
    from npcomp.configuration.run_config import resume_changes
    from npcomp.training.trainer import train
    metrics = train(resume_changes(options), run_dir, resume=True, progress=progress)
    _print_result(metrics)
    return _baseline_beside(metrics["config"], run_dir, metrics,
                            shared_options_set(metrics["config"]), progress=progress)


def _baseline_beside(config: dict, run_dir, metrics: dict, given: set,
                     overwrite: bool = False, progress: bool = True) -> int:
    """The bag-of-words baseline beside a run that asks for one, and the two compared."""
    from npcomp.experiments.baseline import train_baseline
    if config.get("baseline") and config["model"] != registry.baseline_model():
        base_metrics = train_baseline(config, run_dir, given, overwrite=overwrite,
                                      progress=progress)
        _print_comparison(metrics, base_metrics)
    return 0


def _print_result(metrics: dict) -> None:
    from npcomp.training.evaluation import format_metrics
    unit = "pairs" if metrics["task"] in PAIR_TASKS else "sentences"
    # a fractional epoch when the best dev evaluation fell inside an epoch
    best = metrics.get("best_at") or metrics["best_epoch"]
    test = (format_metrics(metrics["test"]) if metrics["test"] is not None else
            "none (no test split: --test FILE)")
    print(f"{metrics['model']} on {_data_named(metrics['config'])}: best epoch {best:g}, "
          f"dev {format_metrics(metrics['dev'])}; test {test}; "
          f"{metrics['train_sentences_per_s']:.0f} {unit}/s")


def _data_named(config: dict) -> str:
    """The task, or a user's training file (and the fold it holds out)."""
    if not config.get("train"):
        return config["task"]
    fold = (f", fold {config['fold']} of {config['folds']}" if config.get("folds") is not None
            else "")
    return f"{config['train']}{fold}"


def _print_comparison(tree_metrics: dict, bag_metrics: dict) -> None:
    if tree_metrics["test"] is None or "root_acc" not in tree_metrics["test"]:
        return   # no test split, or sentence pairs: the two runs' lines say it
    print()
    print(f"{'test set':<28}{'root acc':>10}{'all-node acc':>14}")
    for label, metrics in ((tree_metrics["model"] + " (tree)", tree_metrics),
                           (f"{registry.baseline_model()} (bag of words)", bag_metrics)):
        print(f"{label:<28}{metrics['test']['root_acc']:>10.2f}{metrics['test']['all_acc']:>14.2f}")
