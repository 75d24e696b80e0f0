"""npcomp.study.relatedness (sentences to trees, scoring, nearest neighbours, mean
vectors, cosine, sampling) and evaluation.relatedness_metrics, on tiny objects."""

import sys

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from npcomp.data.readers.embeddings import Vocabulary
from npcomp.data.readers.formats import Tree, branching_tree, chain_tree
from npcomp.errors import DataError
from npcomp.study.relatedness import (
    SentenceTrees,
    cosine,
    encode_sentences,
    mean_vectors,
    neighbours,
    sample_sentences,
    score_pairs,
)
from npcomp.data.datasets.tasks import TaskData, load_task, task_trees
from npcomp.training.evaluation import relatedness_metrics
from npcomp.configuration.model_building import build_model
from sick_files import sick_sentences, write_small_sick


@pytest.fixture(scope="module")
def sick_dir(tmp_path_factory):
    return write_small_sick(tmp_path_factory.mktemp("relatedness") / "data")


@pytest.fixture(scope="module")
def dependency_task(sick_dir):
    return load_task("sick", sick_dir, "dependency")


class FakeParser:
    """Records what it is asked to parse; every word's head is the first word."""

    def __init__(self):
        self.calls = []

    def parse(self, sentences):
        self.calls.append(list(sentences))
        return [[0] + [1] * (len(tokens) - 1) for tokens in sentences]


def _same_tree(a: Tree, b: Tree) -> bool:
    return a.tokens == b.tokens and np.array_equal(a.parent, b.parent) and np.array_equal(a.token_index, b.token_index)


# --------------------------------------------------------------------------
# SentenceTrees
# --------------------------------------------------------------------------


def test_chain_structure_needs_no_task():
    to_tree = SentenceTrees("chain")
    tree = to_tree("two  dogs run", "<q>")
    assert _same_tree(tree, chain_tree(["two", "dogs", "run"]))
    assert tree.source == "<q>"


def test_known_sentence_gets_sicks_own_tree(dependency_task):
    parser = FakeParser()
    to_tree = SentenceTrees("dependency", dependency_task, parser=parser)
    pair = dependency_task.splits["dev"][2]
    text = " ".join(pair.tree_b.tokens)
    for variant in (text, text.upper(), text.title()):
        tree = to_tree(variant)
        assert _same_tree(tree, pair.tree_b)
        assert tree.source == pair.tree_b.source  # SICK's parents file and line
        assert tree.source.endswith(".parents:3")
    assert parser.calls == []  # no parsing for a SICK sentence


def test_unknown_sentence_is_parsed(dependency_task):
    parser = FakeParser()
    to_tree = SentenceTrees("dependency", dependency_task, parser=parser)
    tree = to_tree("a zebra juggles fire", "<stdin>:4")
    assert parser.calls == [[("a", "zebra", "juggles", "fire")]]
    assert tree.tokens == ("a", "zebra", "juggles", "fire")
    tree.validate()
    assert tree.n_nodes == 4 and np.all(tree.token_index >= 0)
    # the root reads "a" and the other three words hang from it
    root = int(np.flatnonzero(tree.parent < 0)[0])
    assert tree.tokens[tree.token_index[root]] == "a"
    assert np.count_nonzero(tree.parent == root) == 3


def test_unknown_sentence_of_a_constituency_run_is_parsed_and_binarised(sick_dir):
    task = load_task("sick", sick_dir, "constituency")
    to_tree = SentenceTrees("constituency", task, parser=FakeParser())
    known = task.splits["train"][0].tree_a
    assert _same_tree(to_tree(" ".join(known.tokens)), known)
    assert to_tree.parser.calls == []
    tree = to_tree("a zebra juggles fire", "<query 1>")
    assert to_tree.parser.calls == [[("a", "zebra", "juggles", "fire")]]
    tree.validate()
    assert tree.n_nodes == 7 and np.count_nonzero(tree.token_index >= 0) == 4


def test_tree_choice_and_fallback(dependency_task, monkeypatch):
    tree = SentenceTrees("dependency", dependency_task, tree="left")("a zebra juggles fire")
    assert _same_tree(tree, branching_tree(["a", "zebra", "juggles", "fire"], "left"))
    monkeypatch.setitem(sys.modules, "spacy", None)  # makes `import spacy` fail
    messages = []
    to_tree = SentenceTrees("dependency", dependency_task, warn=messages.append)
    tree = to_tree("a zebra juggles fire")
    assert _same_tree(tree, branching_tree(["a", "zebra", "juggles", "fire"], "right"))
    assert len(messages) == 1 and "npcomp[parse]" in messages[0]
    with pytest.raises(ImportError, match="npcomp"):
        SentenceTrees("dependency", dependency_task, tree="parsed")("a zebra juggles fire")
    with pytest.raises(ValueError, match="chain"):
        SentenceTrees("chain", tree="right")


@pytest.mark.parametrize("structure", ["chain", "dependency", "constituency"])
def test_empty_sentence_is_an_error(structure):
    with pytest.raises(DataError, match="empty sentence"):
        SentenceTrees(structure, parser=FakeParser())("   \t ", "<stdin>:7")


