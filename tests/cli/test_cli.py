"""The command line: train / eval / predict on the small synthetic treebank, clear
errors (exit status 2, file and line named, no traceback) on bad input, and the
real SST's sentence counts when the data is present."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import npcomp.cli
import npcomp.data.datasets.synthetic
from npcomp.cells import registry
from npcomp.cli import main
from npcomp.data.readers.ptb import parse_ptb
from npcomp.data.datasets.tasks import load_task
from conftest import synthetic_of_size

REPO_ROOT = Path(__file__).resolve().parents[2]
SIZES = (60, 30, 30)
TINY = ["--dim", "8", "--embedding-dim", "8", "--epochs", "1", "--quiet"]


small_splits = synthetic_of_size(SIZES)


@pytest.fixture(autouse=True)
def small_synthetic(monkeypatch):
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """`npcomp train` on synthetic (with its bag-of-words baseline): (run dir, stdout)."""
    run_dir = tmp_path_factory.mktemp("cli") / "run"
    output = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)
        patch.setattr(sys, "stdout", output)
        status = main(["train", "--task", "synthetic", *TINY, "--out", str(run_dir)])
    assert status == 0
    return run_dir, output.getvalue()


def test_baseline_ignores_the_models_cell_options(tmp_path, capsys):
    """Options of the model's cell (--untied, --embedding-masks) are not the
    bag-of-words baseline's: it still trains beside a BiLSTM given them."""
    run_dir = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--task",
                "synthetic",
                "--model",
                "bilstm",
                "--untied",
                "--embedding-dropout",
                "0.3",
                "--embedding-masks",
                "per-direction",
                *TINY,
                "--out",
                str(run_dir),
            ]
        )
        == 0
    )
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["config"]["embedding_masks"] == "per-direction"
    baseline = json.loads((run_dir / "baseline" / "metrics.json").read_text())
    # the baseline's configuration is mean-vectors' own (unset: None)
    assert baseline["config"].get("untied") is None
    assert baseline["config"].get("embedding_masks") is None


def test_help_defaults(capsys):
    assert main(["train", "--model", "recnn", "--task", "sst5", "--help-defaults"]) == 0
    defaults = json.loads(capsys.readouterr().out)
    assert defaults["dim"] == 50 and defaults["embedding_dim"] == 100
    assert "Le & Zuidema" in defaults["source"]
    assert main(["train", "--help-defaults"]) == 0  # treelstm-nary on synthetic
    defaults = json.loads(capsys.readouterr().out)
    assert defaults["optimizer"] == "adagrad" and "epochs" in defaults


@pytest.mark.parametrize("model", sorted(registry.MODELS))
def test_every_model_has_paper_defaults(model, capsys):
    """Each registered model has its paper's setting for SST and a synthetic one."""
    for task in ("sst5", "synthetic"):
        assert main(["train", "--model", model, "--task", task, "--help-defaults"]) == 0
        defaults = json.loads(capsys.readouterr().out)
        assert defaults["source"] and defaults["dim"] >= 1 and defaults["epochs"] >= 1


def test_protocol_selects_the_other_papers_setting(capsys):
    assert main(["train", "--model", "bilstm", "--task", "sst5", "--protocol", "nayebi", "--help-defaults"]) == 0
    defaults = json.loads(capsys.readouterr().out)
    assert defaults["supervision"] == "root" and defaults["dim"] == 300
    assert defaults["recurrent_dropout"] == [0.3] and "Nayebi" in defaults["source"]
    # Nayebi's two LSTMs, each with its own dropout on the word vectors; Tai's
    # BiLSTM shares its weights
    assert defaults["untied"] and defaults["embedding_masks"] == "per-direction"
    assert main(["train", "--model", "bilstm", "--task", "sst5", "--help-defaults"]) == 0
    defaults = json.loads(capsys.readouterr().out)
    assert not defaults["untied"] and defaults.get("embedding_masks", "shared") == "shared"
    assert main(["train", "--model", "rntn", "--protocol", "nayebi", "--help-defaults"]) == 2
    assert "--protocol: for rntn must be one of ['paper']" in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "train" in capsys.readouterr().out


