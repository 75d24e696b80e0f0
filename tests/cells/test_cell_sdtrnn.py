"""The sdtrnn cell (Socher et al. 2014's SDT-RNN: the DT-RNN with a matrix
per dependency relation, as Tai et al. 2015 train it on SICK).

Forward values against the node-by-node reference on trees with relations;
the relations choose the matrices (a tree without them reads W_dep
throughout); SICK's ``*.rels`` reach the forest the training builds;
gradient checks on random dependency trees; a planted bug; the relation
table's fixed ids.  Every suite setting is checked by tests/cells/test_gradients.py.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from cell_checks import (
    assert_gradients_pass,
    assert_matches_reference,
    errors_with_backward,
    forward_on_tokens,
    random_params,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting
from gradcheck.trees import random_binary_tree, random_dependency_tree
from npcomp.cells import dtrnn, make_cell
from npcomp.cells.reference import sdtrnn as sdtrnn_reference
from npcomp.data.readers.dependency_relations import RELATIONS, relation_id
from npcomp.data.readers.sick import read_sick_dir
from tree_cell_cases import forward_case, planted_case, with_kernel

MODEL = "sdtrnn"
D, D_X = 3, 4


def _trees(seed=5):
    rng = np.random.default_rng(seed)
    trees = [random_dependency_tree(n, rng, max_children=8) for n in (9, 1, 25, 4)]
    labels = ("nsubj", "dobj", "amod", "prep", "pobj", "det", "advmod", "unknown-label")
    return [
        replace(tree, relations=tuple(labels[int(k)] for k in rng.integers(0, len(labels), len(tree.tokens))))
        for tree in trees
    ] + [random_binary_tree(7, rng)]


@pytest.mark.parametrize("dtype,tolerance", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_forward_matches_the_node_by_node_reference(dtype, tolerance):
    cell, trees, vectors, params, forest, h = forward_case(
        make_cell(MODEL, D_X, D), _trees(), np.random.default_rng(3), dtype
    )
    assert forest.relation is None  # the constituency tree has none
    forest_with, h_with = forward_on_tokens(cell, params, trees[:4], vectors[:4], dtype)
    assert forest_with.relation is not None
    assert_matches_reference(
        h_with,
        forest_with,
        trees[:4],
        lambda k, tree: sdtrnn_reference.forward(tree, vectors[k], params)["out"],
        rtol=tolerance,
        atol=tolerance,
    )


def test_relations_choose_the_matrices():
    """W_dep for a tree without relations (SD1), and for an unknown label;
    another relation's matrix changes the state."""
    tree = _trees()[0]
    rng = np.random.default_rng(4)
    cell = make_cell(MODEL, D_X, D)
    params = random_params(cell, rng)
    vectors = [rng.normal(size=(len(tree.tokens), D_X))]
    bare = replace(tree, relations=None)
    generic = replace(tree, relations=("no-such-relation",) * len(tree.tokens))
    every_dep = replace(tree, relations=("dep",) * len(tree.tokens))
    _, h_bare = forward_on_tokens(cell, params, [bare], vectors, np.float64)
    _, h_generic = forward_on_tokens(cell, params, [generic], vectors, np.float64)
    _, h_dep = forward_on_tokens(cell, params, [every_dep], vectors, np.float64)
    _, h_own = forward_on_tokens(cell, params, [tree], vectors, np.float64)
    np.testing.assert_array_equal(h_bare, h_dep)
    np.testing.assert_array_equal(h_generic, h_dep)
    assert np.abs(h_own - h_dep).max() > 1e-3


def test_relation_ids_are_fixed():
    assert len(RELATIONS) == 49 and len(set(RELATIONS)) == 49
    assert relation_id("nsubj") == RELATIONS.index("nsubj")
    assert relation_id("NSUBJ") == relation_id("nsubj")
    assert relation_id("unheard-of") == relation_id("dep")
    assert sdtrnn_reference.RELATIONS == RELATIONS


def test_sick_relations_reach_the_training_forest(tmp_path):
    """A split directory in SICK's layout with *.rels: the relations are read
    with the dependency trees and carried into the pair model's forests; a
    line with too few labels is refused naming its file and line."""
    from npcomp.data.readers.embeddings import Vocabulary
    from npcomp.errors import DataError
    from npcomp.training.encoding import encode_split

    files = {
        "a.toks": "a dog runs\nthe man sleeps\n",
        "b.toks": "dogs run\na man sleeps\n",
        "a.parents": "2 3 0\n2 3 0\n",
        "b.parents": "2 0\n2 3 0\n",
        "a.rels": "det nsubj root\ndet nsubj root\n",
        "b.rels": "nsubj root\ndet nsubj root\n",
        "sim.txt": "4.5\n3.2\n",
        "id.txt": "1\n2\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    pairs = read_sick_dir(tmp_path)
    assert pairs[0].tree_a.relations == ("det", "nsubj", "root")
    vocab = Vocabulary.from_trees([p.tree_a for p in pairs] + [p.tree_b for p in pairs])
    forest = encode_split(pairs, vocab).batch(range(2)).forest
    assert forest.relation is not None
    assert sorted(RELATIONS[r] for r in forest.relation[forest.tree == 0]) == ["det", "nsubj", "root"]
    dog = np.flatnonzero((forest.tree == 0) & (forest.token == 1))[0]  # "dog"
    assert forest.relation[dog] == relation_id("nsubj")
    (tmp_path / "b.rels").write_text("nsubj root\ndet root\n")
    with pytest.raises(DataError, match=r"b.rels.*2.*2 relation\(s\) for 3 token\(s\)"):
        read_sick_dir(tmp_path)


# ---------------------------------------------------------------------------
# gradient checks and a planted bug
# ---------------------------------------------------------------------------

dependency_shapes = st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(1, 30)), min_size=1, max_size=3)


@pytest.mark.parametrize(
    "setting",
    [
        Setting(MODEL, trees="dependency"),
        Setting(MODEL, trees="dependency", supervision="root+leaves", dropout=0.5, l2=0.01),
    ],
    ids=lambda s: s.describe(),
)
@hypothesis_settings(max_examples=5)
@given(shapes=dependency_shapes)
def test_random_dependency_trees(setting, shapes):
    trees = [random_dependency_tree(n_words, np.random.default_rng(seed), max_children=8) for seed, n_words in shapes]
    assert all(tree.relations is not None for tree in trees)
    assert_gradients_pass(setting, trees, np.random.default_rng(shapes[0][0]))


def _case():
    return planted_case(Setting(MODEL, trees="dependency"))


def test_unplanted_case_passes():
    model, params, forest, options = _case()
    assert forest.relation is not None
    assert_passes(check_gradients(model, params, forest, **options))


def test_detects_the_backward_reading_every_child_as_dep(monkeypatch):
    """The backward routes every child through W_dep's block, whatever its relation."""
    route = dtrnn._route_positions.py_func

    def generic(children, slot, span, eps_S, d_h, start, stop):
        route(children, np.where(slot >= 0, relation_id("dep"), -1), span, eps_S, d_h, start, stop)

    errors = errors_with_backward(monkeypatch, _case(), with_kernel(dtrnn, "_route_positions", generic))
    assert errors["embedding"] > TOLERANCE and errors["cell.W"] > TOLERANCE
