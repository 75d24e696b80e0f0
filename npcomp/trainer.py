"""Training, evaluation and the files of a run directory.

A run directory holds (SPEC Sec. 3):

* ``metrics.json``: model, task, config, per-epoch records (train loss, dev
  and training-sentence accuracy: the learning curve), best epoch, dev and
  test metrics of the best-dev checkpoint (with the roots' confusion matrix,
  ``root_confusion[gold][predicted]``), training time and speed, the machine
  (CPU, NumPy's SIMD, BLAS, versions: ``machine.py``); rewritten
  after every dev evaluation, so a killed run keeps what it finished;
* ``model.npz``: the best-dev parameters by name, the config and the vocabulary;
* ``checkpoint.npz``: the parameters, optimiser state and random state at the
  latest dev evaluation (with the epoch's order and progress when that was
  inside an epoch), from which ``--resume`` continues;
* ``log.jsonl``: one JSON record per line (run start, every dev evaluation
  inside an epoch, every epoch, the end).

Dev is evaluated at the end of every epoch and, with ``evals_per_epoch`` > 1,
at evenly spaced points inside it (``best_at`` in metrics.json: the epochs
done at the selected evaluation, 2.5 for the middle of epoch 3; ``best_epoch``
the epoch it fell in).  Model selection uses dev root accuracy only (Pearson's
r on SICK); the test split is evaluated once, with the best-dev parameters, at
the end.
"""
from __future__ import annotations

import copy
import json
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .cells import CELL_OPTIONS, make_cell
from .defaults import dim_follows_embedding
from .embeddings import Vocabulary, build_embedding_matrix, read_vectors
from .forest import build_forest, node_words, supervised_labels
from .formats import SickPair
from .machine import machine_description
from .memory import retain_freed_memory
from .model import PairBatch, PairModel, TreeModel
from .optimizers import make_optimizer
from .params import Parameters
from .tasks import PAIR_TASKS, SPLITS, load_task, task_trees

DTYPES = {"float32": np.float32, "float64": np.float64}


@dataclass
class EncodedSplit:
    """A split's trees with each node's word id, ready to pack into forests;
    ``labels`` (per tree) replaces the trees' own labels in training batches
    (the supervision mode's)."""
    trees: list
    words: list
    labels: list | None = None

    def __len__(self) -> int:
        return len(self.trees)

    def forest(self, indices, labels=None):
        return build_forest([self.trees[i] for i in indices], [self.words[i] for i in indices],
                            None if labels is None else [labels[i] for i in indices])

    def batch(self, indices):
        """The training minibatch of trees ``indices``: a forest."""
        return self.forest(indices, self.labels)


@dataclass
class EncodedPairs:
    """A split's sentence pairs: left trees, right trees, word ids, scores (m,)."""
    left: EncodedSplit
    right: EncodedSplit
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.left)

    def batch(self, indices) -> PairBatch:
        """Pairs ``indices`` as one forest, left sentences first."""
        indices = list(indices)
        trees = [self.left.trees[i] for i in indices] + [self.right.trees[i] for i in indices]
        words = [self.left.words[i] for i in indices] + [self.right.words[i] for i in indices]
        return PairBatch(build_forest(trees, words), self.scores[indices])


def encode(trees, vocab: Vocabulary) -> EncodedSplit:
    return EncodedSplit(list(trees), [node_words(t, vocab.encode(t.tokens)) for t in trees])


def encode_split(items, vocab: Vocabulary):
    """A split's trees (EncodedSplit) or sentence pairs (EncodedPairs)."""
    items = list(items)
    if items and isinstance(items[0], SickPair):
        return EncodedPairs(encode([pair.tree_a for pair in items], vocab),
                            encode([pair.tree_b for pair in items], vocab),
                            np.array([pair.score for pair in items], dtype=np.float64))
    return encode(items, vocab)


def selection_metric(task: str) -> str:
    """The dev metric model selection maximises."""
    return "pearson" if task in PAIR_TASKS else "root_acc"


# --------------------------------------------------------------------------
# evaluation
# --------------------------------------------------------------------------

