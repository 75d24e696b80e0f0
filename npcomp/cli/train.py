"""`npcomp train`: the run's configuration from the model's paper defaults
and the options given, a fresh, replacing or resumed run, and its
bag-of-words baseline."""
from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

from ..cells.registry import MODELS as REGISTRY, OPTIONS as CELL_OPTIONS, takers

MODELS = tuple(REGISTRY)

TASKS = ("sst5", "sst2", "synthetic", "sick")


# option name -> (type, help, choices); defaults come from npcomp.defaults per model and task
TRAIN_OPTIONS = {
    "dim": (int, "hidden (memory) dimension d (models whose leaves are the word vectors: "
                  "the embedding dimension)", None),
    "embedding_dim": (int, "word vector dimension when vectors are random", None),
    "epochs": (int, "training epochs", None),
    "evals_per_epoch": (int, "dev evaluations per epoch, evenly spaced over its minibatches "
                             "(the last at its end); the best-dev checkpoint is chosen among "
                             "all of them (default 1)", None),
    "batch_size": (int, "sentences per minibatch", None),
    "optimizer": (str, "optimiser", ("adagrad", "adadelta", "sgd")),
    "lr": (float, "learning rate of the composition and classifier weights", None),
    "emb_lr": (float, "learning rate of the word embeddings", None),
    "epsilon": (float, "the optimiser's epsilon (AdaGrad default 1e-10, Adadelta 1e-6)", None),
    "adagrad_reset": (int, "reset the optimiser's state every N epochs (Socher et al.'s RNTN "
                           "code: 1; default 0, never)", None),
    "emb_optimizer": (str, "rule for the word embeddings: the optimiser's (same) or plain "
                           "SGD (sgd, Tai et al.'s released code)", ("same", "sgd")),
    "l2": (float, "L2 strength lambda: J += lambda/2 ||theta||^2 per minibatch "
                  "(embeddings not regularised)", None),
    "dropout": (float, "dropout rate on the classifier input", None),
    "embedding_dropout": (float, "dropout rate on the word vectors entering the cell, one "
                                 "mask per sentence", None),
    "recurrent_dropout": (str, "sequence models: dropout rate on the state entering each "
                               "recurrence, one mask per sentence (Gal); a comma list gives "
                               "one rate per recurrent layer, the last repeating "
                               "(lstm-recurrent-attn: LSTM,transfer layer)", None),
    "head": (str, "output layer: softmax, or ordinal regression (Irsoy & Cardie Sec. 4.2)",
             ("softmax", "ordinal")),
    "supervision": (str, "labelled nodes trained on (spans: every labelled phrase as a "
                         "sequence of its own, with --structure chain)",
                    ("all", "root", "root+leaves", "spans")),
    "span_samples": (int, "with --supervision spans: train each epoch on every sentence "
                          "and N of its phrases drawn at random (Tai et al.'s released code: "
                          "4) instead of on every labelled phrase (default 0: every phrase)",
                     None),
    "structure": (str, "tree structure (left/right: re-bracketed; chain: the sentence as a "
                       "sequence, for the sequence models; dependency: SICK's *.parents or the "
                       "SST parses of `npcomp parse`; parsed: the SST as the binary trees of "
                       "those parses, best made with `npcomp parse --copula-head copula`; "
                       "constituency: SICK's *.cparents)",
                  ("gold", "left", "right", "chain", "dependency", "parsed", "constituency")),
    "neutral": (str, "sst2: the training sentences' neutral phrases left unlabelled, or "
                     "trained on as a third class that is never predicted (train: Tai et "
                     "al.'s released code)", ("unlabelled", "train")),
    "parses_dir": (str, "sst with --structure dependency: the directory of `npcomp parse`'s "
                        "{train,dev,test}.parents (default DATA_DIR/sst)", None),
    "similarity_dim": (int, "sick: units of the similarity head's hidden layer (Tai: 50)",
                       None),
    "average": (str, "loss average per minibatch: sentences (Tai) or labelled nodes",
                ("sentences", "nodes")),
    "oov": (str, "distribution of random embedding rows", ("uniform", "normal", "zero")),
    "oov_scale": (float, "scale of random embedding rows", None),
    "dtype": (str, "floating-point type of training", ("float32", "float64")),
    "eval_batch_size": (int, "sentences per forest when evaluating", None),
}