def test_train_writes_the_run_and_the_baseline(trained_run):
    run_dir, output = trained_run
    for name in ("metrics.json", "model.npz", "log.jsonl"):
        assert (run_dir / name).is_file(), name
        assert (run_dir / "baseline" / name).is_file(), name
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["model"] == "treelstm-nary" and len(metrics["epochs"]) == 1
    assert metrics["config"]["dim"] == 8 and metrics["config"]["embedding_dim"] == 8
    baseline = json.loads((run_dir / "baseline" / "metrics.json").read_text())
    assert baseline["model"] == "mean-vectors"
    assert baseline["config"]["dim"] == baseline["config"]["embedding_dim"] == 8
    assert "treelstm-nary on synthetic: best epoch 1" in output
    assert "mean-vectors (bag of words)" in output


def test_eval_reproduces_the_test_metrics(trained_run, capsys):
    run_dir, _ = trained_run
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert main(["eval", "--run", str(run_dir)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["split"] == "test"
    assert result["root_acc"] == metrics["test"]["root_acc"]
    assert result["all_acc"] == metrics["test"]["all_acc"]
    assert main(["eval", "--run", str(run_dir), "--split", "dev"]) == 0
    assert json.loads(capsys.readouterr().out)["root_acc"] == metrics["dev"]["root_acc"]


def test_predict_reads_trees_and_sentences(trained_run, capsys, monkeypatch):
    run_dir, _ = trained_run
    lines = "(3 (2 it) (3 (2 is) (3 good)))\nthe film is not very good\n(X (X awful) (X film))\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    assert main(["predict", "--run", str(run_dir)]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 3
    for record, words in zip(records, [["it", "is", "good"], "the film is not very good".split(), ["awful", "film"]]):
        assert 0 <= record["label"] < 5
        probabilities = np.array(record["probabilities"])
        assert probabilities.shape == (5,)
        assert probabilities.sum() == pytest.approx(1.0, abs=1e-4)
        assert record["label"] == int(np.argmax(probabilities))
        tree = parse_ptb(record["tree"])  # every node labelled with a class
        assert list(tree.tokens) == words
        assert tree.root_label == record["label"]
        assert np.all((tree.label >= 0) & (tree.label < 5))


def test_predict_with_a_sequence_model(tmp_path, capsys, monkeypatch):
    """A chain-structure run (the lstm) reads trees and sentences as sequences."""
    run_dir = tmp_path / "lstm"
    assert main(["train", "--model", "lstm", *TINY, "--no-baseline", "--out", str(run_dir)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO("(3 (2 it) (3 (2 is) (3 good)))\nnot good\n"))
    assert main(["predict", "--run", str(run_dir)]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [record["tokens"] for record in records] == [["it", "is", "good"], ["not", "good"]]
    for record in records:
        assert record["label"] == int(np.argmax(record["probabilities"]))


@pytest.mark.parametrize(
    "model", ["lstm2", "bilstm2", "lstm-global-attn", "lstm-recurrent-attn", "rnn", "mrnn", "matrix-space"]
)
def test_every_sequence_model_trains_and_predicts(model, tmp_path, capsys, monkeypatch):
    """Each sequence model end to end with its own defaults (chains; spans or
    root labels; the matrix-space model's d^2-number word matrices)."""
    run_dir = tmp_path / model
    assert main(["train", "--model", model, *TINY, "--no-baseline", "--out", str(run_dir)]) == 0
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["config"]["structure"] == "chain" and 0 <= metrics["test"]["root_acc"] <= 100
    if model == "matrix-space":
        assert metrics["config"]["embedding_dim"] == metrics["config"]["dim"] ** 2
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO("not a good film\n"))
    assert main(["predict", "--run", str(run_dir)]) == 0
    assert json.loads(capsys.readouterr().out)["tokens"] == ["not", "a", "good", "film"]


def test_predict_empty_stdin(trained_run, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["predict", "--run", str(trained_run[0])]) == 0
    assert capsys.readouterr().out == ""


def test_predict_empty_line_is_an_error(trained_run, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("a good film\n\nbad\n"))
    assert main(["predict", "--run", str(trained_run[0])]) == 2
    captured = capsys.readouterr()
    assert "<stdin>:2" in captured.err and "empty line" in captured.err
    # the other lines labelled, the empty one in its own record
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert [record["line"] for record in records] == [1, 2, 3]
    assert records[1] == {"line": 2, "error": "empty line (expected a sentence or a bracketed tree)"}
    assert "Traceback" not in captured.err


def test_predict_bad_tree_is_an_error(trained_run, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("good\n(2 (2 unbalanced)\n"))
    assert main(["predict", "--run", str(trained_run[0])]) == 2
    assert "<stdin>:2" in capsys.readouterr().err


def test_predict_without_a_model(tmp_path, capsys):
    assert main(["predict", "--run", str(tmp_path)]) == 1
    assert "model.npz" in capsys.readouterr().err


def test_train_sst_without_data(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    status = main(["train", "--task", "sst5", "--data-dir", str(empty), *TINY, "--out", str(tmp_path / "run")])
    assert status == 2
    error = capsys.readouterr().err
    assert str(empty / "sst" / "train.txt") in error
    assert "npcomp download" in error
    assert "Traceback" not in error


@pytest.mark.parametrize(
    "model,option",
    [
        ("treelstm-nary", "--activation=sigmoid"),
        ("slstm", "--untied"),
        ("rntn", "--tied"),
        ("treelstm-nary", "--recurrent-dropout=0.3"),
        ("rnn", "--no-output-gate"),
        ("lstm", "--layer-outputs=all"),
        ("recnn", "--leaf-activation=tanh"),
    ],
)
def test_option_the_model_does_not_take_is_an_error(model, option, tmp_path, capsys):
    status = main(["train", "--model", model, *TINY, option, "--out", str(tmp_path / "run")])
    assert status == 2  # command-line misuse
    assert f"does not apply to {model}" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "option,message",
    [
        ("--recurrent-dropout=0.3,x", "separated by commas"),
        ("--recurrent-dropout=0.3,1.5", "in [0, 1)"),
        ("--embedding-dropout=1", "in [0, 1)"),
    ],
)
def test_bad_dropout_rates_are_errors(option, message, tmp_path, capsys):
    status = main(["train", "--model", "lstm", *TINY, option, "--out", str(tmp_path / "run")])
    assert status == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_sequence_dropout_and_ordinal_head_from_the_command_line(tmp_path, capsys, monkeypatch):
    run_dir = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--model",
                "lstm",
                *TINY,
                "--no-baseline",
                "--head",
                "ordinal",
                "--embedding-dropout",
                "0.2",
                "--recurrent-dropout",
                "0.3",
                "--out",
                str(run_dir),
            ]
        )
        == 0
    )
    config = json.loads((run_dir / "metrics.json").read_text())["config"]
    assert config["head"] == "ordinal" and config["recurrent_dropout"] == [0.3]
    assert config["embedding_dropout"] == 0.2
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO("not good\n"))
    assert main(["predict", "--run", str(run_dir)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert len(record["cumulative_probabilities"]) == 4 and 0 <= record["label"] <= 4


def test_summary_groups_seeds(tmp_path, capsys):
    """Runs differing only in the seed form one group; another setting its own."""
    for seed in (1, 2, 3):
        assert main(["train", *TINY, "--no-baseline", "--seed", str(seed), "--out", str(tmp_path / f"s{seed}")]) == 0
    assert main(["train", *TINY, "--no-baseline", "--dropout", "0.1", "--out", str(tmp_path / "other")]) == 0
    capsys.readouterr()
    runs = [str(tmp_path / name) for name in ("s1", "s2", "other", "s3")]
    assert main(["summary", "--json", *runs]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["seeds"] for r in records] == [[1, 2, 3], [1]]
    assert records[1]["differs"] == {"dropout": 0.1} and records[0]["differs"]["dropout"] == 0.0
    roots = [json.loads((tmp_path / f"s{seed}" / "metrics.json").read_text())["test"]["root_acc"] for seed in (1, 2, 3)]
    summary = records[0]["test_root_acc"]
    assert summary["mean"] == pytest.approx(np.mean(roots))
    assert summary["std"] == pytest.approx(np.std(roots, ddof=1))
    assert (summary["median"], summary["min"], summary["max"], summary["n"]) == (
        pytest.approx(np.median(roots)),
        min(roots),
        max(roots),
        3,
    )
    from scipy import stats

    low, high = stats.t.interval(0.95, 2, loc=np.mean(roots), scale=stats.sem(roots))
    assert summary["ci95"] == [pytest.approx(low), pytest.approx(high)]
    assert records[1]["test_root_acc"]["ci95"] is None  # one seed bounds nothing
    devs = [json.loads((tmp_path / f"s{seed}" / "metrics.json").read_text())["dev"]["root_acc"] for seed in (1, 2, 3)]
    assert records[0]["dev_root_acc"]["mean"] == pytest.approx(np.mean(devs))
    assert main(["summary", *runs]) == 0
    assert "treelstm-nary" in capsys.readouterr().out
    assert main(["summary", "--markdown", *runs]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("| setting | n |") and len(table) == 4
    assert f"| root {np.mean(roots):.2f} ± " in table[2]
    assert main(["summary", str(tmp_path)]) == 1
    assert "no metrics.json" in capsys.readouterr().err


def test_threads_must_be_positive(capsys):
    assert main(["eval", "--run", "x", "--threads", "0"]) == 2
    assert "--threads: compute threads must be a whole number >= 1, not 0" in capsys.readouterr().err


def test_python_dash_m_help():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, "-m", "npcomp", "--help"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    for command in ("train", "eval", "predict", "download"):
        assert command in done.stdout


def test_real_sst_sentence_counts(data_dir):
    sst2 = load_task("sst2", data_dir)
    assert sst2.n_classes == 2
    assert {name: len(trees) for name, trees in sst2.splits.items()} == {"train": 6920, "dev": 872, "test": 1821}
    assert all(tree.root_label in (0, 1) for tree in sst2.splits["dev"])
    sst5 = load_task("sst5", data_dir)
    assert sst5.n_classes == 5
    assert {name: len(trees) for name, trees in sst5.splits.items()} == {"train": 8544, "dev": 1101, "test": 2210}


def test_summary_reads_a_missing_later_option_as_its_default():
    """A run made before --neutral existed trained with neutral phrases unlabelled."""
    from npcomp.experiments.summary import setting_key

    config = {"model": "slstm", "task": "sst5", "seed": 1, "l2": 1e-3}
    assert setting_key(config) == setting_key({**config, "seed": 2, "neutral": "unlabelled"})
    assert setting_key(config) != setting_key({**config, "neutral": "train"})


@pytest.mark.parametrize("value", ["0", "-1e-8", "nan"])
def test_epsilon_must_be_positive(tmp_path, capsys, value):
    assert main(["train", *TINY, f"--epsilon={value}", "--out", str(tmp_path / "run")]) == 2
    assert "--epsilon: must be a finite number > 0" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_vectors_by_file_name_are_read_from_the_data_directory(tmp_path, capsys):
    """`--vectors NAME` finds DATA_DIR/vectors/NAME (where `npcomp download` puts
    them) when NAME is not a file here; a name found nowhere names both places."""
    vectors_dir = tmp_path / "data" / "vectors"
    vectors_dir.mkdir(parents=True)
    (vectors_dir / "tiny.txt").write_text("good " + " ".join(["0.5"] * 8) + "\nnot " + " ".join(["-0.5"] * 8) + "\n")
    run_dir = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--model",
                "lstm",
                *TINY,
                "--no-baseline",
                "--vectors",
                "tiny.txt",
                "--data-dir",
                str(tmp_path / "data"),
                "--out",
                str(run_dir),
            ]
        )
        == 0
    )
    config = json.loads((run_dir / "metrics.json").read_text())["config"]
    assert config["vectors"] == "tiny.txt"  # recorded by name, as --vectors takes it
    from npcomp.runfiles.model_files import load_model

    assert load_model(run_dir)[2]["vectors"] == str(vectors_dir / "tiny.txt")
    capsys.readouterr()
    assert (
        main(
            [
                "train",
                "--model",
                "lstm",
                *TINY,
                "--vectors",
                "absent.txt",
                "--data-dir",
                str(tmp_path / "data"),
                "--out",
                str(tmp_path / "none"),
            ]
        )
        == 2
    )
    error = capsys.readouterr().err
    assert "absent.txt" in error and str(vectors_dir / "absent.txt") in error
    assert not (tmp_path / "none").exists()
