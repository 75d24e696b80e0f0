"""Tasks: which files make a task's splits, its classes and label mapping.

==========  =======  =======================================================
task        classes  splits
==========  =======  =======================================================
sst5        5        SST PTB trees, labels 0..4 at every node
sst2        2        SST without sentences whose root is neutral (2);
                     labels 0,1 -> 0 (negative), 3,4 -> 1 (positive),
                     neutral phrases unlabelled: 6920 / 872 / 1821 sentences
                     (``neutral="train"``: neutral training phrases get
                     label 2, a class trained on and never predicted)
synthetic   5        the project's own compositional treebank (no download)
sick        5        SICK sentence pairs (4500 / 500 / 4927) with relatedness
                     in [1, 5], rated on K = 5 (Tai et al. Sec. 4.2): each
                     split a list of ``sick.SickPair``
sick-       3        the same pairs and trees, each labelled with its
entailment           entailment judgment (NEUTRAL, ENTAILMENT, CONTRADICTION)
                     from SICK's release files, joined by pair ID: Tai et
                     al.'s splits, train SICK_train.txt, dev SICK_trial.txt,
                     test SICK_test_annotated.txt (``sick.read_entailment``)
==========  =======  =======================================================

``structure`` re-brackets every sentence: ``gold`` keeps the treebank's
trees; ``left``/``right`` build left- or right-branching binary trees over
the same words, labelled at the root and the leaves only (Zhu et al.'s
S-LSTM-LR / S-LSTM-RR); ``chain`` reads the sentence as a sequence for the
sequence models (node t reads word t, its parent is node t+1), labelled at
its last word with the sentence's label.  With ``spans`` the training split
instead holds one chain per labelled phrase of each sentence (its words,
labelled at the last one): the sequence models' phrase supervision of Tai et
al. and Irsoy & Cardie.  ``TaskData.span_groups`` then says which chains
came from which sentence, so that an epoch can train on every sentence and
a sample of its phrases instead of all of them (``SpanGroups.draw``: Tai et
al.'s released code draws four).

``dependency`` reads dependency trees: for SICK the ``*.parents`` files of
its directory; for the SST the parses ``npcomp parse`` wrote into
``parses_dir`` (default ``DATA_DIR/sst``), each node labelled where its span
is a labelled SST phrase (``sst_dependency.py``).  ``parsed`` (the SST) is
the binary trees of those parses (``parsed_trees.binarise``, best from
``npcomp parse --copula-head copula``, as ``npcomp eval --trees parsed``
parses), labelled the same way: a model trained on what it will read in
text that has no gold tree.  ``constituency`` is the
binarised constituency trees: SICK's ``*.cparents``, the SST's own trees
(the same as ``gold``).  SICK has no ``gold``: its trees are one of these.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from npcomp.errors import ConfigError
from npcomp.data.datasets import NEUTRAL_POLICIES, PAIR_CLASS_TASKS, PAIR_TASKS, STRUCTURES, TASKS
from npcomp.data.datasets.class_list import MAX_CLASSES, check_largest_number
from npcomp.data.readers.formats import UNLABELLED, Tree, branching_tree, chain_tree
from npcomp.data.readers.ptb import read_ptb_file
from npcomp.data.readers.sick import ENTAILMENT_CLASSES, RELEASE_FILES, SickPair, read_sick_dir, with_entailment
from npcomp.errors import DataError
from npcomp.data.readers.restructure import rebracket, sentence_chain, span_chains

SPLITS = ("train", "dev", "test")

_SST2_LABELS = np.array([0, 0, UNLABELLED, 1, 1], dtype=np.int32)


@dataclass
class TaskData:
    name: str
    n_classes: int
    splits: dict  # split name -> list of Tree (list of SickPair for a pair task)
    # the training sentences as whole trees when "train" holds something else
    # (phrase spans): what per-epoch training accuracy is measured on
    train_sentences: list | None = None
    # classes the training split uses beyond n_classes, never predicted: sst2's
    # neutral phrases as class 2 (Tai et al.'s released code trains binary SST
    # with three classes and predicts the likelier of negative and positive)
    training_only_classes: int = 0
    # with phrase spans: which training chains came from which sentence
    span_groups: SpanGroups | None = None
    # a user's sentence pairs: ((lo, hi), K), their scores' range and the
    # similarity head's ratings 1..K it maps onto (score_scale.py); None: the
    # scores are the ratings (SICK's 1..5)
    score_scale: tuple | None = None
    # a user's files: what a run records of them (own_data.OwnData.record)
    record: dict | None = None
    # the classes' names in the order of their numbers, where the caller or the
    # task has them (an estimator's classes_, a user's labels, SICK's entailment
    # judgments); None: the task's own (choices.TASK_CLASSES) or the numbers
    class_names: tuple | None = None


@dataclass
class SpanGroups:
    """The chains of a spans training split, sentence by sentence: sentence
    i's phrases are chains ``start[i]`` to ``whole[i] - 1`` and chain
    ``whole[i]`` is the sentence itself (``span_chains`` puts it last)."""

    start: np.ndarray  # (n_sentences,) int64
    whole: np.ndarray  # (n_sentences,) int64

    @classmethod
    def of(cls, chains_per_sentence: list) -> SpanGroups:
        counts = np.array([len(chains) for chains in chains_per_sentence], dtype=np.int64)
        ends = np.cumsum(counts)
        return cls(start=ends - counts, whole=ends - 1)

    def draw(self, rng: np.random.Generator, samples: int) -> np.ndarray:
        """One epoch's training chains (indices into the split) in random
        order: every sentence once, and ``samples`` of each sentence's other
        phrases drawn uniformly with replacement (none for a one-word
        sentence).  Tai et al.'s released code trains its sequence models so,
        with four phrases a sentence, where their paper says "the spans
        corresponding to labeled nodes"."""
        phrases = self.whole - self.start
        owners = np.repeat(np.flatnonzero(phrases > 0), samples)
        drawn = self.start[owners] + rng.integers(0, phrases[owners])
        return rng.permutation(np.concatenate([self.whole, drawn]))