def add_parser(commands) -> None:
    """The train command's options."""
    train = commands.add_parser(
        "train", help="train a model (default: treelstm-nary on the synthetic treebank)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a model on a task and write RUN_DIR/{metrics.json,model.npz,\n"
        "log.jsonl}. Every unset option takes the model's paper setting for the task\n"
        "(see --help-defaults).", epilog=_models_epilog())
    # None marks an option not given (the defaults are applied in _train_config), so
    # --resume can tell the options given from the defaults
    train.add_argument("--model", default=None, choices=MODELS, metavar="MODEL",
                       help="the model (default treelstm-nary; the list below)")
    train.add_argument("--task", default=None, choices=TASKS, help="the task (default synthetic)")
    train.add_argument("--data-dir", default=None,
                       help="data directory (default $NPCOMP_DATA, else ./data)")
    train.add_argument("--out", default=None,
                       help="run directory (default runs/MODEL-TASK[-OPTIONS]-sSEED, the options "
                       "given named in it); one holding a run is refused unless --resume or "
                       "--overwrite")
    train.add_argument("--overwrite", action="store_true",
                       help="replace the run in --out: its files are moved to OUT/replaced/ and "
                       "deleted once the new run has finished an epoch")
    train.add_argument("--seed", type=int, default=None, help="random seed (default 1)")
    train.add_argument("--protocol", default=None,
                       help="whose setting the defaults follow: 'paper' (the model's paper's "
                       "printed setting), 'tuned' (chosen on SST dev where the printed one "
                       "falls far below it here: slstm with root or root+leaf labels, "
                       "lstm-global-attn and lstm-recurrent-attn; the default wherever it "
                       "exists, see --help-defaults), or another paper's: lstm and bilstm take "
                       "'nayebi' (root labels only, Nayebi & Blundell Sec. 4.1) instead of Tai "
                       "et al.'s")
    train.add_argument("--vectors", default=None,
                       help="pretrained vectors: GloVe text, word2vec text or binary, a path or a "
                       "file name in DATA_DIR/vectors (sick: "
                       "default GloVe 840B 300d from DATA_DIR/vectors, as Tai et al.; "
                       "'random' for random vectors)")
    train.add_argument("--fixed-embeddings", action="store_true", default=None,
                       help="keep the word vectors fixed (default: tuned, but fixed on sick "
                       "and for rnn/mrnn as their papers)")
    train.add_argument("--tuned-embeddings", dest="fixed_embeddings", action="store_false",
                       help="update the word vectors during training")
    for name, (kind, text, choices) in TRAIN_OPTIONS.items():
        train.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, default=None,
                           choices=choices, help=text)
    _add_cell_options(train)
    train.add_argument("--threads", type=int, default=None,
                       help="compute threads: with two or more, a helper thread overlaps "
                       "independent products of the backward pass and evaluates every other "
                       "forest; BLAS and numba run one thread each (default: all cores)")
    train.add_argument("--resume", metavar="RUN_DIR", default=None,
                       help="continue a killed run from its latest dev evaluation, with the "
                       "settings it was started with; only --epochs (more), --threads, "
                       "--data-dir, --eval-batch-size and --no-train-eval may be given too")
    train.add_argument("--baseline", dest="baseline", action="store_true", default=None,
                       help="also train the bag-of-words baseline (default on for synthetic)")
    train.add_argument("--no-baseline", dest="baseline", action="store_false")
    train.add_argument("--help-defaults", action="store_true",
                       help="print the default settings of --model for --task and exit")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.add_argument("--no-train-eval", dest="train_eval", action="store_false",
                       default=None, help="skip the per-epoch accuracy on the training "
                       "sentences (the learning curve in metrics.json)")


# a boolean cell option's flag that turns it off (default --no-NAME)
NEGATIVE_FLAGS = {"untied": "--tied"}


def _add_cell_options(train) -> None:
    """The cells' options (cells/registry.py), each with the models that take
    it and the values each allows."""
    for name, option in CELL_OPTIONS.items():
        if not option.command_line:
            continue
        flag = "--" + name.replace("_", "-")
        models = "; ".join(
            name_ + (f" ({', '.join(REGISTRY[name_].options[name])})"
                     if REGISTRY[name_].options[name] else "")
            for name_ in takers(name))
        text = f"{option.help}. Models: {models}"
        if option.kind is bool:
            negative = NEGATIVE_FLAGS.get(name, "--no-" + name.replace("_", "-"))
            train.add_argument(flag, dest=name, action="store_true", default=None, help=text)
            train.add_argument(negative, dest=name, action="store_false",
                               help=f"the opposite of {flag}")
        else:
            train.add_argument(flag, dest=name, type=option.kind, default=None,
                               choices=option.choices, help=text)


def _models_epilog() -> str:
    """The models, each with its paper."""
    width = max(len(name) for name in REGISTRY) + 4
    lines = [textwrap.fill(entry.paper, 79, initial_indent=f"  {name:<{width - 2}}",
                           subsequent_indent=" " * width)
             for name, entry in REGISTRY.items()]
    return "models:\n" + "\n".join(lines)


