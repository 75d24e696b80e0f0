"""Using a trained relatedness model: scoring sentence pairs and ranking
nearest neighbours (Tai, Socher & Manning 2015, Table 4).

A relatedness run reads sentences in one structure (``chain``, SICK's
``dependency`` or ``constituency`` parses, ``left``/``right``-branching
trees).  A plain sentence given by a user gets its tree from
``SentenceTrees``, as ``--tree`` chooses: a chain or a branching tree needs
nothing; ``parsed`` (the default of a dependency or constituency run) takes
SICK's own parse when the sentence is one of SICK's (matched on its
lower-cased tokens), and otherwise parses it with spaCy (the optional
``npcomp[parse]`` extra): the dependency tree for a dependency run, its
binarisation (``parsed_trees.binarise``) for a constituency run, which
approximates the constituency parses SICK ships.  Without spaCy the default
falls back to right-branching trees, saying so.

Neighbours: every candidate is encoded once, the query once, and the
similarity head (eq. 15) scores the query against all of them in one
product; beside it, the baseline of Tai's Table 4, the cosine of the mean
word vectors (the run's own embedding table: for SICK runs, the fixed GloVe
vectors).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from npcomp.data.readers.formats import Tree, branching_tree, chain_tree
from npcomp.errors import DataError
from npcomp.forest import build_forest, node_words
from npcomp.training.finite_outputs import naming_the_sentence, require_finite_outputs
from npcomp.data.datasets.tasks import SPLITS, TaskData, task_trees
from npcomp.training.thread_pools import pinned_thread_pools


def _key(tokens: Sequence[str]) -> tuple:
    return tuple(token.lower() for token in tokens)


class SentenceTrees:
    """Sentences (whitespace-tokenised text) to trees in a run's structure.

    ``task`` is the loaded SICK task in that structure (its sentences' trees
    are looked up); ``parser`` (an object with ``parse(list of token tuples)
    -> heads``, e.g. ``sst_dependency.SpacyParser``) is created on first need
    when None; ``tree`` is ``--tree`` (``text_trees``: None for the run's
    own); ``warn`` is called once with the message of a fallback to
    right-branching trees for want of spaCy.
    """

    def __init__(self, structure: str, task: TaskData | None = None, parser=None, tree: str | None = None, warn=None):
        from npcomp.data.text.parsed_trees import TextParser
        from npcomp.data.text.text_trees import check_tree, default_tree, parsed_kind

        check_tree(structure, tree)
        self.structure = structure
        self.given = tree
        self.tree = tree if tree is not None else default_tree(structure)
        self.known = {}
        if task is not None:
            for split in SPLITS:
                for known in task_trees(task, split):
                    self.known.setdefault(_key(known.tokens), known)
        kind = parsed_kind(structure)
        self.parser = parser
        self.text_parser = None if kind is None else TextParser(kind, parser=parser)
        self.warn = warn
        self.fell_back = False

    def __call__(self, text: str, source: str = "") -> Tree:
        tokens = text.split()
        if not tokens:
            raise DataError("empty sentence", *_split(source))
        if self.tree == "chain":
            return chain_tree(tokens, source=source)
        if self.tree in ("left", "right") or self.fell_back:
            return branching_tree(tokens, "left" if self.tree == "left" else "right", source=source)
        tree = self.known.get(_key(tokens))
        if tree is not None:
            return tree
        try:
            heads = self.text_parser.heads([tuple(tokens)])[0]
        except ImportError as error:
            if self.given is not None:
                raise
            self.fell_back = True
            if self.warn is not None:
                self.warn(
                    f"sentences that are not SICK's get right-branching trees, not "
                    f"parsed ones: {error} (--tree right chooses them without this "
                    "message)"
                )
            return branching_tree(tokens, "right", source=source)
        return self.text_parser.tree(heads, tokens, source)


def _split(source: str) -> tuple:
    path, _, line = source.rpartition(":")
    if path and line.isdigit():
        return path, int(line)
    return (source or None), None


@pinned_thread_pools()
def encode_sentences(model, params, vocab, trees: Sequence[Tree], batch_size: int = 512) -> np.ndarray:
    """(len(trees), output_dim) sentence representations (the roots' states)."""
    states = []
    for start in range(0, len(trees), batch_size):
        chunk = trees[start : start + batch_size]
        forest = build_forest(chunk, [node_words(tree, vocab.encode(tree.tokens)) for tree in chunk])
        with naming_the_sentence(chunk):
            states.append(model.sentence_states(params, forest))
    return np.concatenate(states)


def run_sentence_trees(config: dict, data_dir=None, tree: str | None = None, warn=None) -> SentenceTrees:
    """Sentences -> trees as a trained sick run reads them (or as ``tree``,
    ``--tree``, says): SICK's own parses where the sentence is one of SICK's
    (read from ``data_dir``, else the run's), else parsed or built in its
    structure."""
    from npcomp.data.datasets.tasks import load_task
    from npcomp.data.text.text_trees import check_tree

    check_tree(config["structure"], tree)
    task = None
    if config["structure"] in ("dependency", "constituency") and tree in (None, "parsed"):
        task = load_task("sick", data_dir or config.get("data_dir"), config["structure"])
    return SentenceTrees(config["structure"], task, tree=tree, warn=warn)


@pinned_thread_pools()
def score_pairs(model, params, vocab, left: Sequence[Tree], right: Sequence[Tree], batch_size: int = 512) -> tuple:
    """(predicted relatedness (m,), predicted distributions (m, K)) of the
    pairs; for the pair classifier, (predicted class numbers, class
    probabilities)."""
    h_left = encode_sentences(model, params, vocab, left, batch_size)
    h_right = encode_sentences(model, params, vocab, right, batch_size)
    p_hat = model.head.outputs(params.prefixed(model.prefix), h_left, h_right)
    require_finite_outputs(p_hat, np.arange(len(left)), left, 0)
    return model.head.decode(p_hat), p_hat


def mean_vectors(embedding: np.ndarray, vocab, sentences: Sequence[Sequence[str]]) -> np.ndarray:
    """(m, d_x) mean word vector of each sentence; words the vocabulary lacks
    are left out (a sentence of none gets the zero vector)."""
    out = np.zeros((len(sentences), embedding.shape[1]), dtype=np.float64)
    for row, tokens in enumerate(sentences):
        ids = vocab.encode(tokens)
        ids = ids[ids > 0]  # id 0 is the unknown word
        if ids.size:
            out[row] = embedding[ids].mean(axis=0)
    return out


def cosine(query: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Cosine of ``query`` (d,) with each row of ``candidates`` (m, d); 0 for a zero vector."""
    norms = np.linalg.norm(candidates, axis=1) * np.linalg.norm(query)
    dots = candidates @ query
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


@pinned_thread_pools()
def neighbours(model, params, vocab, query: Tree, candidates: Sequence[Tree], top: int = 3) -> dict:
    """The ``top`` candidates by predicted relatedness to ``query`` and by
    mean-vector cosine: {"model": [(score, sentence)], "mean_vector_cosine": [...]}.
    The query itself (the same words) is left out of both rankings."""
    candidates = [tree for tree in candidates if _key(tree.tokens) != _key(query.tokens)]
    if not candidates:
        raise ValueError("no candidate sentences other than the query")
    h_query = encode_sentences(model, params, vocab, [query])
    h_candidates = encode_sentences(model, params, vocab, candidates)
    predicted = model.predict_states(params, np.repeat(h_query, len(candidates), axis=0), h_candidates)
    embedding = np.asarray(params["embedding"], dtype=np.float64)
    similarity = cosine(
        mean_vectors(embedding, vocab, [query.tokens])[0],
        mean_vectors(embedding, vocab, [tree.tokens for tree in candidates]),
    )

    def best(scores):
        order = np.argsort(-scores, kind="stable")[:top]
        return [(float(scores[k]), " ".join(candidates[k].tokens)) for k in order]

    return {"model": best(predicted), "mean_vector_cosine": best(similarity)}


def sample_sentences(task: TaskData, split: str, sample: int | None, rng: np.random.Generator) -> list:
    """The distinct sentences of a split (first appearance order), or a random
    ``sample`` of them kept in that order (Tai: 1000 of the test set)."""
    seen = {}
    for tree in task_trees(task, split):
        seen.setdefault(_key(tree.tokens), tree)
    trees = list(seen.values())
    if sample is not None and sample < len(trees):
        keep = np.sort(rng.choice(len(trees), size=sample, replace=False))
        trees = [trees[k] for k in keep]
    return trees