def default_data_dir() -> Path:
    """``$NPCOMP_DATA`` if set, else ``./data``."""
    return Path(os.environ.get("NPCOMP_DATA", "data"))


def load_task(
    name: str,
    data_dir: str | Path | None = None,
    structure: str = "gold",
    seed: int = 0,
    spans: bool = False,
    parses_dir: str | Path | None = None,
    neutral: str = "unlabelled",
    splits: tuple = SPLITS,
) -> TaskData:
    """The task's ``splits`` (default all three) in ``structure``.  ``neutral``
    (sst2 only): neutral phrases of the training sentences ``unlabelled``, or
    labelled 2 to ``train`` on as a third class (``TaskData.training_only_classes``)."""
    if structure not in STRUCTURES:
        raise ValueError(f"structure must be one of {STRUCTURES}, not {structure!r}")
    if spans and structure != "chain":
        raise ConfigError("structure", "phrase spans as training sequences need structure 'chain'")
    if neutral not in NEUTRAL_POLICIES:
        raise ValueError(f"neutral must be one of {NEUTRAL_POLICIES}, not {neutral!r}")
    if neutral != "unlabelled" and name != "sst2":
        raise ValueError("only sst2 has neutral phrases to train on as a class of their own")
    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    if name in ("sick", "sick-entailment"):
        if spans:
            raise ConfigError("supervision", f"{name} has no phrase labels to train on (spans)")
        sick = _load_sick(data_dir, structure, splits)
        return sick if name == "sick" else _entailment(sick, data_dir)
    if name == "synthetic":
        if structure in ("dependency", "parsed"):
            raise ValueError("the synthetic treebank has no dependency parses")
        from npcomp.data.datasets.synthetic import synthetic_splits

        data = TaskData(
            name, 5, {split: trees for split, trees in synthetic_splits(seed=seed).items() if split in splits}
        )
    elif name in ("sst5", "sst2"):
        parses = structure if structure in ("dependency", "parsed") else None
        data = _load_sst(
            name, data_dir, parses, Path(parses_dir) if parses_dir is not None else data_dir / "sst", neutral, splits
        )
    else:
        raise ValueError(f"task must be one of {TASKS}, not {name!r}")
    restructured(data, structure, spans and "train" in splits)
    if data.training_only_classes and "train" in data.splits:
        # training accuracy counts the classes that can be predicted
        data.train_sentences = [
            tree.with_labels(np.where(tree.label < data.n_classes, tree.label, UNLABELLED))
            for tree in data.train_sentences or data.splits["train"]
        ]
    return data


