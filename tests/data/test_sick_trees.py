"""SICK's tree layout made by npcomp from the release files (sick_trees.py,
``npcomp download sick-trees``): the binarisation of a dependency tree, the
copula's relations, the layout made from stand-in release archives served
on 127.0.0.1 (equal in shape to the Tree-LSTM authors' files), what is kept
unasked, and the agreement measure of two layouts."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.server
import json
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from npcomp.data.downloads import download
from npcomp.data.text.dependency_parser import predicate_heads, predicate_relations
from npcomp.data.downloads.download import DATASETS, fetch, installed
from npcomp.errors import DataError
from npcomp.data.readers.parents import parents_to_tree
from npcomp.data.readers.sick import RELEASE_FILES, read_sick_dir
from npcomp.data.downloads.sick_tree_agreement import constituents, layout_agreement
from npcomp.data.downloads.sick_trees import RECORD, SPLIT_FILES, head_outward_cparents, parser_missing, sick_tokens

needs_parser = pytest.mark.skipif(
    parser_missing() is not None,
    reason=f"{parser_missing()} (the layout is parsed by the parse extra's spaCy pipeline)",
)


# --------------------------------------------------------------------------
# the constituency tree of a dependency tree
# --------------------------------------------------------------------------


def test_a_head_takes_its_right_dependents_then_its_left_ones():
    # a man is playing a guitar: (a man) (is (playing (a guitar)))
    heads = [2, 4, 4, 0, 6, 4]
    cparents = head_outward_cparents(heads)
    assert cparents == [8, 8, 10, 9, 7, 7, 9, 11, 10, 11, 0]
    spans = {tuple(sorted(span)) for span in constituents(cparents, 6)}
    assert spans == {(0, 1), (4, 5), (3, 4, 5), (2, 3, 4, 5), (0, 1, 2, 3, 4, 5)}


def _random_heads(rng, n: int) -> list:
    """A random dependency tree of n tokens (1-based heads, 0 at the root)."""
    order = rng.permutation(n)
    heads = [0] * n
    for k in range(1, n):
        heads[order[k]] = int(order[rng.integers(k)]) + 1
    return heads


def test_every_tokens_phrase_is_a_constituent_of_a_binary_tree():
    """On random trees: 2T - 1 nodes, the leaves exactly the tokens, every
    inner node two children, and each head's whole dependency subtree one
    constituent."""
    rng = np.random.default_rng(5)
    for n in [1, 2, 3, 7, 30, 200]:
        heads = _random_heads(rng, n)
        cparents = head_outward_cparents(heads)
        assert len(cparents) == 2 * n - 1 and cparents.count(0) == 1
        tree = parents_to_tree(cparents, [f"w{k}" for k in range(n)], n)
        assert len(tree.parent) == 2 * n - 1
        assert all(count == 2 for count in np.bincount([p - 1 for p in cparents if p])[n:])
        spans = constituents(cparents, n)
        for head in range(n):
            subtree, grown = {head}, True
            while grown:
                more = {k for k in range(n) if heads[k] - 1 in subtree} - subtree
                subtree |= more
                grown = bool(more)
            assert frozenset(subtree) in spans or len(subtree) == 1


def test_a_deep_chain_needs_no_recursion():
    n = 5000
    cparents = head_outward_cparents([k + 2 for k in range(n - 1)] + [0])
    assert len(cparents) == 2 * n - 1 and cparents[-1] == 0


@pytest.mark.parametrize(
    "heads, message", [([0, 0], "2 roots"), ([2, 1], "0 roots"), ([2, 3, 2, 0], "a cycle"), ([3, 0], "out of range")]
)
def test_what_is_no_dependency_tree_is_refused(heads, message):
    with pytest.raises(ValueError, match=message):
        head_outward_cparents(heads)


def test_a_copula_headed_by_its_predicate_is_cop():
    # the man is happy: spaCy heads it by "is" (ROOT) with "happy" its acomp
    words, positions = ["the", "man", "is", "happy"], [1, 2, 2, 2]
    relations = ["det", "nsubj", "ROOT", "acomp"]
    assert predicate_heads(words, positions, relations) == [1, 3, 3, 3]
    assert predicate_relations(words, positions, relations) == ["det", "nsubj", "cop", "ROOT"]


def test_sick_tokens_are_the_stanford_tokenisers():
    assert sick_tokens("The man isn't adding seasoning to the/some water ") == [
        "The",
        "man",
        "is",
        "n't",
        "adding",
        "seasoning",
        "to",
        "the/some",
        "water",
    ]


# --------------------------------------------------------------------------
# the layout made from release archives served on 127.0.0.1
# --------------------------------------------------------------------------

HEADER = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
RELEASES = {
    "SICK_train.txt": HEADER + "1\tA man is playing a guitar\tA man is playing an instrument\t"
    "4.6\tENTAILMENT\n"
    "2\tThe kids are happy \tNo child is happy\t3.1\tCONTRADICTION\n"
    "3\tA woman isn't slicing the/some onion\tA dog runs\t1.2\t"
    "NEUTRAL\n",
    "SICK_trial.txt": HEADER + "4\tTwo dogs are playing in the snow\tDogs play in snow\t4.9\tENTAILMENT\n",
    "SICK_test_annotated.txt": HEADER + "5\tA cat sleeps\tThe cat is sleeping on a sofa\t4\t"
    "ENTAILMENT\n"
    "6\tNobody is riding a horse\tA man rides a horse\t"
    "2.5\tCONTRADICTION\n",
}


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def served_sick(tmp_path, monkeypatch):
    """The stand-in release archives under their official names on a
    127.0.0.1 HTTP server, the catalogue's MD5s theirs; the server's URL."""
    root = tmp_path / "served"
    root.mkdir()
    for name, text in RELEASES.items():
        with zipfile.ZipFile(root / name.lower().replace(".txt", ".zip"), "w") as archive:
            archive.writestr(name, text)
    entry = DATASETS["sick"]
    archives = tuple(
        dataclasses.replace(
            archive,
            members=tuple(
                dataclasses.replace(member, md5=hashlib.md5(RELEASES[Path(member.target).name].encode()).hexdigest())
                for member in archive.members
            ),
        )
        for archive in entry.archives
    )
    monkeypatch.setitem(DATASETS, "sick", dataclasses.replace(entry, archives=archives))
    handler = functools.partial(QuietHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    monkeypatch.setenv(download.BASE_URL_ENV, f"http://127.0.0.1:{httpd.server_address[1]}/")
    try:
        yield
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture(scope="module")
def parser():
    from npcomp.data.text.dependency_parser import SpacyParser

    return SpacyParser()


def _fetched(data_dir: Path, parser, monkeypatch, force: bool = False) -> list:
    """sick, then sick-trees, as `npcomp download sick sick-trees` does,
    with the module's parser (loaded once)."""
    import npcomp.data.text.dependency_parser

    monkeypatch.setattr(npcomp.data.text.dependency_parser, "SpacyParser", lambda: parser)
    fetch("sick", data_dir, progress=False)
    return fetch("sick-trees", data_dir, progress=False, force=force)


