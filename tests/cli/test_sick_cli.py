"""The command line on SICK (relatedness) and on the SST's dependency trees, end
to end on tiny data written into a temporary directory: train (every SICK
model, its default structure and fixed vectors), eval, predict on sentence
pairs, neighbours, summary, the clear errors (exit status 2 for bad input, no traceback),
``parse`` without spaCy, and the SICK defaults of ``--help-defaults``."""

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import npcomp.data.datasets.synthetic
from npcomp.cli import main
from npcomp.data.readers.ptb import parse_ptb
from npcomp.data.readers.parents import write_parents
from conftest import synthetic_of_size
from sick_files import SICK_SIZES, VECTOR_DIM, sick_pairs, sick_sentences, vector_rows, write_small_sick, write_vectors

# --------------------------------------------------------------------------
# fixtures: the data once per module, a trained sick run or two
# --------------------------------------------------------------------------

TINY = ["--dim", "4", "--quiet", "--threads", "1"]
SYNTHETIC_SIZES = (20, 10, 10)


small_synthetic_splits = synthetic_of_size(SYNTHETIC_SIZES)


@pytest.fixture(scope="module")
def sick_data(tmp_path_factory):
    """(data dir with sick/ and nothing else, vectors file)."""
    root = tmp_path_factory.mktemp("sick")
    data_dir = write_small_sick(root / "data")
    return data_dir, write_vectors(root / "tiny.vectors.txt")


def _train_quietly(argv) -> tuple:
    """main(argv) with its stdout captured: (status, stdout)."""
    output = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdout", output)
        status = main(argv)
    return status, output.getvalue()


def _sick_train_argv(data_dir, vectors, out, model="treelstm-childsum", seed=1, epochs=2):
    # the mean of the word vectors has their dimension: no --dim of its own
    options = TINY[2:] if model == "mean-vectors" else TINY
    return [
        "train",
        "--model",
        model,
        "--task",
        "sick",
        "--data-dir",
        str(data_dir),
        "--vectors",
        str(vectors),
        "--epochs",
        str(epochs),
        "--seed",
        str(seed),
        *options,
        "--out",
        str(out),
    ]


@pytest.fixture(scope="module")
def childsum_runs(sick_data, tmp_path_factory):
    """Two treelstm-childsum runs on the tiny SICK, seeds 1 and 2 (otherwise alike)."""
    data_dir, vectors = sick_data
    root = tmp_path_factory.mktemp("childsum")
    runs = []
    for seed in (1, 2):
        run_dir = root / f"s{seed}"
        status, output = _train_quietly(_sick_train_argv(data_dir, vectors, run_dir, seed=seed))
        assert status == 0, output
        runs.append(run_dir)
    return runs


@pytest.fixture(scope="module")
def childsum_run(childsum_runs):
    return childsum_runs[0]


@pytest.fixture(scope="module")
def nary_run(sick_data, tmp_path_factory):
    """A treelstm-nary run (constituency trees) on the tiny SICK."""
    data_dir, vectors = sick_data
    run_dir = tmp_path_factory.mktemp("nary") / "run"
    status, output = _train_quietly(_sick_train_argv(data_dir, vectors, run_dir, model="treelstm-nary", epochs=1))
    assert status == 0, output
    return run_dir


def _metrics(run_dir: Path) -> dict:
    return json.loads((run_dir / "metrics.json").read_text())


# --------------------------------------------------------------------------
# the helper itself
# --------------------------------------------------------------------------


def test_small_sick_reads_back(sick_data):
    """The helper's files are valid SICK in both layouts, with spread-out scores."""
    from npcomp.data.readers.sick import read_sick_dir

    data_dir, _ = sick_data
    for split, size in SICK_SIZES.items():
        for layout in ("dependency", "constituency"):
            pairs = read_sick_dir(data_dir / "sick" / split, layout)
            assert len(pairs) == size
            for pair in pairs:
                for tree in (pair.tree_a, pair.tree_b):
                    tree.validate()
                    assert 2 <= len(tree.tokens) <= 6
                    assert tree.n_nodes == (len(tree.tokens) if layout == "dependency" else 2 * len(tree.tokens) - 1)
        scores = [pair.score for pair in pairs]
        assert min(scores) >= 1.0 and max(scores) <= 5.0 and np.ptp(scores) > 0.5


# --------------------------------------------------------------------------
# train
# --------------------------------------------------------------------------