def predict_split(model: TreeModel, params: Parameters, split: EncodedSplit,
                  batch_size: int = 512):
    """Per tree: the head's outputs at its nodes (class probabilities, or the
    ordinal head's cumulative ones), in the tree's own node order."""
    results = []
    for start in range(0, len(split), batch_size):
        indices = range(start, min(start + batch_size, len(split)))
        forest = split.forest(indices)
        outputs = model.outputs(params, forest)
        for position in range(len(indices)):
            nodes = np.flatnonzero(forest.tree == position)
            in_tree_order = np.empty((nodes.shape[0], outputs.shape[1]), dtype=outputs.dtype)
            in_tree_order[forest.origin[nodes]] = outputs[nodes]
            results.append(in_tree_order)
    return results


def predict_relatedness(model: PairModel, params: Parameters, split: EncodedPairs,
                        batch_size: int = 512, helpers=None) -> np.ndarray:
    """(m,) predicted relatedness of every pair, ``batch_size`` pairs a forest
    (every other forest on ``helpers`` when given)."""
    def score(start: int):
        return model.predict(params, split.batch(range(start, min(start + batch_size,
                                                                  len(split)))))
    return np.concatenate(_over_batches(score, len(split), batch_size, helpers))


def _over_batches(function, total: int, batch_size: int, helpers=None) -> list:
    """[function(start) for each batch start], every other batch on ``helpers``
    (an executor) when given; results in batch order."""
    starts = list(range(0, total, batch_size))
    if helpers is None:
        return [function(start) for start in starts]
    futures = {start: helpers.submit(function, start) for start in starts[1::2]}
    results = {start: function(start) for start in starts[0::2]}
    results.update({start: future.result() for start, future in futures.items()})
    return [results[start] for start in starts]


def relatedness_metrics(predicted: np.ndarray, gold: np.ndarray) -> dict:
    """Pearson's r, Spearman's rho and the mean squared error (Tai Table 3)."""
    from scipy.stats import pearsonr, spearmanr
    predicted = np.asarray(predicted, dtype=np.float64)
    gold = np.asarray(gold, dtype=np.float64)
    constant = predicted.size < 2 or np.ptp(predicted) == 0.0
    return {"pearson": 0.0 if constant else float(pearsonr(predicted, gold)[0]),
            "spearman": 0.0 if constant else float(spearmanr(predicted, gold)[0]),
            "mse": float(np.mean((predicted - gold) ** 2)), "pairs": int(gold.size)}


def evaluate(model, params: Parameters, split, batch_size: int = 512, helpers=None) -> dict:
    """Metrics of a split: ``relatedness_metrics`` for sentence pairs;
    for trees, root and all-node accuracy (percent) over labelled nodes,
    SST-style, and the roots' confusion matrix (``root_confusion[gold][predicted]``,
    counts).

    Forests of at most ``batch_size`` sentences (pairs); with ``helpers`` (an
    executor) every other forest is evaluated on a helper thread meanwhile."""
    if isinstance(split, EncodedPairs):
        return relatedness_metrics(predict_relatedness(model, params, split, batch_size,
                                                       helpers), split.scores)
    n_classes = model.n_classes

    def count(start: int):
        forest = split.forest(range(start, min(start + batch_size, len(split))))
        predicted = model.predict(params, forest)
        labelled = forest.label >= 0
        roots = forest.root[forest.label[forest.root] >= 0]
        confusion = np.zeros((n_classes, n_classes), dtype=np.int64)
        np.add.at(confusion, (forest.label[roots], predicted[roots]), 1)
        return (confusion, int(np.sum(predicted[labelled] == forest.label[labelled])),
                int(labelled.sum()))

    counts = _over_batches(count, len(split), batch_size, helpers)
    confusion = sum(c[0] for c in counts)
    all_correct, all_total = (sum(c[k] for c in counts) for k in (1, 2))
    return {"root_acc": 100.0 * np.trace(confusion) / max(confusion.sum(), 1),
            "all_acc": 100.0 * all_correct / max(all_total, 1),
            "sentences": len(split), "labelled_nodes": all_total,
            "root_confusion": confusion.tolist()}


# --------------------------------------------------------------------------
# building a model from a config
# --------------------------------------------------------------------------