def _kinds(lines: list) -> list:
    """The kinds of the fields of ``lines``: whole numbers, numbers, words."""

    def kind(field):
        for cast, name in ((int, "int"), (float, "number")):
            try:
                cast(field)
                return name
            except ValueError:
                pass
        return "word"

    kinds = {kind(field) for line in lines for field in line.split()}
    return sorted(kinds - {"int"} if "number" in kinds else kinds)


@needs_parser
def test_the_layout_made_from_the_release_files(tmp_path, served_sick, parser, monkeypatch, request):
    data_dir = tmp_path / "data"
    paths = _fetched(data_dir, parser, monkeypatch)
    sick = data_dir / "sick"
    assert paths == [sick / split / name for split in RELEASE_FILES for name in SPLIT_FILES]
    assert installed("sick-trees", data_dir)
    pairs = {"train": 3, "dev": 1, "test": 2}
    for split, count in pairs.items():
        directory = sick / split
        lines = {name: (directory / name).read_text(encoding="utf-8").splitlines() for name in SPLIT_FILES}
        assert {len(text) for text in lines.values()} == {count}
        for side in "ab":
            for k in range(count):
                n = len(lines[f"{side}.toks"][k].split())
                assert len(lines[f"{side}.parents"][k].split()) == n
                assert len(lines[f"{side}.rels"][k].split()) == n
                assert len(lines[f"{side}.cparents"][k].split()) == 2 * n - 1
        for structure in ("dependency", "constituency"):
            assert len(read_sick_dir(directory, structure)) == count
    train = sick / "train"
    assert train.joinpath("a.txt").read_text().splitlines()[1] == "The kids are happy "
    assert train.joinpath("a.toks").read_text().splitlines()[2] == ("A woman is n't slicing the/some onion")
    assert train.joinpath("sim.txt").read_text() == "4.6\n3.1\n1.2\n"
    assert train.joinpath("id.txt").read_text() == "1\n2\n3\n"
    # "a man is playing a guitar": spaCy's heads as the Stanford parser gives them
    assert train.joinpath("a.parents").read_text().splitlines()[0] == "2 4 4 0 6 4"
    assert train.joinpath("a.rels").read_text().splitlines()[0].split()[3] == "root"
    record = json.loads((sick / RECORD).read_text())
    import spacy

    assert (record["parser"], record["spacy"]) == ("spaCy", spacy.__version__)
    assert record["model_version"] == parser.nlp.meta["version"]
    assert record["pairs"] == pairs and len(record["files"]) == 3 * len(SPLIT_FILES)
    assert record["files"]["dev/a.toks"] == hashlib.md5((sick / "dev" / "a.toks").read_bytes()).hexdigest()
    assert not list(sick.glob(".trees-*"))
    _same_shape_as_the_authors(sick, request)


