"""The synthetic compositional sentiment treebank: determinism, well-formed
binary trees labelled at every node, the semantics on hand-made phrases, and
that composition decides the label often enough to defeat a bag of words."""

import numpy as np
import pytest
import scipy.optimize

from npcomp.data.readers.formats import NO_TOKEN, chain_tree
from npcomp.data.readers.ptb import parse_ptb
from npcomp.errors import DataError
from npcomp.data.datasets.synthetic import (
    DECISIVE_PHENOMENA,
    LEXICON,
    MAX_WORDS,
    MIN_WORDS,
    N_CLASSES,
    annotate,
    generate_treebank,
    phenomena,
    structure_to_tree,
    synthetic_splits,
)


@pytest.fixture(scope="module")
def splits():
    return synthetic_splits(seed=0)


def label_of(structure) -> int:
    return annotate(structure_to_tree(structure)).root_label


def test_deterministic_for_a_seed():
    first = generate_treebank(60, seed=3)
    second = generate_treebank(60, seed=3)
    for a, b in zip(first, second):
        assert a.tokens == b.tokens
        assert np.array_equal(a.parent, b.parent)
        assert np.array_equal(a.label, b.label)
    other = generate_treebank(60, seed=4)
    assert [tree.tokens for tree in other] != [tree.tokens for tree in first]


def test_splits_sizes_sources_and_no_shared_sentences():
    splits = synthetic_splits(seed=1, sizes=(200, 40, 30))
    assert {name: len(trees) for name, trees in splits.items()} == {"train": 200, "dev": 40, "test": 30}
    assert splits["dev"][16].source == "synthetic:dev:17"
    sentences = [{tree.tokens for tree in trees} for trees in splits.values()]
    assert sum(map(len, sentences)) == 270  # distinct within and across splits
    alone = generate_treebank(200, seed=1)
    assert [tree.tokens for tree in alone] == [tree.tokens for tree in splits["train"]]
    with pytest.raises(ValueError, match="sizes"):
        synthetic_splits(seed=1, sizes=(10, 10))


def test_binary_trees_labelled_at_every_node(splits):
    for trees in splits.values():
        for tree in trees:
            tree.validate(n_classes=N_CLASSES)
            assert np.all((tree.label >= 0) & (tree.label < N_CLASSES))
            assert MIN_WORDS <= len(tree.tokens) <= MAX_WORDS
            assert tree.n_nodes == 2 * len(tree.tokens) - 1
            kids = tree.children()
            for node in range(tree.n_nodes):
                if tree.token_index[node] == NO_TOKEN:
                    assert len(kids[node]) == 2
                else:
                    assert kids[node] == []
            leaves = tree.token_index[tree.token_index != NO_TOKEN]
            assert leaves.tolist() == list(range(len(tree.tokens)))
            assert np.array_equal(annotate(tree).label, tree.label)


def test_varied_lengths_shapes_and_classes(splits):
    train = splits["train"]
    lengths = np.array([len(tree.tokens) for tree in train])
    assert lengths.min() == MIN_WORDS and lengths.max() >= 20
    assert len(set(lengths.tolist())) >= 15
    assert len({tree.parent.tobytes() for tree in train}) >= 500
    shares = np.bincount([tree.root_label for tree in train], minlength=N_CLASSES) / len(train)
    assert np.all(shares > 0.1)


@pytest.mark.parametrize(
    "structure, label",
    [
        ("good", 3),
        ("excellent", 4),
        ("bad", 1),
        ("awful", 0),
        ("film", 2),
        ("not", 2),
        (("not", "good"), 1),
        (("not", "excellent"), 1),
        (("not", "bad"), 3),
        (("hardly", "terrible"), 3),
        (("not", "film"), 2),
        (("very", "good"), 4),
        (("extremely", "bad"), 0),
        (("very", "excellent"), 4),
        (("very", "film"), 2),
        (("not", ("very", "good")), 1),
        (("really", ("not", "good")), 0),
        (("bad", ("but", ("very", "good"))), 4),
        (("good", ("but", "dull")), 1),
        (("good", ("yet", "awful")), 0),
        (("good", ("although", "dull")), 3),
        (("awful", ("though", "good")), 0),
        (("good", ("and", "dull")), 2),
        (("good", "excellent"), 4),
        ((("the", "film"), ("is", "good")), 3),
        ((("the", ("good", "film")), ("is", "dull")), 2),
        ((("the", "masterpiece"), ("is", "good")), 4),
        ((("the", "film"), ("never", ("is", "good"))), 1),
        (((("the", "plot"), ("is", "bad")), ("but", (("the", "cast"), ("is", "superb")))), 4),
    ],
)
def test_rules_on_hand_made_phrases(structure, label):
    assert label_of(structure) == label