def test_train_childsum_on_sick(childsum_run, sick_data):
    data_dir, vectors = sick_data
    metrics = _metrics(childsum_run)
    assert metrics["task"] == "sick" and metrics["model"] == "treelstm-childsum"
    assert metrics["best_epoch"] in (1, 2) and len(metrics["epochs"]) == 2
    for split in ("dev", "test"):
        result = metrics[split]
        assert set(result) >= {"pearson", "spearman", "mse", "pairs"}
        assert result["pairs"] == SICK_SIZES[split]
        for key in ("pearson", "spearman", "mse"):
            assert np.isfinite(result[key]), (split, key)
        assert -1.0 <= result["pearson"] <= 1.0 and result["mse"] >= 0.0
    # the best epoch's dev metrics are what metrics.json reports as dev
    assert metrics["epochs"][metrics["best_epoch"] - 1]["dev"] == metrics["dev"]
    config = metrics["config"]
    assert config["structure"] == "dependency" and config["fixed_embeddings"] is True
    assert config["embedding_dim"] == VECTOR_DIM and config["dim"] == 4
    # recorded relative to where the run ran, the model keeping the path it read
    assert Path(config["vectors"]).resolve() == Path(vectors).resolve()
    assert not Path(config["vectors"]).is_absolute()
    assert (childsum_run / "model.npz").is_file()


def test_fixed_embeddings_stay_the_vectors(childsum_run):
    """After training, the saved embedding rows are still the file's vectors."""
    rows = vector_rows()
    with np.load(childsum_run / "model.npz") as archive:
        vocab = list(archive["vocab"])
        embedding = archive["param.embedding"]
    assert embedding.shape == (len(vocab), VECTOR_DIM)
    for word in ("man", "guitar", "playing"):
        assert word in vocab
        np.testing.assert_array_equal(embedding[vocab.index(word)], rows[word].astype(embedding.dtype))


@pytest.mark.parametrize(
    "model, structure",
    [
        ("treelstm-nary", "constituency"),
        ("lstm", "chain"),
        ("bilstm", "chain"),
        ("lstm2", "chain"),
        ("bilstm2", "chain"),
        ("mean-vectors", "dependency"),
    ],
)
def test_every_sick_model_trains_in_its_structure(model, structure, sick_data, tmp_path):
    data_dir, vectors = sick_data
    run_dir = tmp_path / model
    status, output = _train_quietly(_sick_train_argv(data_dir, vectors, run_dir, model=model, epochs=1))
    assert status == 0, output
    metrics = _metrics(run_dir)
    assert metrics["config"]["structure"] == structure
    assert metrics["test"]["pairs"] == SICK_SIZES["test"]
    assert np.isfinite(metrics["test"]["pearson"])
    assert f"{model} on sick: best epoch 1" in output
    if model == "mean-vectors":  # its states are the word vectors themselves
        assert metrics["config"]["dim"] == VECTOR_DIM


def test_train_sick_with_random_vectors(sick_data, tmp_path):
    data_dir, _ = sick_data
    run_dir = tmp_path / "random"
    status, output = _train_quietly(
        [
            "train",
            "--model",
            "lstm",
            "--task",
            "sick",
            "--data-dir",
            str(data_dir),
            "--vectors",
            "random",
            "--embedding-dim",
            "4",
            "--epochs",
            "1",
            *TINY,
            "--out",
            str(run_dir),
        ]
    )
    assert status == 0, output
    config = _metrics(run_dir)["config"]
    assert config["vectors"] is None and config["embedding_dim"] == 4