# --------------------------------------------------------------------------
# cosine, mean_vectors
# --------------------------------------------------------------------------


def test_cosine_matches_the_formula(rng):
    query = rng.normal(size=5)
    candidates = rng.normal(size=(4, 5))
    expected = [c @ query / (np.linalg.norm(c) * np.linalg.norm(query)) for c in candidates]
    np.testing.assert_allclose(cosine(query, candidates), expected, rtol=1e-12)
    np.testing.assert_allclose(cosine(query, query[None] * 3.0), [1.0])
    np.testing.assert_allclose(cosine(query, -query[None]), [-1.0])


def test_cosine_of_a_zero_vector_is_zero(rng):
    candidates = np.vstack([rng.normal(size=3), np.zeros(3)])
    scores = cosine(rng.normal(size=3), candidates)
    assert scores[1] == 0.0 and np.all(np.isfinite(scores))
    np.testing.assert_array_equal(cosine(np.zeros(3), candidates), [0.0, 0.0])


def test_mean_vectors_leave_out_unknown_words(rng):
    vocab = Vocabulary(["man", "dog", "runs"])
    embedding = rng.normal(size=(len(vocab), 3))
    means = mean_vectors(embedding, vocab, [["man", "zebra", "runs"], ["zebra", "yak"], ["Dog"]])
    assert means.shape == (3, 3) and means.dtype == np.float64
    np.testing.assert_allclose(means[0], (embedding[1] + embedding[3]) / 2)
    np.testing.assert_array_equal(means[1], np.zeros(3))  # no known word (not row 0)
    np.testing.assert_allclose(means[2], embedding[2])  # the lowercase form's row


# --------------------------------------------------------------------------
# sample_sentences
# --------------------------------------------------------------------------


def _pair_task(sentences):
    """A sick TaskData whose "test" pairs are consecutive sentences of ``sentences``."""
    from npcomp.data.readers.sick import SickPair

    trees = [chain_tree(text.split()) for text in sentences]
    pairs = [SickPair(trees[k], trees[k + 1], 3.0, str(k)) for k in range(0, len(trees), 2)]
    return TaskData("sick", 5, {"train": [], "dev": [], "test": pairs})


def test_sample_sentences_distinct_and_in_order():
    sentences = [
        "a man runs",
        "a dog runs",
        "A Man runs",
        "the cat",
        "a dog runs",
        "the cat",
        "two men",
        "a woman",
        "a dog",
        "the cat sleeps",
    ]
    task = _pair_task(sentences)
    distinct = ["a man runs", "a dog runs", "the cat", "two men", "a woman", "a dog", "the cat sleeps"]
    every = sample_sentences(task, "test", None, np.random.default_rng(0))
    assert [" ".join(t.tokens) for t in every] == distinct  # first appearance kept
    assert len(sample_sentences(task, "test", 100, np.random.default_rng(0))) == len(distinct)
    picked = sample_sentences(task, "test", 4, np.random.default_rng(5))
    texts = [" ".join(t.tokens) for t in picked]
    assert len(texts) == 4 and len(set(texts)) == 4
    positions = [distinct.index(text) for text in texts]
    assert positions == sorted(positions)  # the split's order
    again = sample_sentences(task, "test", 4, np.random.default_rng(5))
    assert [" ".join(t.tokens) for t in again] == texts  # a seed gives one sample
    others = {
        tuple(" ".join(t.tokens) for t in sample_sentences(task, "test", 4, np.random.default_rng(seed)))
        for seed in range(10)
    }
    assert len(others) > 1


def test_sample_sentences_of_the_tiny_sick(dependency_task):
    every = sample_sentences(dependency_task, "test", None, np.random.default_rng(1))
    texts = [" ".join(tree.tokens) for tree in every]
    assert len(texts) == len(set(texts))
    assert set(texts) == set(sick_sentences("test"))
    assert len(task_trees(dependency_task, "test")) == 2 * len(dependency_task.splits["test"])


# --------------------------------------------------------------------------
# neighbours and score_pairs: one model, two code paths
# --------------------------------------------------------------------------

CANDIDATES = [
    "a man is playing",
    "a dog runs in the park",
    "the cat is sleeping",
    "a woman is eating food",
    "two dogs play",
    "a man plays the guitar",
    "A MAN IS RUNNING",
]
QUERY = "a man is running"


@pytest.fixture(scope="module")
def tiny_pair_model():
    words = sorted({w.lower() for text in CANDIDATES + [QUERY] for w in text.split()})
    vocab = Vocabulary(words)
    config = {"model": "lstm", "task": "sick", "embedding_dim": 4, "dim": 3, "similarity_dim": 5}
    model = build_model(config, vocab, 5)
    rng = np.random.default_rng(3)
    params = model.new_parameters(rng, rng.normal(0, 1.0, size=(len(vocab), 4)), dtype=np.float64)
    return model, params, vocab