def _same_shape_as_the_authors(sick: Path, request) -> None:
    """Each split directory holds the files of the authors' layout in the
    tests' data directory, each line of the same kind of fields."""
    try:
        authors = request.getfixturevalue("data_dir") / "sick"
    except pytest.skip.Exception:
        return  # without the real data: the shape above is the documented one
    for split in RELEASE_FILES:
        assert sorted(path.name for path in (authors / split).iterdir() if path.name in SPLIT_FILES) == sorted(
            SPLIT_FILES
        )
        for name in SPLIT_FILES:
            if name.endswith(".txt") and name != "sim.txt":
                continue  # sentences: any words
            ours = (sick / split / name).read_text().splitlines()
            theirs = (authors / split / name).read_text().splitlines()
            assert _kinds(ours) == _kinds(theirs), (split, name)


@needs_parser
def test_a_layout_present_is_kept_unless_forced(tmp_path, served_sick, parser, monkeypatch, capsys):
    data_dir = tmp_path / "data"
    _fetched(data_dir, parser, monkeypatch)
    # the authors' files stand in for ours: no record of npcomp's
    (data_dir / "sick" / RECORD).unlink()
    tokens = data_dir / "sick" / "dev" / "a.toks"
    tokens.write_text("Two dogs are playing in the snow\n")
    _fetched(data_dir, parser, monkeypatch)
    assert "already present (not made by npcomp: kept" in capsys.readouterr().err
    assert tokens.read_text() == "Two dogs are playing in the snow\n"
    _fetched(data_dir, parser, monkeypatch, force=True)
    assert (data_dir / "sick" / RECORD).is_file()
    (data_dir / "sick" / "test" / "b.rels").unlink()
    with pytest.raises(DataError, match="not every file of the layout"):
        _fetched(data_dir, parser, monkeypatch)


def test_without_the_release_files_nothing_is_made(tmp_path):
    with pytest.raises(DataError, match=r"SICK_train\.txt: no such file.*npcomp download sick"):
        fetch("sick-trees", tmp_path / "data", progress=False)
    assert not (tmp_path / "data" / "sick" / "train").exists()


# --------------------------------------------------------------------------
# the agreement of two layouts
# --------------------------------------------------------------------------


def _layout(data_dir: Path, sentences: list) -> Path:
    """A layout of ``sentences`` ([(tokens, heads, relations)] per side
    pair) in every split."""
    for split in RELEASE_FILES:
        directory = data_dir / "sick" / split
        directory.mkdir(parents=True)
        files = {name: [] for name in SPLIT_FILES}
        for number, pair in enumerate(sentences, start=1):
            files["id.txt"].append(str(number))
            files["sim.txt"].append("3")
            for side, (tokens, heads, relations) in zip("ab", pair):
                files[f"{side}.txt"].append(" ".join(tokens))
                files[f"{side}.toks"].append(" ".join(tokens))
                files[f"{side}.parents"].append(" ".join(map(str, heads)))
                files[f"{side}.rels"].append(" ".join(relations))
                files[f"{side}.cparents"].append(" ".join(map(str, head_outward_cparents(heads))))
        for name, lines in files.items():
            (directory / name).write_text("\n".join(lines) + "\n")
    return data_dir


def test_the_agreement_of_two_layouts(tmp_path):
    guitar = ("A man is playing a guitar".split(), [2, 4, 4, 0, 6, 4], ["det", "nsubj", "aux", "root", "det", "dobj"])
    runs = ("A dog runs".split(), [2, 3, 0], ["det", "nsubj", "root"])
    ours = _layout(tmp_path / "ours", [(guitar, runs)])
    same = layout_agreement(ours, ours)["all"]
    assert same["sentences"] == same["identical_tokens"] == 6
    assert same["same_heads"] == same["same_relations"] == same["compared_tokens"] == 27
    assert same["same_constituents"] == same["constituents"] == 21
    # "a" headed by "playing" instead of "guitar"; "runs" tokenised otherwise
    other = (guitar[0], [2, 4, 4, 0, 4, 4], guitar[2])
    retokenised = ("A dog run s".split(), [2, 3, 0, 3], ["det", "nsubj", "root", "dep"])
    theirs = _layout(tmp_path / "theirs", [(other, retokenised)])
    agreement = layout_agreement(ours, theirs)["all"]
    assert agreement["identical_tokens"] == 3 and agreement["compared_tokens"] == 18
    assert agreement["same_heads"] == 15 and agreement["all_heads_same"] == 0
    assert agreement["tokens"] == 30 and agreement["tokens_matched"] == 24
    # theirs: (playing a) and (playing a guitar) where ours has (a guitar) and (playing a guitar)
    assert agreement["constituents"] == 15 and agreement["same_constituents"] == 12