# train options given that say where and how a run runs, not what it trains
_NOT_IN_RUN_NAME = ("model", "task", "seed", "data_dir", "threads", "baseline", "train_eval",
                    "eval_batch_size")



def given_options(args) -> dict:
    """The train options given on the command line (config keys -> values)."""
    given = {name: value for name, value in vars(args).items()
             if value is not None and name not in ("command", "threads", "threads_given",
                                                  "quiet", "resume", "out", "overwrite",
                                                  "help_defaults")}
    threads = getattr(args, "threads_given", args.threads)
    if threads is not None:
        given["threads"] = threads
    return given


def default_run_dir(args) -> Path:
    """runs/MODEL-TASK[-OPTION-VALUE...]-sSEED: the options given that change
    what is trained are in the name, so distinct settings get distinct directories."""
    parts = [args.model or "treelstm-nary", args.task or "synthetic"]
    for name, value in given_options(args).items():
        if name in _NOT_IN_RUN_NAME:
            continue
        if name == "vectors":
            value = Path(value).name.removesuffix(".gz").removesuffix(".txt").removesuffix(".bin")
        name = name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(name if value else "no-" + name)
        else:
            text = f"{value:g}" if isinstance(value, float) else str(value)
            parts.append(f"{name}{text}".replace("/", "_").replace(" ", ""))
    return Path("runs") / ("-".join(str(part) for part in parts) + f"-s{args.seed or 1}")


def train_config(args) -> dict:
    """The run's config: the model's paper defaults for the task, the options given."""
    from ..configuration import ConfigError, check, check_value
    from ..defaults import defaults_for, dim_follows_embedding, matrix_embedding_dim
    model, task = args.model or "treelstm-nary", args.task or "synthetic"
    config = defaults_for(model, task, args.protocol, args.supervision)
    config.pop("source")
    for name in TRAIN_OPTIONS:
        value = getattr(args, name)
        if value is not None:
            if name == "recurrent_dropout":
                value = _rates(value)
            check_value(name, value)
            config[name] = value
    for name, option in CELL_OPTIONS.items():
        if option.command_line and getattr(args, name) is not None:
            config[name] = getattr(args, name)
    vectors = args.vectors
    if vectors == "random":
        vectors = None
    elif vectors is None and config.get("vectors_name"):
        vectors = str(_default_vectors(args.data_dir, config["vectors_name"]))
    elif vectors is not None:
        vectors = str(_vectors_file(args.data_dir, vectors))
    config.pop("vectors_name", None)
    if args.fixed_embeddings is not None:
        config["fixed_embeddings"] = args.fixed_embeddings
    config.update(model=model, task=task, seed=1 if args.seed is None else args.seed,
                  vectors=vectors, data_dir=args.data_dir, threads=args.threads,
                  train_eval=args.train_eval is not False,
                  baseline=args.baseline if args.baseline is not None else task == "synthetic")
    if task == "sick":
        for option in ("head", "supervision"):
            if getattr(args, option) is not None:
                raise ConfigError(option, "does not apply to sick: a pair is scored by the "
                                          "similarity head at the two sentences' roots")
    if dim_follows_embedding(config):
        # the leaves' states are the word vectors: one dimension for both
        if args.dim is not None and args.embedding_dim is None:
            config["embedding_dim"] = args.dim
        config["dim"] = config["embedding_dim"]
    if matrix_embedding_dim(config) is not None:
        if args.vectors:
            raise ConfigError("vectors", "matrix-space learns a matrix per word: it takes no "
                                         "word vectors")
        config["embedding_dim"] = matrix_embedding_dim(config)
    if vectors is not None:
        _take_vector_dimension(config, args)
    check(config)
    return config


def _take_vector_dimension(config: dict, args) -> None:
    """Pretrained vectors fix the embedding dimension (and the state
    dimension of a model whose leaves are the word vectors): a different
    one given is refused, naming its flag."""
    from ..configuration import ConfigError
    from ..defaults import dim_follows_embedding
    from ..embeddings import vector_dimension
    dim = vector_dimension(config["vectors"])
    follows = dim_follows_embedding(config)
    for option in ("embedding_dim", "dim") if follows else ("embedding_dim",):
        given, name = getattr(args, option), "--" + option.replace("_", "-")
        if given is not None and given != dim:
            because = (f"{config['model']}'s leaf states are the word vectors, so its "
                       "dimension is theirs" if option == "dim" else "they set it")
            raise ConfigError(option, f"{given}, but the vectors {config['vectors']} have "
                                      f"dimension {dim} ({because}): leave {name} out, "
                                      f"or give vectors of dimension {given}")
    config["embedding_dim"] = dim
    if follows:
        config["dim"] = dim