def test_train_sick_without_vectors_is_an_error(sick_data, tmp_path, capsys):
    data_dir, _ = sick_data  # holds no vectors/ directory
    assert not (data_dir / "vectors").exists()
    status = main(
        [
            "train",
            "--model",
            "lstm",
            "--task",
            "sick",
            "--data-dir",
            str(data_dir),
            "--epochs",
            "1",
            *TINY,
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert status == 2
    error = capsys.readouterr().err
    assert "npcomp download glove.840B" in error and "--vectors random" in error
    assert str(data_dir / "vectors" / "glove.840B.300d.txt") in error
    assert "Traceback" not in error
    assert not (tmp_path / "run" / "metrics.json").exists()


@pytest.mark.parametrize(
    "present, chosen",
    [
        (["glove.840B.300d.txt"], "glove.840B.300d.txt"),
        (["glove.840B.300d.txt", "glove.840B.300d.sick.txt"], "glove.840B.300d.sick.txt"),
    ],
)
def test_train_sick_finds_the_default_vectors(present, chosen, sick_data, tmp_path):
    """Without --vectors, DATA_DIR/vectors/ is searched: the SICK-filtered copy
    first, then `npcomp download glove.840B`'s file."""
    import shutil

    data_dir, vectors = sick_data
    shutil.copytree(data_dir / "sick", tmp_path / "data" / "sick")
    (tmp_path / "data" / "vectors").mkdir()
    for name in present:
        shutil.copy(vectors, tmp_path / "data" / "vectors" / name)
    default = tmp_path / "data" / "vectors" / chosen
    status, output = _train_quietly(
        [
            "train",
            "--model",
            "lstm",
            "--task",
            "sick",
            "--data-dir",
            str(tmp_path / "data"),
            "--epochs",
            "1",
            *TINY,
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert status == 0, output
    config = _metrics(tmp_path / "run")["config"]
    assert config["vectors"] == default.name and config["embedding_dim"] == VECTOR_DIM


def test_dropout_on_sick_is_an_error(sick_data, tmp_path, capsys):
    data_dir, vectors = sick_data
    status = main([*_sick_train_argv(data_dir, vectors, tmp_path / "run", epochs=1), "--dropout", "0.5"])
    assert status == 2
    error = capsys.readouterr().err
    assert "similarity head" in error and "--dropout" in error
    assert "Traceback" not in error
    assert not (tmp_path / "run").exists()  # refused before the run directory is made


def test_gold_structure_on_sick_is_an_error(sick_data, tmp_path, capsys):
    data_dir, vectors = sick_data
    status = main([*_sick_train_argv(data_dir, vectors, tmp_path / "run", epochs=1), "--structure", "gold"])
    assert status == 2
    error = capsys.readouterr().err
    assert "sick" in error and "dependency" in error and "constituency" in error
    assert "Traceback" not in error


# --------------------------------------------------------------------------
# eval, predict
# --------------------------------------------------------------------------


def test_eval_reproduces_the_test_pearson(childsum_run, sick_data, capsys):
    data_dir, _ = sick_data
    metrics = _metrics(childsum_run)
    assert main(["eval", "--run", str(childsum_run), "--data-dir", str(data_dir)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["split"] == "test" and result["pairs"] == SICK_SIZES["test"]
    for key in ("pearson", "spearman", "mse"):
        assert result[key] == pytest.approx(metrics["test"][key], abs=1e-9)
    assert main(["eval", "--run", str(childsum_run), "--data-dir", str(data_dir), "--split", "dev"]) == 0
    dev = json.loads(capsys.readouterr().out)
    assert dev["pearson"] == pytest.approx(metrics["dev"]["pearson"], abs=1e-9)


def _predict(run_dir, data_dir, text, monkeypatch, capsys) -> tuple:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    status = main(["predict", "--run", str(run_dir), "--data-dir", str(data_dir)])
    return status, capsys.readouterr()


def test_predict_pairs(childsum_run, sick_data, monkeypatch, capsys):
    data_dir, _ = sick_data
    sentences = sick_sentences("test")
    pairs = [(sentences[0], sentences[1]), (sentences[2], sentences[5])]
    status, captured = _predict(childsum_run, data_dir, "".join(f"{a}\t{b}\n" for a, b in pairs), monkeypatch, capsys)
    assert status == 0, captured.err
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert len(records) == 2
    for record, (a, b) in zip(records, pairs):
        assert record["sentence_a"] == a and record["sentence_b"] == b
        assert 1.0 <= record["relatedness"] <= 5.0
        probabilities = np.array(record["probabilities"])
        assert probabilities.shape == (5,) and np.all(probabilities >= 0)
        assert probabilities.sum() == pytest.approx(1.0, abs=1e-4)
        # relatedness is the expected rating under the distribution
        assert record["relatedness"] == pytest.approx(probabilities @ np.arange(1, 6), abs=1e-4)


def test_predict_pair_without_a_tab_is_an_error(childsum_run, sick_data, monkeypatch, capsys):
    data_dir, _ = sick_data
    a, b, c = sick_sentences("test")[:3]
    status, captured = _predict(childsum_run, data_dir, f"{a}\t{b}\n{c}\n", monkeypatch, capsys)
    assert status == 2
    assert "<stdin>:2" in captured.err and "Traceback" not in captured.err
    assert captured.out == ""


def test_predict_is_symmetric(childsum_run, sick_data, monkeypatch, capsys):
    """The similarity head sees |h_L - h_R| and h_L * h_R: swapping the
    sentences changes nothing."""
    data_dir, _ = sick_data
    a, b = sick_sentences("dev")[:2]
    status, captured = _predict(childsum_run, data_dir, f"{a}\t{b}\n{b}\t{a}\n", monkeypatch, capsys)
    assert status == 0, captured.err
    forward, backward = [json.loads(line) for line in captured.out.splitlines()]
    assert forward["relatedness"] == pytest.approx(backward["relatedness"], abs=1e-5)
    np.testing.assert_allclose(forward["probabilities"], backward["probabilities"], atol=1e-5)


# --------------------------------------------------------------------------
# neighbours
# --------------------------------------------------------------------------


def _neighbours(run_dir, data_dir, *args) -> list:
    return ["neighbours", "--run", str(run_dir), "--data-dir", str(data_dir), *args]


def test_neighbours_text(childsum_run, sick_data, capsys):
    data_dir, _ = sick_data
    query = sick_sentences("test")[0]
    assert main(_neighbours(childsum_run, data_dir, query)) == 0
    out = capsys.readouterr().out
    assert f"query: {query}" in out
    assert "by mean word vector cosine:" in out
    assert "by treelstm-childsum relatedness (1-5):" in out
    assert len([line for line in out.splitlines() if line.startswith("    ")]) == 2 * 3


def test_neighbours_json(childsum_run, sick_data, capsys):
    data_dir, _ = sick_data
    test_sentences = sick_sentences("test")
    queries = [test_sentences[0], test_sentences[3].upper()]  # any case
    assert main(_neighbours(childsum_run, data_dir, *queries, "--json", "--top", "4")) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 2
    for record, query in zip(records, queries):
        assert set(record) == {"query", "model", "mean_vector_cosine"}
        assert record["query"].lower() == query.lower()
        for key in ("model", "mean_vector_cosine"):
            assert len(record[key]) == 4
            sentences = [sentence for _, sentence in record[key]]
            assert query.lower() not in [s.lower() for s in sentences]
            assert set(sentences) <= set(test_sentences)  # the test split by default
            scores = [score for score, _ in record[key]]
            assert scores == sorted(scores, reverse=True)
        assert all(1.0 <= score <= 5.0 for score, _ in record["model"])
        assert all(-1.0 - 1e-9 <= score <= 1.0 + 1e-9 for score, _ in record["mean_vector_cosine"])


def test_neighbours_split_sample_and_seed(childsum_run, sick_data, capsys):
    data_dir, _ = sick_data
    query = sick_sentences("train")[0]
    argv = _neighbours(childsum_run, data_dir, query, "--json", "--split", "train", "--sample", "5", "--top", "10")
    assert main([*argv, "--seed", "3"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main([*argv, "--seed", "3"]) == 0
    assert json.loads(capsys.readouterr().out) == first
    # at most the 5 sampled sentences (fewer when the query is among them)
    assert 4 <= len(first["model"]) <= 5
    assert {s for _, s in first["model"]} <= set(sick_sentences("train"))


def test_neighbours_from_a_sentences_file(childsum_run, sick_data, tmp_path, capsys):
    data_dir, _ = sick_data
    dev = sick_sentences("dev")
    query = dev[0]
    candidates = [dev[2], dev[5], query, dev[7]]
    path = tmp_path / "candidates.txt"
    path.write_text("\n".join(candidates) + "\n\n", encoding="utf-8")  # a blank line is skipped
    assert main(_neighbours(childsum_run, data_dir, query, "--sentences", str(path), "--json", "--top", "10")) == 0
    record = json.loads(capsys.readouterr().out)
    expected = sorted(set(candidates) - {query})
    for key in ("model", "mean_vector_cosine"):
        assert sorted(sentence for _, sentence in record[key]) == expected


def test_neighbours_unknown_sentence_on_a_dependency_run_needs_spacy(childsum_run, sick_data, monkeypatch, capsys):
    """A sentence SICK lacks is parsed by spaCy: without it, right-branching
    trees and a message naming the extra, or, asked for parses, a clear error."""
    data_dir, _ = sick_data
    monkeypatch.setitem(sys.modules, "spacy", None)
    assert main(_neighbours(childsum_run, data_dir, "a zebra juggles fire")) == 0
    error = capsys.readouterr().err
    assert "npcomp[parse]" in error and "right-branching" in error
    status = main(_neighbours(childsum_run, data_dir, "a zebra juggles fire", "--tree", "parsed"))
    assert status == 1
    error = capsys.readouterr().err
    assert "npcomp[parse]" in error and "Traceback" not in error


def test_predict_on_a_chain_run_takes_any_sentence(sick_data, tmp_path, monkeypatch, capsys):
    """A sequence model needs no parse: sentences outside SICK, no data directory."""
    data_dir, vectors = sick_data
    run_dir = tmp_path / "lstm"
    status, output = _train_quietly(_sick_train_argv(data_dir, vectors, run_dir, model="lstm", epochs=1))
    assert status == 0, output
    monkeypatch.setattr(sys, "stdin", io.StringIO("a zebra juggles fire\tthe cat\n"))
    assert main(["predict", "--run", str(run_dir), "--data-dir", str(tmp_path / "nowhere")]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["sentence_a"] == "a zebra juggles fire"
    assert 1.0 <= record["relatedness"] <= 5.0


def test_neighbours_missing_sentences_file(childsum_run, sick_data, tmp_path, capsys):
    data_dir, _ = sick_data
    missing = tmp_path / "nope.txt"
    assert main(_neighbours(childsum_run, data_dir, sick_sentences("test")[0], "--sentences", str(missing))) == 2
    assert str(missing) in capsys.readouterr().err


def test_neighbours_unknown_sentence_on_a_constituency_run(nary_run, sick_data, capsys):
    """A sentence SICK lacks gets its binarised spaCy parse (or, without
    spaCy, a right-branching tree); --tree right chooses that tree outright."""
    data_dir, _ = sick_data
    assert _metrics(nary_run)["config"]["structure"] == "constituency"
    assert main(_neighbours(nary_run, data_dir, "a zebra juggles fire")) == 0
    assert "query: a zebra juggles fire" in capsys.readouterr().out
    assert main(_neighbours(nary_run, data_dir, "a zebra juggles fire", "--tree", "right")) == 0
    captured = capsys.readouterr()
    assert "query: a zebra juggles fire" in captured.out and captured.err == ""


def test_neighbours_on_a_non_sick_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_synthetic_splits)
    run_dir = tmp_path / "synthetic"
    assert (
        main(
            [
                "train",
                "--task",
                "synthetic",
                "--epochs",
                "1",
                "--dim",
                "4",
                "--embedding-dim",
                "4",
                "--no-baseline",
                "--quiet",
                "--threads",
                "1",
                "--out",
                str(run_dir),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["neighbours", "--run", str(run_dir), "some words"]) == 2
    error = capsys.readouterr().err
    assert "synthetic run" in error and "Traceback" not in error


def test_neighbours_top_must_be_positive(childsum_run, sick_data, capsys):
    data_dir, _ = sick_data
    assert main(_neighbours(childsum_run, data_dir, sick_sentences("test")[0], "--top", "0")) == 2
    assert "--top" in capsys.readouterr().err


def test_neighbours_sample_must_not_be_negative(childsum_run, sick_data, capsys):
    data_dir, _ = sick_data
    assert main(_neighbours(childsum_run, data_dir, sick_sentences("test")[0], "--sample", "-1")) == 2
    assert "--sample: must be 0" in capsys.readouterr().err


# --------------------------------------------------------------------------
# summary, parse, --help-defaults
# --------------------------------------------------------------------------


def test_summary_of_two_sick_seeds(childsum_runs, capsys):
    assert main(["summary", *map(str, childsum_runs)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2  # the header and one group
    mean = np.mean([_metrics(run)["test"]["pearson"] for run in childsum_runs])
    group = lines[1]
    assert "treelstm-childsum" in group and "sick" in group
    assert f"r {mean:.4f} ± " in group
    assert "rho " in group and "mse " in group
    assert main(["summary", "--json", *map(str, childsum_runs)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["seeds"] == [1, 2] and record["test_pearson"]["n"] == 2
    assert record["test_pearson"]["mean"] == pytest.approx(mean, abs=1e-12)


def test_parse_without_spacy(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "spacy", None)  # `import spacy` raises ImportError
    status = main(["parse", "--data-dir", str(tmp_path), "--out", str(tmp_path / "out"), "--quiet"])
    assert status == 1
    error = capsys.readouterr().err
    assert "npcomp[parse]" in error and "Traceback" not in error
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "model, dim, structure",
    [
        ("treelstm-childsum", 150, "dependency"),
        ("treelstm-nary", 142, "constituency"),
        ("lstm", 150, "chain"),
        ("bilstm", 150, "chain"),
        ("lstm2", 108, "chain"),
        ("bilstm2", 108, "chain"),
    ],
)
def test_sick_help_defaults(model, dim, structure, capsys):
    assert main(["train", "--model", model, "--task", "sick", "--help-defaults"]) == 0
    defaults = json.loads(capsys.readouterr().out)
    assert defaults["dim"] == dim and defaults["structure"] == structure
    assert defaults["fixed_embeddings"] is True and defaults["dropout"] == 0.0
    assert defaults["similarity_dim"] == 50 and "Tai" in defaults["source"]
    # a 2-layer LSTM's sentence: both layers' final states (Tai's released code)
    assert defaults.get("layer_outputs") == ("all" if model.endswith("lstm2") else None)
    # Table 1's relatedness counts: LSTMs without an output gate
    assert defaults["output_gate"] is False


def test_sick_output_gate_can_be_restored(sick_data, tmp_path):
    data_dir, vectors = sick_data
    run_dir = tmp_path / "gated"
    status, output = _train_quietly(
        [*_sick_train_argv(data_dir, vectors, run_dir, model="lstm", epochs=1), "--output-gate"]
    )
    assert status == 0, output
    config = json.loads((run_dir / "metrics.json").read_text())["config"]
    assert config["output_gate"] is True


# --------------------------------------------------------------------------
# the SST on dependency trees
# --------------------------------------------------------------------------

SMALL_SST = {
    "train": [
        "(3 (2 it) (4 (3 is) (4 good)))",
        "(1 (2 the) (1 (1 film) (0 fails)))",
        "(4 (3 (2 a) (4 great)) (3 film))",
        "(0 (1 not) (0 (1 very) (0 bad)))",
    ],
    "dev": ["(3 (2 good) (3 film))", "(1 (1 bad) (2 film))", "(2 (2 it) (2 is))"],
    "test": ["(4 (4 great) (3 (2 the) (3 film)))", "(0 (0 awful) (1 film))", "(2 (2 a) (2 film))"],
}


def _chain_heads(tree_text: str) -> list:
    """Every word's head the next word, the last word the root."""
    n = len(parse_ptb(tree_text).tokens)
    return list(range(2, n + 1)) + [0]


@pytest.fixture
def small_sst(tmp_path):
    """(data dir with sst/{train,dev,test}.txt, parses dir with chain heads)."""
    data_dir, parses = tmp_path / "data", tmp_path / "parses"
    (data_dir / "sst").mkdir(parents=True)
    parses.mkdir()
    for split, trees in SMALL_SST.items():
        (data_dir / "sst" / f"{split}.txt").write_text("\n".join(trees) + "\n")
        write_parents(parses / f"{split}.parents", [_chain_heads(tree) for tree in trees])
    return data_dir, parses


def _sst_dependency_argv(data_dir, parses, out):
    return [
        "train",
        "--model",
        "treelstm-childsum",
        "--task",
        "sst5",
        "--structure",
        "dependency",
        "--data-dir",
        str(data_dir),
        "--parses-dir",
        str(parses),
        "--epochs",
        "1",
        "--embedding-dim",
        "4",
        *TINY,
        "--out",
        str(out),
    ]


def test_sst_dependency_trains(small_sst, tmp_path):
    data_dir, parses = small_sst
    run_dir = tmp_path / "run"
    status, output = _train_quietly(_sst_dependency_argv(data_dir, parses, run_dir))
    assert status == 0, output
    metrics = _metrics(run_dir)
    assert metrics["config"]["structure"] == "dependency"
    assert Path(metrics["config"]["parses_dir"]).resolve() == Path(parses).resolve()
    assert 0.0 <= metrics["test"]["root_acc"] <= 100.0
    assert metrics["test"]["sentences"] == len(SMALL_SST["test"])


def test_sst_dependency_without_parses_is_an_error(small_sst, tmp_path, capsys):
    data_dir, parses = small_sst
    (parses / "dev.parents").unlink()
    status = main(_sst_dependency_argv(data_dir, parses, tmp_path / "run"))
    assert status == 2
    error = capsys.readouterr().err
    assert "npcomp parse" in error and str(parses / "dev.parents") in error
    assert "Traceback" not in error


# --------------------------------------------------------------------------
# structures and options a sick or dependency run must treat as the training did
# --------------------------------------------------------------------------


def test_predict_on_a_right_branching_sick_run_takes_any_sentence(sick_data, tmp_path, monkeypatch, capsys):
    data_dir, vectors = sick_data
    run_dir = tmp_path / "right"
    status, output = _train_quietly(
        [*_sick_train_argv(data_dir, vectors, run_dir, model="treelstm-nary", epochs=1), "--structure", "right"]
    )
    assert status == 0, output
    status, captured = _predict(run_dir, data_dir, "a zebra juggles fire\tthe cat\n", monkeypatch, capsys)
    assert status == 0, captured.err


def test_head_on_sick_is_an_error(sick_data, tmp_path, capsys):
    data_dir, vectors = sick_data
    status = main([*_sick_train_argv(data_dir, vectors, tmp_path / "run", model="lstm", epochs=1), "--head", "ordinal"])
    assert status == 2
    assert "similarity head" in capsys.readouterr().err


def test_predict_on_an_sst_dependency_run_uses_dependency_trees(small_sst, tmp_path, monkeypatch, capsys):
    data_dir, parses = small_sst
    run_dir = tmp_path / "run"
    status, output = _train_quietly(_sst_dependency_argv(data_dir, parses, run_dir))
    assert status == 0, output
    monkeypatch.setattr(sys, "stdin", io.StringIO("it is good\n"))
    status = main(["predict", "--run", str(run_dir)])
    captured = capsys.readouterr()
    if "npcomp[parse]" not in captured.err:  # spaCy: a dependency tree, one node per word
        record = json.loads(captured.out)
        assert status == 0 and record["tree_from"] == "parsed"
        assert record["tree"].count("(") == 3  # a dependency tree prints a word at every node
    # without spaCy: right-branching trees, saying how to install the parser ...
    monkeypatch.setitem(sys.modules, "spacy", None)
    monkeypatch.setattr(sys, "stdin", io.StringIO("it is good\n"))
    assert main(["predict", "--run", str(run_dir)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["tree_from"] == "right" and "npcomp[parse]" in captured.err
    # ... or, asked for parsed trees, a clear request for the parser
    monkeypatch.setattr(sys, "stdin", io.StringIO("it is good\n"))
    assert main(["predict", "--run", str(run_dir), "--tree", "parsed"]) == 1
    assert "npcomp[parse]" in capsys.readouterr().err


def test_a_killed_sick_run_resumes_to_the_same_result(sick_data, tmp_path):
    """Interrupted just after epoch 1 is reported, the run resumes from its
    checkpoint and ends where an uninterrupted run ends."""
    from npcomp.cli import build_parser, train_config
    from npcomp.training.trainer import train

    data_dir, vectors = sick_data
    argv = _sick_train_argv(data_dir, vectors, tmp_path / "unused", model="lstm", epochs=3)
    config = train_config(build_parser().parse_args(argv))

    def interrupt_after_epoch_1(text):
        if text.startswith("epoch 1:"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(config, tmp_path / "killed", progress=False, echo=interrupt_after_epoch_1)
    resumed = train({}, tmp_path / "killed", resume=True, progress=False, echo=lambda text: None)
    whole = train(config, tmp_path / "whole", progress=False, echo=lambda text: None)
    assert [record["epoch"] for record in resumed["epochs"]] == [1, 2, 3]
    assert resumed["best_epoch"] == whole["best_epoch"]
    assert resumed["test"]["pearson"] == pytest.approx(whole["test"]["pearson"], abs=1e-9)


# --------------------------------------------------------------------------
# sick-entailment: SICK's release files' judgments on the same pairs and trees
# --------------------------------------------------------------------------

RELEASE = {"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}


def _judgment(score: float) -> str:
    """A tiny pair's entailment judgment, from its word overlap: every class occurs."""
    return "ENTAILMENT" if score >= 3.3 else "CONTRADICTION" if score < 1.7 else "NEUTRAL"


def write_release_files(data_dir: Path, crlf_test: bool = True) -> dict:
    """SICK's release files beside the tiny split directories, in the release's
    order of columns (the test file with CRLF line ends, as the release's);
    {split: [judgment of each pair]}."""
    judgments, pair_id = {}, 1
    for split, n_pairs in SICK_SIZES.items():
        end = "\r\n" if crlf_test and split == "test" else "\n"
        lines = ["pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"]
        judgments[split] = []
        for a, b, score in sick_pairs(split, n_pairs):
            judgments[split].append(_judgment(score))
            lines.append(f"{pair_id}\t{' '.join(a)}\t{' '.join(b)}\t{score}\t{_judgment(score)}")
            pair_id += 1
        # the release's rows in another order than the split directory's: joined by ID
        lines[1:] = lines[:0:-1]
        (data_dir / "sick" / RELEASE[split]).write_text(end.join(lines) + end, encoding="utf-8")
    return judgments


@pytest.fixture(scope="module")
def entailment_data(tmp_path_factory):
    """(data dir with sick/ and its release files, vectors file, judgments)."""
    root = tmp_path_factory.mktemp("sick-entailment")
    data_dir = write_small_sick(root / "data")
    return data_dir, write_vectors(root / "tiny.vectors.txt"), write_release_files(data_dir)


@pytest.mark.parametrize("structure", ["dependency", "constituency", "chain"])
def test_sick_entailment_reads_the_judgments_on_the_sick_pairs(entailment_data, structure):
    from npcomp.data.datasets.tasks import load_task

    data_dir, _, judgments = entailment_data
    task = load_task("sick-entailment", data_dir, structure)
    sick = load_task("sick", data_dir, structure)
    assert task.n_classes == 3
    assert task.class_names == ("NEUTRAL", "ENTAILMENT", "CONTRADICTION")
    for split, pairs in task.splits.items():
        assert [task.class_names[pair.label] for pair in pairs] == judgments[split]
        assert {task.class_names[pair.label] for pair in pairs} == set(task.class_names)
        # the sick task's trees, scores and IDs
        for pair, same in zip(pairs, sick.splits[split]):
            assert pair.tree_a.tokens == same.tree_a.tokens
            np.testing.assert_array_equal(pair.tree_b.parent, same.tree_b.parent)
            assert (pair.score, pair.pair_id) == (same.score, same.pair_id)


def test_sick_entailment_without_its_release_files_says_what_to_do(entailment_data, tmp_path):
    from npcomp.errors import DataError
    from npcomp.data.datasets.tasks import load_task

    data_dir = write_small_sick(tmp_path / "data")
    with pytest.raises(DataError, match=r"SICK_train\.txt: no such file.*npcomp download sick"):
        load_task("sick-entailment", data_dir, "dependency")
    write_release_files(data_dir)
    trial = data_dir / "sick" / "SICK_trial.txt"
    lines = trial.read_text().splitlines()
    trial.write_text("\n".join(lines[:-1]) + "\n")  # the dev split's first pair left out
    with pytest.raises(DataError, match=r"SICK_trial\.txt: no pair \d+ .*not of the split's"):
        load_task("sick-entailment", data_dir, "dependency")
    trial.write_text("\n".join(lines[:2] + ["x\ty\tz\t3.0\tMAYBE"] + lines[3:]) + "\n")
    with pytest.raises(DataError, match=r"SICK_trial\.txt:3: entailment judgment 'MAYBE'"):
        load_task("sick-entailment", data_dir, "dependency")


@pytest.fixture(scope="module")
def entailment_run(entailment_data, tmp_path_factory):
    data_dir, vectors, _ = entailment_data
    out = tmp_path_factory.mktemp("entailment-runs") / "childsum"
    status, _ = _train_quietly(
        [
            "train",
            "--model",
            "treelstm-childsum",
            "--task",
            "sick-entailment",
            "--data-dir",
            str(data_dir),
            "--vectors",
            str(vectors),
            "--epochs",
            "2",
            "--out",
            str(out),
            *TINY,
        ]
    )
    assert status == 0
    return out


def test_train_eval_and_predict_sick_entailment(entailment_run, entailment_data, monkeypatch, capsys):
    data_dir, _, judgments = entailment_data
    metrics = _metrics(entailment_run)
    assert metrics["task"] == "sick-entailment" and metrics["config"]["structure"] == "dependency"
    test = metrics["test"]
    assert test["classes"] == ["NEUTRAL", "ENTAILMENT", "CONTRADICTION"]
    confusion = np.array(test["confusion"])
    assert confusion.sum() == test["pairs"] == SICK_SIZES["test"]
    # the rows are the gold classes' counts
    assert confusion.sum(axis=1).tolist() == [judgments["test"].count(name) for name in test["classes"]]
    assert test["accuracy"] == pytest.approx(100 * np.trace(confusion) / confusion.sum())
    # model selection on dev accuracy: the best epoch's is the highest
    assert metrics["dev"]["accuracy"] == max(epoch["dev"]["accuracy"] for epoch in metrics["epochs"])
    records = [json.loads(line) for line in (entailment_run / "predictions.jsonl").read_text().splitlines()]
    assert [record["gold_class"] for record in records] == judgments["test"]
    assert 100 * np.mean([r["gold"] == r["predicted"] for r in records]) == pytest.approx(test["accuracy"])
    assert main(["eval", "--run", str(entailment_run), "--data-dir", str(data_dir), "--no-predictions"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["accuracy"] == pytest.approx(test["accuracy"], abs=1e-9)
    assert result["classes"] == test["classes"] and result["confusion"] == test["confusion"]
    sentences = sick_sentences("test")
    status, captured = _predict(entailment_run, data_dir, f"{sentences[0]}\t{sentences[1]}\n", monkeypatch, capsys)
    assert status == 0, captured.err
    record = json.loads(captured.out)
    assert record["class"] in test["classes"] and "relatedness" not in record
    assert record["class"] == test["classes"][record["label"]]
    assert len(record["probabilities"]) == 3
    assert record["label"] == int(np.argmax(record["probabilities"]))


@pytest.mark.parametrize(
    "model, structure", [("treelstm-childsum", "dependency"), ("treelstm-nary", "constituency"), ("lstm", "chain")]
)
def test_sick_entailment_help_defaults_are_sicks(model, structure, capsys):
    assert main(["train", "--model", model, "--task", "sick-entailment", "--help-defaults"]) == 0
    entailment = json.loads(capsys.readouterr().out)
    assert main(["train", "--model", model, "--task", "sick", "--help-defaults"]) == 0
    sick = json.loads(capsys.readouterr().out)
    assert entailment["structure"] == structure
    assert {key: value for key, value in entailment.items() if key != "source"} == {
        key: value for key, value in sick.items() if key != "source"
    }
    assert entailment["source"].startswith("no paper gives the settings of classified sentence pairs")