def build_model(config: dict, vocab: Vocabulary, n_classes: int):
    """A TreeModel, or a PairModel for a pair task (SICK); ``n_classes`` are
    the classes it predicts."""
    cell = make_cell(config["model"], config["embedding_dim"], config["dim"],
                     **{option: config.get(option) for option in CELL_OPTIONS})
    if config["task"] in PAIR_TASKS:
        return PairModel(cell, len(vocab), config["embedding_dim"],
                         hidden_dim=config.get("similarity_dim") or 50, n_classes=n_classes)
    return TreeModel(cell, n_classes, len(vocab), config["embedding_dim"],
                     head=config.get("head", "softmax"),
                     training_only_classes=int(config.get("neutral") == "train"))


def _initial_parameters(config, model, vocab, vectors, rng, report):
    initial_embedding = getattr(model.cell, "initial_embedding", None)
    if initial_embedding is not None and vectors is None:
        # word matrices (matrix-space model): the cell knows their starting point
        embedding = initial_embedding(len(vocab), rng)
        report["embedding"] = {"initialised_by": config["model"]}
    else:
        embedding, report["embedding"] = build_embedding_matrix(
            vocab, config["embedding_dim"], rng, vectors=vectors, oov=config["oov"],
            scale=config["oov_scale"], dtype=np.float64)
    return model.new_parameters(rng, embedding, dtype=DTYPES[config["dtype"]])


# --------------------------------------------------------------------------
# the run directory
# --------------------------------------------------------------------------

def _write_json(path: Path, record) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    os.replace(tmp, path)


def _append_log(run_dir: Path, record) -> None:
    with open(run_dir / "log.jsonl", "a") as handle:
        handle.write(json.dumps(record) + "\n")


def _save_npz(path: Path, **arrays) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def save_model(path: Path, params: Parameters, config: dict, vocab: Vocabulary, n_classes: int):
    arrays = {f"param.{name}": value for name, value in params.items()}
    _save_npz(path, config=np.array(json.dumps(config)), vocab=np.array(vocab.to_list()),
              n_classes=np.array(n_classes), **arrays)


def load_model(run_dir: str | Path):
    """(model, params, config, vocab) of a run's best-dev checkpoint."""
    path = Path(run_dir) / "model.npz"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no model in this run directory (did training finish "
                                "an epoch?)")
    with np.load(path) as archive:
        config = json.loads(str(archive["config"]))
        vocab = Vocabulary.from_list(list(archive["vocab"]))
        n_classes = int(archive["n_classes"])
        model = build_model(config, vocab, n_classes)
        params = Parameters(model.layout, DTYPES[config["dtype"]])
        for name, view in params.items():
            view[...] = archive[f"param.{name}"]
    return model, params, config, vocab


@dataclass
class EpochState:
    """An epoch under way: its minibatch order (a permutation of the training
    examples), the minibatches trained, the sums its record is made of, and
    the dev evaluations made inside it.  The checkpoint holds it between two
    evaluations of one epoch, so ``--resume`` continues from the last one."""
    order: np.ndarray
    done: int = 0
    loss_sum: float = 0.0
    wall_s: float = 0.0
    evaluations: list = field(default_factory=list)

    def progress(self) -> dict:
        return {"done": self.done, "loss_sum": self.loss_sum, "wall_s": self.wall_s,
                "evaluations": self.evaluations}


def evaluation_points(n_batches: int, evals_per_epoch: int) -> list:
    """After how many of an epoch's ``n_batches`` minibatches dev is evaluated:
    ``evals_per_epoch`` points spread evenly, the last at the epoch's end (fewer
    when the epoch has fewer minibatches)."""
    return sorted({math.ceil(n_batches * k / evals_per_epoch)
                   for k in range(1, evals_per_epoch + 1)})


# --------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------