def test_neighbours_ranking(tiny_pair_model):
    model, params, vocab = tiny_pair_model
    query = chain_tree(QUERY.split())
    candidates = [chain_tree(text.split()) for text in CANDIDATES]
    ranked = neighbours(model, params, vocab, query, candidates, top=3)
    assert set(ranked) == {"model", "mean_vector_cosine"}
    for key in ranked:
        assert len(ranked[key]) == 3
        scores = [score for score, _ in ranked[key]]
        assert scores == sorted(scores, reverse=True)
        # the query is left out, also in another case
        assert all(sentence.lower() != QUERY for _, sentence in ranked[key])
    assert all(1.0 <= score <= 5.0 for score, _ in ranked["model"])
    everything = neighbours(model, params, vocab, query, candidates, top=100)
    assert len(everything["model"]) == len(CANDIDATES) - 1
    assert {s for _, s in everything["model"]} == set(CANDIDATES) - {"A MAN IS RUNNING"}


def test_neighbours_agree_with_score_pairs(tiny_pair_model):
    model, params, vocab = tiny_pair_model
    query = chain_tree(QUERY.split())
    others = [text for text in CANDIDATES if text.lower() != QUERY]
    candidates = [chain_tree(text.split()) for text in others]
    ranked = neighbours(model, params, vocab, query, candidates, top=len(candidates))
    scores, distributions = score_pairs(model, params, vocab, [query] * len(candidates), candidates)
    assert distributions.shape == (len(candidates), 5)
    np.testing.assert_allclose(distributions.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(scores, distributions @ np.arange(1, 6), rtol=1e-12)
    by_sentence = {sentence: score for score, sentence in ranked["model"]}
    assert set(by_sentence) == set(others)
    for text, score in zip(others, scores):
        assert by_sentence[text] == pytest.approx(score, rel=1e-9, abs=1e-12)
    # the mean-vector ranking is the cosine of the embedding rows' means
    embedding = np.asarray(params["embedding"])
    means = mean_vectors(embedding, vocab, [c.tokens for c in candidates])
    expected = cosine(mean_vectors(embedding, vocab, [query.tokens])[0], means)
    by_sentence = {sentence: score for score, sentence in ranked["mean_vector_cosine"]}
    for text, value in zip(others, expected):
        assert by_sentence[text] == pytest.approx(value, rel=1e-9, abs=1e-12)


def test_score_pairs_is_symmetric_and_batch_independent(tiny_pair_model):
    model, params, vocab = tiny_pair_model
    trees = [chain_tree(text.split()) for text in CANDIDATES]
    left, right = trees[:-1], trees[1:]
    forward, _ = score_pairs(model, params, vocab, left, right)
    backward, _ = score_pairs(model, params, vocab, right, left)
    np.testing.assert_allclose(forward, backward, rtol=1e-10)
    in_twos, _ = score_pairs(model, params, vocab, left, right, batch_size=2)
    np.testing.assert_allclose(forward, in_twos, rtol=1e-10)
    states = encode_sentences(model, params, vocab, trees, batch_size=3)
    assert states.shape == (len(trees), model.cell.output_dim)


def test_neighbours_need_another_candidate(tiny_pair_model):
    model, params, vocab = tiny_pair_model
    query = chain_tree(QUERY.split())
    with pytest.raises(ValueError, match="no candidate"):
        neighbours(model, params, vocab, query, [chain_tree(QUERY.upper().split())])


# --------------------------------------------------------------------------
# relatedness_metrics
# --------------------------------------------------------------------------


def test_relatedness_metrics_match_scipy(rng):
    gold = rng.uniform(1, 5, size=30)
    predicted = gold + rng.normal(0, 1.0, size=30)
    metrics = relatedness_metrics(predicted, gold)
    assert metrics["pearson"] == pytest.approx(pearsonr(predicted, gold)[0], abs=1e-12)
    assert metrics["spearman"] == pytest.approx(spearmanr(predicted, gold)[0], abs=1e-12)
    assert metrics["mse"] == pytest.approx(np.mean((predicted - gold) ** 2), rel=1e-12)
    assert metrics["pairs"] == 30
    assert all(type(metrics[key]) is float for key in ("pearson", "spearman", "mse"))


def test_relatedness_metrics_of_a_constant_prediction(rng):
    gold = rng.uniform(1, 5, size=10)
    metrics = relatedness_metrics(np.full(10, 3.0), gold)
    assert metrics["pearson"] == 0.0 and metrics["spearman"] == 0.0
    assert metrics["mse"] == pytest.approx(np.mean((3.0 - gold) ** 2))
    single = relatedness_metrics([2.0], [4.0])
    assert single == {"pearson": 0.0, "spearman": 0.0, "mse": 4.0, "pairs": 1}


def test_relatedness_metrics_known_values():
    gold = np.array([1.0, 2.0, 3.0, 4.0])
    perfect = relatedness_metrics(gold * 2 + 1, gold)
    assert perfect["pearson"] == pytest.approx(1.0) and perfect["spearman"] == pytest.approx(1.0)
    assert perfect["mse"] == pytest.approx(np.mean((gold + 1) ** 2))
    reversed_ = relatedness_metrics(gold[::-1], gold)
    assert reversed_["pearson"] == pytest.approx(-1.0)
    assert reversed_["mse"] == pytest.approx(5.0)  # (9 + 1 + 1 + 9) / 4
