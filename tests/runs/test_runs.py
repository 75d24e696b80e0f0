"""The runs layer from Python (``npcomp.train``, ``evaluate``, ``predict``,
``plot``): what each command does, with its options as keywords, returning a
result object; a run directory's check happens once, before the run is
announced; the bag-of-words baseline's configuration is made as any run's."""

import io
import json
from contextlib import redirect_stdout

import pytest
from conftest import synthetic_of_size

import npcomp
import npcomp.data.datasets.synthetic
from npcomp.cells import registry
from npcomp.experiments.baseline import baseline_config
from npcomp.configuration.checks import check
from npcomp.runfiles.rundir import RunDirectoryError

TINY = dict(dim=8, embedding_dim=8, epochs=1, threads=1, quiet=True)
small_splits = synthetic_of_size((60, 30, 30))


@pytest.fixture(autouse=True)
def small_synthetic(monkeypatch):
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """``npcomp.train`` on synthetic, its lines collected: (result, lines)."""
    lines = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)
        result = npcomp.train(task="synthetic", out=tmp_path_factory.mktemp("runs") / "run", echo=lines.append, **TINY)
    return result, lines


def test_train_returns_the_run_and_its_baseline(trained):
    result, lines = trained
    assert result.metrics["model"] == "treelstm-nary" and result.metrics["config"]["dim"] == 8
    assert result.baseline_metrics["model"] == "mean-vectors"
    assert json.loads((result.run_dir / "metrics.json").read_text()) == json.loads(json.dumps(result.metrics))
    assert result.predictions.is_file()
    assert lines[0] == f"training treelstm-nary on synthetic -> {result.run_dir}"
    assert any(line.startswith("treelstm-nary on synthetic: best epoch 1") for line in lines)
    assert any(line.startswith("mean-vectors (bag of words)") for line in lines)


def test_a_run_directory_holding_a_run_is_refused_before_it_is_announced(trained):
    result, _ = trained
    lines = []
    with pytest.raises(RunDirectoryError, match="already holds a run") as error:
        npcomp.train(task="synthetic", out=result.run_dir, echo=lines.append, **TINY)
    assert error.value.ways_on == ("resume", "run_dir", "overwrite") and lines == []


def test_evaluate_and_predict_from_python(trained, tmp_path):
    result, _ = trained
    scored = npcomp.evaluate(result.run_dir, split="dev", predictions=False)
    assert scored.metrics["split"] == "dev" and scored.predictions is None
    assert 0.0 <= scored.metrics["root_acc"] <= 100.0
    predicted = npcomp.predict(result.run_dir, ["not good", "(3 (2 very) (3 good))", "(2 a"], tree="right")
    assert [sorted(record) for record in predicted.records[:2]] == [
        ["label", "line", "probabilities", "tree", "tree_from"]
    ] * 2
    assert predicted.records[2]["line"] == 3 and "error" in predicted.records[2]
    assert list(predicted.refused) == [3] and "1 of 3 line(s)" in str(predicted.refusal())


def test_plot_from_python(trained, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib (the plot extra) is absent")
    result, _ = trained
    with redirect_stdout(io.StringIO()):
        drawn = npcomp.plot(result.run_dir, out=tmp_path / "figures")
    assert "learning_curves" in drawn.figures
    assert all(path.is_file() for path in drawn.files)


@pytest.mark.parametrize("model", sorted(registry.MODELS))
def test_every_models_baseline_has_a_configuration_that_trains(model):
    """The baseline beside any model is configured as mean-vectors is (its
    configuration built and checked as any run's), with the run's seed, the
    shared options given and the model's other settings; not the model's
    recurrent dropout or protocol, which mean-vectors refuses."""
    config = npcomp.config(model, "synthetic", threads=1, seed=3, lr=0.2)
    base = baseline_config(config, {"lr", "seed", "threads"})
    check(base)
    assert base["model"] == "mean-vectors" and not base["baseline"]
    assert base["seed"] == 3 and base["lr"] == 0.2 and base["dim"] == base["embedding_dim"]
    own = npcomp.config("mean-vectors", "synthetic", threads=1)
    assert base["recurrent_dropout"] == own["recurrent_dropout"]
    assert base["protocol"] == own["protocol"] and base["epochs"] == own["epochs"]


def test_a_configuration_is_checked_once(tmp_path, monkeypatch):
    """`npcomp train`'s configuration (and its baseline's) is checked where it
    is built, not again by the trainer; a configuration made by hand is
    checked by the trainer."""
    import npcomp.configuration.run_config
    import npcomp.training.trainer

    checked = []

    def counting(where, check):
        def counted(config):
            checked.append((where, config["model"]))
            return check(config)

        return counted

    for module in (npcomp.configuration.run_config, npcomp.training.trainer):
        monkeypatch.setattr(module, "check", counting(module.__name__, module.check))
    npcomp.train(task="synthetic", out=tmp_path / "run", echo=lambda line: None, **TINY)
    assert checked == [
        ("npcomp.configuration.run_config", "treelstm-nary"),
        ("npcomp.configuration.run_config", "mean-vectors"),
    ]
    # a configuration handed to the trainer as a plain dict: checked there
    config = dict(npcomp.config("mean-vectors", "synthetic", dim=8, epochs=1, threads=1), lr=0.2)
    checked.clear()
    npcomp.training.trainer.train(config, None, progress=False, echo=lambda line: None)
    assert checked == [("npcomp.training.trainer", "mean-vectors")]


def test_a_script_without_a_main_guard_is_told_why_its_sweep_did_not_start(tmp_path):
    """Each of the local cluster's worker processes imports the script that
    started the sweep: one that calls npcomp.sweep at its top level runs it
    again there, and the workers never start. The error says so, naming the
    script and the guard."""
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(
        "import npcomp\n"
        "npcomp.sweep(out='sweep', seeds='1', workers=1, quiet=True, "
        "model='recnn', task='synthetic', epochs=1, dim=2, embedding_dim=2)\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "worker processes did not start" in last
    assert f"{script} is imported again by each worker process" in last
    assert 'if __name__ == "__main__":' in last