def test_labels_of_every_node():
    tree = annotate(structure_to_tree(("bad", ("but", ("very", "good")))))
    # post-order: bad, but, very, good, (very good), (but ...), root
    assert tree.tokens == ("bad", "but", "very", "good")
    assert tree.label.tolist() == [1, 2, 2, 3, 4, 4, 4]


def test_annotate_ptb_tree_and_errors():
    tree = parse_ptb("(X (X it) (X (X is) (X (X not) (X bad))))", require_labels=False)
    assert annotate(tree).to_ptb() == "(3 (2 it) (3 (2 is) (3 (2 not) (1 bad))))"
    with pytest.raises(DataError, match=r"s\.txt:4: word 'splendid' is not in the synthetic"):
        annotate(parse_ptb("(X (X not) (X splendid))", "s.txt:4", require_labels=False))
    with pytest.raises(DataError, match="has 3 children, not 2"):
        annotate(parse_ptb("(X (X the) (X good) (X film))", require_labels=False))
    with pytest.raises(DataError, match="reads a word and has children"):
        annotate(chain_tree(["not", "good"]))


@pytest.mark.parametrize(
    "structure, expected",
    [
        (("not", "good"), {"negation", "reversal"}),
        (("very", "good"), {"intensifier"}),
        (("excellent", ("but", "bad")), {"contrast", "reversal"}),
        (("good", ("but", "awful")), {"contrast"}),
        (("bad", ("although", "good")), {"contrast", "reversal"}),
        ((("the", "film"), ("is", "good")), set()),
    ],
)
def test_phenomena(structure, expected):
    assert phenomena(annotate(structure_to_tree(structure))) == expected


def test_composition_decisive_share(splits):
    found = [phenomena(tree) for tree in splits["train"]]
    decisive = np.mean([bool(names & DECISIVE_PHENOMENA) for names in found])
    reversal = np.mean(["reversal" in names for names in found])
    assert decisive > 0.5
    assert reversal > 0.3


def bag_of_words(trees, vocabulary):
    """Mean of one-hot word vectors: (n_trees, n_words)."""
    features = np.zeros((len(trees), len(vocabulary)))
    for row, tree in enumerate(trees):
        for token in tree.tokens:
            features[row, vocabulary[token]] += 1.0 / len(tree.tokens)
    return features


def test_bag_of_words_fails_where_composition_matters(splits):
    """The best mean-of-word-vectors + softmax model (one-hot vectors, so any
    embedding's mean is a linear image of these features) is weak on roots,
    and weakest on sentences with negation or contrast; the semantics itself
    (what a tree model can learn) labels every root."""
    vocabulary = {word: index for index, word in enumerate(sorted(LEXICON))}
    n_words = len(vocabulary)
    features = bag_of_words(splits["train"], vocabulary)
    targets = np.array([tree.root_label for tree in splits["train"]])
    rows = np.arange(len(targets))
    l2 = 1e-4

    def loss_and_gradient(theta):
        weights = theta[:-N_CLASSES].reshape(n_words, N_CLASSES)
        scores = features @ weights + theta[-N_CLASSES:]
        scores -= scores.max(axis=1, keepdims=True)
        probabilities = np.exp(scores)
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        loss = -np.log(probabilities[rows, targets]).mean() + l2 / 2 * np.sum(weights**2)
        d_scores = probabilities
        d_scores[rows, targets] -= 1.0
        d_scores /= len(targets)
        d_weights = features.T @ d_scores + l2 * weights
        return loss, np.concatenate([d_weights.ravel(), d_scores.sum(axis=0)])

    fit = scipy.optimize.minimize(loss_and_gradient, np.zeros((n_words + 1) * N_CLASSES), jac=True, method="L-BFGS-B")
    weights = fit.x[:-N_CLASSES].reshape(n_words, N_CLASSES)
    test = splits["test"]
    predicted = (bag_of_words(test, vocabulary) @ weights + fit.x[-N_CLASSES:]).argmax(axis=1)
    correct = predicted == np.array([tree.root_label for tree in test])
    decisive = np.array([bool(phenomena(tree) & DECISIVE_PHENOMENA) for tree in test])
    assert correct.mean() < 0.5
    assert correct[decisive].mean() < 0.4
    assert correct[~decisive].mean() > correct[decisive].mean() + 0.15
    assert all(annotate(tree).root_label == tree.root_label for tree in test)