def train(config: dict, run_dir: str | Path, resume: bool = False, progress: bool = True,
          echo=print) -> dict:
    """Train ``config`` into ``run_dir``; returns the metrics record."""
    setup_start = time.perf_counter()
    retain_freed_memory()  # the steps reuse their work arrays' pages (memory.py)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    checkpoint_path = run_dir / "checkpoint.npz"
    if resume:
        if not checkpoint_path.is_file():
            raise FileNotFoundError(f"{checkpoint_path}: nothing to resume")
        with np.load(checkpoint_path) as archive:
            config = json.loads(str(archive["config"]))
    config = dict(config)
    span_samples = config.get("span_samples") or 0
    if span_samples and config["supervision"] != "spans":
        raise ValueError("--span-samples draws from the phrase spans: it needs "
                         "--supervision spans")
    vectors = read_vectors(config["vectors"]) if config.get("vectors") else None
    if vectors is not None:
        config["embedding_dim"] = vectors.dim
    if dim_follows_embedding(config):
        config["dim"] = config["embedding_dim"]

    task = load_task(config["task"], config.get("data_dir"), config["structure"],
                     seed=config["seed"], spans=config["supervision"] == "spans",
                     parses_dir=config.get("parses_dir"),
                     neutral=config.get("neutral", "unlabelled"))
    vocab = Vocabulary.from_trees(t for split in SPLITS for t in task_trees(task, split))
    splits = {name: encode_split(task.splits[name], vocab) for name in SPLITS}
    # per-epoch training accuracy (Nayebi's curves) on the training sentences
    train_sentences = (encode(task.train_sentences, vocab) if task.train_sentences is not None
                       else splits["train"])
    selected = selection_metric(config["task"])
    model = build_model(config, vocab, task.n_classes)
    dtype = DTYPES[config["dtype"]]
    rng = np.random.default_rng(config["seed"])
    report = {}
    params = _initial_parameters(config, model, vocab, vectors, rng, report)
    grads = params.zeros_like()
    layout = model.layout
    optimizer = make_optimizer(
        config["optimizer"], size=layout.size, dense_size=model.dense_size,
        embedding_offset=layout["embedding"].offset, embedding_dim=config["embedding_dim"],
        lr=config["lr"], embedding_lr=config["emb_lr"], dtype=dtype,
        embedding_rule=config.get("emb_optimizer", "same"), epsilon=config.get("epsilon"))
    train_split = splits["train"]
    if isinstance(train_split, EncodedSplit):
        train_split.labels = [supervised_labels(tree, config["supervision"])
                              for tree in train_split.trees]

    metrics = {"model": config["model"], "task": config["task"], "config": config,
               "epochs": [], "best_epoch": None, "best_at": None, "dev": None, "test": None,
               "train_wall_s": 0.0, "train_sentences_per_s": None,
               "parameters": int(model.dense_size), "vocabulary": len(vocab),
               "embedding": report.get("embedding"), "machine": machine_description()}
    start_epoch = 1
    resumed_epoch = None  # an epoch the checkpoint stopped between two dev evaluations
    if resume:
        with np.load(checkpoint_path) as archive:
            params.flat[...] = archive["params"]
            optimizer.load_state_dict(archive)
            rng.bit_generator.state = json.loads(str(archive["rng"]))
            metrics = json.loads(str(archive["metrics"]))
            if "epoch_order" in archive.files:
                resumed_epoch = EpochState(order=archive["epoch_order"],
                                           **json.loads(str(archive["epoch_state"])))
        start_epoch = len(metrics["epochs"]) + 1
        echo(f"resuming {run_dir} after epoch {start_epoch - 1}"
             + (f" and {resumed_epoch.done} minibatches of epoch {start_epoch}"
                if resumed_epoch else ""))
    else:
        for stale in ("log.jsonl", "model.npz", "metrics.json", "checkpoint.npz"):
            (run_dir / stale).unlink(missing_ok=True)
        _append_log(run_dir, {"event": "start", "config": config,
                              "embedding": report.get("embedding")})

    def checkpoint(epoch_state=None):
        """Everything --resume needs, written after every dev evaluation."""
        inside = ({} if epoch_state is None else
                  {"epoch_order": epoch_state.order,
                   "epoch_state": np.array(json.dumps(epoch_state.progress()))})
        _save_npz(checkpoint_path, params=params.flat, config=np.array(json.dumps(config)),
                  rng=np.array(json.dumps(rng.bit_generator.state)),
                  metrics=np.array(json.dumps(metrics)), **optimizer.state_dict(), **inside)

    def select(dev, at: float) -> bool:
        """Keep the parameters if ``dev`` is the best so far (``at``: epochs done)."""
        if metrics["dev"] is not None and not dev[selected] > metrics["dev"][selected]:
            return False
        metrics["best_epoch"], metrics["best_at"], metrics["dev"] = math.ceil(at), at, dev
        save_model(run_dir / "model.npz", params, config, vocab, task.n_classes)
        return True

    tick = time.perf_counter()
    _warm_up(model, params, optimizer, train_split, config)
    # what a user waits before the first epoch: reading the data and vectors, then
    # compiling the kernels (or loading them from numba's cache on later runs)
    metrics["warm_up_s"] = time.perf_counter() - tick
    metrics["setup_s"] = time.perf_counter() - setup_start
    # a second thread overlaps independent products of the backward pass and
    # evaluates every other forest (BLAS itself runs one thread: see cli.py)
    threads = max(1, int(config.get("threads") or 1))
    helper = ThreadPoolExecutor(max_workers=1) if threads > 1 else None
    fixed = config["fixed_embeddings"]
    batch_size = config["batch_size"]
    examples_total = sum(e["train_examples"] for e in metrics["epochs"])
    reset_every = config.get("adagrad_reset") or 0
    unit = "pair" if task.name in PAIR_TASKS else "sent"
    for epoch in range(start_epoch, config["epochs"] + 1):
        if resumed_epoch is not None:
            state, resumed_epoch = resumed_epoch, None
        else:
            if reset_every and epoch > 1 and (epoch - 1) % reset_every == 0:
                optimizer.reset()  # Socher et al.'s code restarts AdaGrad's history
            state = EpochState(order=task.span_groups.draw(rng, span_samples) if span_samples
                               else rng.permutation(len(train_split)))
        n_batches = -(-len(state.order) // batch_size)
        inside = evaluation_points(n_batches, config.get("evals_per_epoch") or 1)[:-1]
        bar = _progress(len(state.order), f"epoch {epoch}/{config['epochs']}", progress, unit,
                        initial=min(state.done * batch_size, len(state.order)))
        while state.done < n_batches:
            indices = state.order[state.done * batch_size:(state.done + 1) * batch_size]
            tick = time.perf_counter()
            batch = train_split.batch(indices)
            loss, rows = model.loss_and_gradient(
                params, batch, grads, rng=rng, average=config["average"], helper=helper,
                **_regularisation(config))
            optimizer.step(params.flat, grads.flat, None if fixed else rows)
            if fixed:
                grads["embedding"][rows] = 0.0
            state.wall_s += time.perf_counter() - tick
            if not np.isfinite(loss):
                raise FloatingPointError(f"loss became {loss} in epoch {epoch}: lower --lr")
            state.loss_sum += loss * len(indices)
            state.done += 1
            if bar is not None:
                bar.update(len(indices))
                trained = min(state.done * batch_size, len(state.order))
                bar.set_postfix(loss=f"{loss:.3f}",
                                per_s=f"{trained / max(state.wall_s, 1e-9):.0f}")
            if state.done in inside:
                at = round(epoch - 1 + state.done / n_batches, 4)
                dev = evaluate(model, params, splits["dev"], config["eval_batch_size"], helper)
                state.evaluations.append({"at": at, "dev": dev})
                improved = select(dev, at)
                _append_log(run_dir, {"event": "evaluation", "at": at, "dev": dev})
                _write_json(run_dir / "metrics.json", metrics)
                checkpoint(state)
                if bar is not None:
                    bar.clear()
                echo(f"epoch {at:.2f}: dev {format_metrics(dev)}{'  *best' if improved else ''}")
        if bar is not None:
            bar.close()
        tick = time.perf_counter()
        dev = evaluate(model, params, splits["dev"], config["eval_batch_size"], helper)
        train_accuracy = (evaluate(model, params, train_sentences, config["eval_batch_size"],
                                   helper) if config.get("train_eval", True) else None)
        eval_time = time.perf_counter() - tick
        record = {"epoch": epoch, "train_loss": state.loss_sum / len(state.order), "dev": dev,
                  "train": train_accuracy,
                  "wall_s": state.wall_s, "eval_s": eval_time,
                  "train_examples": len(state.order),
                  "train_sentences_per_s": len(state.order) / state.wall_s}
        if state.evaluations:
            record["evaluations"] = state.evaluations
        metrics["epochs"].append(record)
        metrics["train_wall_s"] += state.wall_s
        examples_total += len(state.order)
        metrics["train_sentences_per_s"] = examples_total / metrics["train_wall_s"]
        improved = select(dev, float(epoch))
        # the epoch is on disk before anything else can interrupt the run
        _append_log(run_dir, {"event": "epoch", **record})
        _write_json(run_dir / "metrics.json", metrics)
        checkpoint()
        train_text = (f"  train {format_metrics(train_accuracy, short=True)}"
                      if train_accuracy is not None else "")
        echo(f"epoch {epoch}: train loss {record['train_loss']:.4f}{train_text}  dev "
             f"{format_metrics(dev)}  ({record['train_sentences_per_s']:.0f} "
             f"{'pairs' if unit == 'pair' else 'sent'}/s)"
             f"{'  *best' if improved else ''}")

    if metrics["test"] is None and metrics["best_epoch"] is not None:
        best_model, best_params, _, _ = load_model(run_dir)
        tick = time.perf_counter()
        metrics["test"] = evaluate(best_model, best_params, splits["test"],
                                   config["eval_batch_size"], helper)
        metrics["test_eval_s"] = time.perf_counter() - tick
        _write_json(run_dir / "metrics.json", metrics)
        _append_log(run_dir, {"event": "end", "best_epoch": metrics["best_epoch"],
                              "dev": metrics["dev"], "test": metrics["test"]})
    if helper is not None:
        helper.shutdown()
    return metrics


def format_metrics(metrics: dict, short: bool = False) -> str:
    """``root 45.10  all 80.20`` or ``pearson 0.8512  spearman 0.7901  mse 0.2830``."""
    if "pearson" in metrics:
        text = f"pearson {metrics['pearson']:.4f}"
        return text if short else (f"{text}  spearman {metrics['spearman']:.4f}  "
                                   f"mse {metrics['mse']:.4f}")
    text = f"root {metrics['root_acc']:.2f}"
    return text if short else f"{text}  all {metrics['all_acc']:.2f}"


def _regularisation(config) -> dict:
    """The training step's weight decay and dropout rates, as keyword arguments
    of ``loss_and_gradient`` (the warm-up must take the same code paths)."""
    return {"l2": config["l2"], "dropout": config["dropout"],
            "embedding_dropout": config.get("embedding_dropout") or 0.0,
            "recurrent_dropout": config.get("recurrent_dropout") or 0.0}


def _warm_up(model, params, optimizer, split, config):
    """Compile (or load from cache) every kernel, untimed, on the split's two
    largest examples: a minibatch of one-word spans, which has no inner node,
    would leave the inner nodes' kernels to compile inside the first timed
    step.  It draws dropout masks at the run's rates (their code paths differ)
    from a generator of its own, and updates copies, so the run's random
    stream, parameters and optimiser state stay as they were."""
    trees = split.left if isinstance(split, EncodedPairs) else split
    sizes = np.fromiter((len(words) for words in trees.words), dtype=np.int64,
                        count=len(trees))
    batch = split.batch(np.argsort(sizes, kind="stable")[-2:])
    grads = params.zeros_like()
    _, rows = model.loss_and_gradient(params, batch, grads, rng=np.random.default_rng(0),
                                      **_regularisation(config))
    copy.deepcopy(optimizer).step(params.flat.copy(), grads.flat,
                                  None if config["fixed_embeddings"] else rows)
    model.outputs(params, batch)


def _progress(total, description, enabled, unit="sent", initial=0):
    if not enabled:
        return None
    import sys

    from tqdm import tqdm
    # to a file or pipe, a line every few seconds rather than every minibatch
    interval = 0.1 if sys.stderr.isatty() else 5.0
    return tqdm(total=total, desc=description, unit=unit, leave=False, dynamic_ncols=True,
                mininterval=interval, initial=initial)