def restructured(data: TaskData, structure: str, spans: bool = False) -> TaskData:
    """``data`` (a treebank's trees, changed in place and returned) as a run
    of ``structure`` reads them: chains (with ``spans``, the training split
    one chain per labelled phrase, ``train_sentences`` the sentences'
    chains, ``span_groups`` which came from which), left- or right-branching
    trees, or as they are."""
    if spans and structure != "chain":
        raise ConfigError("structure", "phrase spans as training sequences need structure 'chain'")
    train_trees = data.splits.get("train", [])
    data.splits = {split: as_structure(trees, structure) for split, trees in data.splits.items()}
    if spans and "train" in data.splits:
        if any(tree.root_label < 0 for tree in train_trees):
            raise ValueError("phrase spans as training sequences need every training sentence labelled at its root")
        data.train_sentences = data.splits["train"]
        chains = [span_chains(tree) for tree in train_trees]
        data.splits["train"] = [chain for sentence in chains for chain in sentence]
        data.span_groups = SpanGroups.of(chains)
    return data


def as_structure(trees: list, structure: str) -> list:
    """Trees as a run of ``structure`` reads them: chains labelled at their
    last word (``chain``), re-bracketed (``left``, ``right``), or as they are."""
    if structure == "chain":
        return [sentence_chain(tree) for tree in trees]
    if structure in ("left", "right"):
        return [rebracket(tree, structure) for tree in trees]
    return list(trees)


def _load_sst(
    name: str,
    data_dir: Path,
    parses: str | None = None,
    parses_dir: Path | None = None,
    neutral: str = "unlabelled",
    wanted: tuple = SPLITS,
) -> TaskData:
    """The SST's splits as their gold trees, or (``parses``: "dependency" or
    "parsed") as the dependency trees of ``parses_dir``'s parses or their
    binarisation, labelled from the gold trees' phrases."""
    splits = {}
    neutral_class = name == "sst2" and neutral == "train"
    for split in wanted:
        path = data_dir / "sst" / f"{split}.txt"
        if not path.is_file():
            raise DataError(
                f"no such file: the SST is read from DATA_DIR/sst/{split}.txt; "
                f"run `npcomp download sst --data-dir {data_dir}` or pass "
                "--data-dir (or set NPCOMP_DATA)",
                path,
            )
        if parses is not None:
            from npcomp.data.datasets.sst_dependency import load_sst_dependency

            trees = load_sst_dependency(data_dir, parses_dir, split, binarised=parses == "parsed")
        else:
            trees = [tree.validate(5) for tree in read_ptb_file(path)]
        if name == "sst2":
            mapping = _SST2_LABELS.copy()
            if neutral_class and split == "train":
                mapping[2] = 2
            trees = [
                tree.with_labels(np.where(tree.label >= 0, mapping[tree.label], UNLABELLED).astype(np.int32))
                for tree in trees
                if tree.root_label != 2
            ]
        splits[split] = trees
    return TaskData(name, 5 if name == "sst5" else 2, splits, training_only_classes=int(neutral_class))


def _load_sick(data_dir: Path, structure: str, wanted: tuple = SPLITS) -> TaskData:
    """SICK pairs with each sentence in the tree ``structure`` asks for."""
    if structure in ("gold", "parsed"):
        raise ConfigError(
            "structure",
            "sick has two parses of each sentence: dependency, constituency, or chain (the sentence as a sequence)",
        )
    layout = "constituency" if structure == "constituency" else "dependency"
    splits = {}
    for split in wanted:
        directory = data_dir / "sick" / split
        if not directory.is_dir():
            raise DataError(
                f"no such directory: SICK is read from DATA_DIR/sick/{split}/; "
                f"run `npcomp download sick sick-trees --data-dir {data_dir}` "
                "(the release files, then their trees) or pass --data-dir (or "
                "set NPCOMP_DATA)",
                directory,
            )
        pairs = read_sick_dir(directory, layout)
        if structure not in ("dependency", "constituency"):
            pairs = [
                SickPair(
                    _restructure(pair.tree_a, structure),
                    _restructure(pair.tree_b, structure),
                    pair.score,
                    pair.pair_id,
                    pair.label,
                )
                for pair in pairs
            ]
        splits[split] = pairs
    return TaskData("sick", 5, splits)


def _entailment(sick: TaskData, data_dir: Path) -> TaskData:
    """SICK's pairs (``_load_sick``) labelled with their entailment classes
    from SICK's release files in DATA_DIR/sick (``sick.RELEASE_FILES``)."""
    splits = {}
    for split, pairs in sick.splits.items():
        path = data_dir / "sick" / RELEASE_FILES[split]
        if not path.is_file():
            raise DataError(
                f"no such file: sick-entailment reads the entailment judgments of "
                f"SICK's release file DATA_DIR/sick/{RELEASE_FILES[split]} for "
                f"the {split} split; run `npcomp download sick --data-dir "
                f"{data_dir}` or pass --data-dir (or set NPCOMP_DATA)",
                path,
            )
        splits[split] = with_entailment(pairs, path)
    return TaskData("sick-entailment", len(ENTAILMENT_CLASSES), splits, class_names=ENTAILMENT_CLASSES)