def _vectors_directory(data_dir) -> Path:
    """DATA_DIR/vectors, where `npcomp download` puts vector files."""
    from ..tasks import default_data_dir
    return (Path(data_dir) if data_dir else default_data_dir()) / "vectors"


def _vectors_file(data_dir, name: str) -> Path:
    """``name`` if it is a file, else DATA_DIR/vectors/``name``, so the commands
    of docs/RESULTS.md run from any directory."""
    path = Path(name)
    if path.is_file():
        return path
    in_data_dir = _vectors_directory(data_dir) / name
    if in_data_dir.is_file():
        return in_data_dir
    from ..configuration import ConfigError
    raise ConfigError("vectors", f"{name}: no such file, here or as {in_data_dir}")


def _default_vectors(data_dir, name: str) -> Path:
    """The first of the task's default vector files found in DATA_DIR/vectors."""
    from ..defaults import SICK_VECTOR_FILES
    directory = _vectors_directory(data_dir)
    for file_name in SICK_VECTOR_FILES:
        if (directory / file_name).is_file():
            return directory / file_name
    from ..configuration import ConfigError
    raise ConfigError("vectors", f"sick trains on fixed {name} vectors (Tai et al.), but none of "
                     f"{', '.join(str(directory / f) for f in SICK_VECTOR_FILES)} exists: run "
                     f"`npcomp download glove`, pass --vectors FILE, or --vectors random")


def _rates(text: str) -> list:
    """``0.25,0.3`` -> [0.25, 0.3] (checked by configuration.check_value)."""
    from ..configuration import ConfigError
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise ConfigError("recurrent_dropout", f"takes rates separated by commas, not "
                                               f"{text!r}") from None


def _resume_changes(args) -> dict:
    """The options given with --resume, as config values, to be checked
    against the run's own (trainer.resumed_config)."""
    changes = given_options(args)
    changes["threads"] = args.threads
    if "recurrent_dropout" in changes:
        changes["recurrent_dropout"] = _rates(changes["recurrent_dropout"])
    if changes.get("vectors") not in (None, "random"):
        changes["vectors"] = str(_vectors_file(args.data_dir, changes["vectors"]))
    return changes


def run(args) -> int:
    from ..defaults import defaults_for
    if args.help_defaults:
        print(json.dumps(defaults_for(args.model or "treelstm-nary", args.task or "synthetic",
                                      args.protocol, args.supervision), indent=2))
        return 0
    from ..baseline import shared_options_set, train_baseline
    from ..trainer import train
    progress = not args.quiet
    if args.resume:
        if args.out is not None or args.overwrite:
            from ..configuration import ConfigError
            raise ConfigError("resume", "continues the run in its own directory: it takes "
                                        "no --out or --overwrite")
        metrics = train(_resume_changes(args), args.resume, resume=True, progress=progress)
        _print_result(metrics)
        run_dir, config = Path(args.resume), metrics["config"]
    else:
        config = train_config(args)
        run_dir = Path(args.out) if args.out else default_run_dir(args)
        from ..rundir import RunDirectory
        RunDirectory(run_dir).check_usable(args.overwrite)   # refused before it is announced
        print(f"training {config['model']} on {config['task']} -> {run_dir}")
        metrics = train(config, run_dir, overwrite=args.overwrite, progress=progress)
        _print_result(metrics)
    if config.get("baseline") and config["model"] != "mean-vectors":
        given = (set(given_options(args)) if not args.resume
                 else shared_options_set(config))
        base_metrics = train_baseline(config, run_dir, given, overwrite=args.overwrite,
                                      progress=progress)
        _print_comparison(metrics, base_metrics)
    return 0


def _print_result(metrics: dict) -> None:
    from ..trainer import format_metrics
    unit = "pairs" if metrics["task"] == "sick" else "sentences"
    # a fractional epoch when the best dev evaluation fell inside an epoch
    best = metrics.get("best_at") or metrics["best_epoch"]
    print(f"{metrics['model']} on {metrics['task']}: best epoch {best:g}, "
          f"dev {format_metrics(metrics['dev'])}; test {format_metrics(metrics['test'])}; "
          f"{metrics['train_sentences_per_s']:.0f} {unit}/s")


def _print_comparison(tree_metrics: dict, bag_metrics: dict) -> None:
    print()
    print(f"{'test set':<28}{'root acc':>10}{'all-node acc':>14}")
    for label, metrics in ((tree_metrics["model"] + " (tree)", tree_metrics),
                           ("mean-vectors (bag of words)", bag_metrics)):
        print(f"{label:<28}{metrics['test']['root_acc']:>10.2f}{metrics['test']['all_acc']:>14.2f}")