def _restructure(tree: Tree, structure: str) -> Tree:
    """An unlabelled sentence as a chain or a left/right-branching tree."""
    if structure == "chain":
        return chain_tree(tree.tokens, source=tree.source)
    return branching_tree(tree.tokens, structure, source=tree.source)


# the ratings of a pair task given as a dict: SICK's 1..5 (Tai et al.'s K = 5)
GIVEN_PAIR_RATINGS = 5


def given_task(data, name: str) -> TaskData:
    """A task given in memory instead of read from ``name``'s files: a
    TaskData as it is, or a dict {"train": ..., "dev": ..., "test": ...} (test
    optional) of Trees, or of SickPairs with scores in [1, 5] for a pair task,
    as the model reads them (``load_task`` restructures; these are taken as
    given).  A dict's classes are its labels' (the largest plus one, at least
    two); a TaskData says other numbers of classes or ratings.  ConfigError
    (naming ``task``) when sentence pairs meet a sentence task or the other
    way round; DataError naming the split and example of an item that does
    not fit."""
    if isinstance(data, TaskData):
        task = data
    elif isinstance(data, dict):
        task = _task_of_splits(data, name)
    else:
        raise TypeError(f"data must be a TaskData or a dict of splits, not {type(data).__name__}")
    missing = [split for split in ("train", "dev") if not task.splits.get(split)]
    if missing:
        raise DataError(
            f"the data have no {' and no '.join(missing)} examples: a run trains "
            "on train and selects its model on dev (test is optional)"
        )
    pairs = isinstance(task.splits["train"][0], SickPair)
    if pairs != (name in PAIR_TASKS):
        given, wanted = ("sentence pairs", "a sentence task") if pairs else ("sentences", "a task of sentence pairs")
        raise ConfigError(
            "task",
            f"the data hold {given}, but {name} is {wanted}: build the "
            f"configuration for {'sick' if pairs else 'sst5'} instead",
        )
    return task


def _task_of_splits(splits: dict, name: str) -> TaskData:
    unknown = [split for split in splits if split not in SPLITS]
    if unknown:
        raise DataError(f"unknown split(s) {', '.join(map(repr, unknown))}: the splits are {', '.join(SPLITS)}")
    splits = {split: list(splits[split]) for split in SPLITS if split in splits}
    pairs = bool(splits.get("train")) and isinstance(splits["train"][0], SickPair)
    kind = SickPair if pairs else Tree
    for split, items in splits.items():
        for index, item in enumerate(items):
            if not isinstance(item, kind):
                raise DataError(
                    f"{split} example {index} is a {type(item).__name__}, not a "
                    f"{kind.__name__} as the training split's first"
                )
            if pairs and name in PAIR_CLASS_TASKS:
                if item.label < 0:
                    raise DataError(f"{split} pair {index} has no class (label {item.label}): {name} classifies pairs")
            elif pairs and not 1.0 <= item.score <= GIVEN_PAIR_RATINGS:
                raise DataError(
                    f"{split} pair {index} is scored {item.score!r}, outside "
                    f"[1, {GIVEN_PAIR_RATINGS}]: rescale the scores, or give a "
                    "TaskData with the ratings 1..K they are on"
                )
    if pairs and name not in PAIR_CLASS_TASKS:
        return TaskData(name, GIVEN_PAIR_RATINGS, splits)
    largest = max(
        (int(item.label) if pairs else int(item.label.max()) for items in splits.values() for item in items), default=-1
    )
    if largest >= MAX_CLASSES:  # named by its split and place (or its file and line)
        split, index, item = next(
            (split, index, item)
            for split, items in splits.items()
            for index, item in enumerate(items)
            if (int(item.label) if pairs else int(item.label.max())) == largest
        )
        check_largest_number(largest, getattr(item, "source", None) or f"{split} example {index}")
    return TaskData(name, max(largest + 1, 2), splits)


def task_trees(data: TaskData, split: str) -> list:
    """Every tree of a split (both sentences of each pair for a pair task:
    SICK, or a user's file of pairs)."""
    items = data.splits[split]
    if data.name in PAIR_TASKS or items and isinstance(items[0], SickPair):
        return [tree for pair in items for tree in (pair.tree_a, pair.tree_b)]
    return list(items)
