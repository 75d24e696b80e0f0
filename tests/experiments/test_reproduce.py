"""`npcomp reproduce`: every row of every paper table is a configuration
`npcomp train` accepts; the verdicts; a tiny table on the synthetic task
killed mid-way and run again resumes and gives the report an uninterrupted
run gives; --list with each row's time."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import npcomp
from npcomp.errors import ConfigError
from npcomp.experiments import paper_tables
from npcomp.experiments.sweep_jobs import config_of
from npcomp.experiments.table_report import reports_summary
from npcomp.experiments.table_sweep import table_spec, train_commands
from npcomp.runs.training import train_config
from npcomp.configuration.options import command_line
from npcomp.experiments.report import ABOVE, BELOW, REACHED, TOO_FEW, WITHIN_NOISE, verdict

pytest.importorskip("distributed")
REPO_ROOT = Path(__file__).resolve().parents[2]

# two rows of two seeds on the synthetic task, long enough to be killed mid-way: the
# kill comes at the first checkpoint (a first run's first dev evaluation), with most
# of its 4 epochs and the other runs still to go (the assertions below fail otherwise).
# The synthetic treebank is made 800/100/100 sentences (its default, 3000/500/500,
# adds time and nothing to check): every process of the table, each worker of its
# cluster included, runs this module, so each trains on the same smaller treebank
TINY_TABLE = """
import sys
import npcomp.data.datasets.synthetic as synthetic
from npcomp.experiments import paper_tables as tables
_full_size = synthetic.synthetic_splits
synthetic.synthetic_splits = lambda seed=0, sizes=None: _full_size(seed, (800, 100, 100))
tables.TABLES["tiny"] = tables.Table("tiny", "A tiny table on the synthetic task", (
    tables.Row("tree", "Tree-LSTM", "treelstm-nary", "synthetic", {"root_acc": 60.0},
               dict(dim=8, embedding_dim=8, epochs=4, evals_per_epoch=2, baseline=False)),
    tables.Row("bag", "Mean vectors", "mean-vectors", "synthetic", {"root_acc": 99.0},
               dict(dim=8, embedding_dim=8, epochs=4)),
))
if __name__ == "__main__":
    import npcomp
    arguments = sys.argv[1:]   # --seeds N --out DIR --quiet
    sys.exit(npcomp.reproduce("tiny", seeds=int(arguments[arguments.index("--seeds") + 1]),
                              out=arguments[arguments.index("--out") + 1],
                              quiet="--quiet" in arguments).status)
"""


def every_setting():
    for table in paper_tables.TABLES.values():
        for row in table.rows:
            for name, options in row.settings().items():
                yield pytest.param(table.name, options, id=f"{table.name}/{name}")


@pytest.mark.parametrize("table,options", list(every_setting()))
def test_every_row_is_a_configuration_train_accepts(table, options, data_dir, tmp_path):
    """The row's options, as `npcomp train` takes them (its report's command),
    give through train's configuration the configuration its sweep builds
    from the row's options, without training (a table on a user's copy of a
    corpus on a few made-up rows of its format)."""
    table = paper_tables.table(table)
    task = options["task"]
    if table.own_data is not None:
        phrases = tmp_path / "phrases.tsv"
        phrases.write_text("text\tlabel\nvery good news\t4\nthe report\t2\nflawed\t0\n")
        options, task = dict(table.run_options(options, str(phrases)), fold=0), "files"
    assert command_line(options)  # the report's command gives each as a flag
    config = train_config(**dict(options, data_dir=str(data_dir), threads=1))
    assert config == config_of(dict(options, data_dir=str(data_dir), threads=1))
    assert config["model"] == options["model"] and config["task"] == task


def test_setting_names_are_unique_and_the_sweep_plans_every_row():
    for table in paper_tables.TABLES.values():
        names = [name for row in table.rows for name in row.settings()]
        assert len(names) == len(set(names)), table.name
        spec = table_spec(table, None, 5, None)
        assert list(spec.settings) == names and spec.seeds == [1, 2, 3, 4, 5]


def test_each_command_gives_an_option_once_and_a_rows_shards_over_the_tables():
    """A report's command trains one seed as its runs trained: the shards
    every reproduce run takes, unless the row sets its own (the shards
    table's two-shards row)."""
    for table in paper_tables.TABLES.values():
        for name, command in train_commands(table, Path("docs/results"), {}).items():
            options = [word for word in command.split() if word.startswith("--")]
            assert len(options) == len(set(options)), (table.name, name, command)
    commands = train_commands(paper_tables.table("shards"), Path("docs/results"), {})
    assert "--shards 2 " in commands["two-shards"] and "--shards 1" not in commands["two-shards"]
    assert "--shards 1 " in commands["one-shard"]


def test_verdicts():
    def stats(mean, low=None, high=None):
        return {"mean": mean, "ci95": None if low is None else [low, high]}

    assert verdict(45.7, stats(46.0, 45.0, 47.0)) == REACHED
    assert verdict(45.7, stats(46.5, 45.8, 47.2)) == ABOVE  # the paper below our interval
    assert verdict(45.7, stats(45.7)) == REACHED
    assert verdict(45.7, stats(45.0, 44.0, 46.0)) == WITHIN_NOISE
    assert verdict(45.7, stats(44.0, 43.0, 45.0)) == BELOW
    assert verdict(45.7, stats(45.0)) == TOO_FEW
    assert verdict(None, stats(45.0)) == "no paper figure"
    assert verdict(45.7, None) == "not run"
    # a loss: lower is better
    assert verdict(0.52, stats(0.50, 0.48, 0.53), "ranking_loss") == REACHED
    assert verdict(0.52, stats(0.45, 0.40, 0.50), "ranking_loss") == ABOVE
    assert verdict(0.52, stats(0.53, 0.50, 0.56), "ranking_loss") == WITHIN_NOISE
    assert verdict(0.52, stats(0.60, 0.55, 0.65), "ranking_loss") == BELOW
    assert verdict(0.52, stats(0.53), "ranking_loss") == TOO_FEW


def reproduce_process(script: Path, out: Path, **kwargs):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.Popen(
        [sys.executable, str(script), "--seeds", "2", "--out", str(out), "--quiet"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def ours(out: Path) -> list:
    report = json.loads((out / "tiny.json").read_text())
    return [
        (
            row["setting"],
            row["test"]["root_acc"]["n"],
            row["test"]["root_acc"]["mean"],
            row["test"]["root_acc"]["std"],
            row["verdict"],
        )
        for row in report["rows"]
    ]


def test_a_table_killed_and_run_again_resumes_and_reports_the_same(tmp_path):
    script = tmp_path / "tiny_table.py"
    script.write_text(TINY_TABLE)
    whole = tmp_path / "whole"
    finished = reproduce_process(script, whole)
    assert finished.wait(timeout=300) == 0, finished.stderr.read()
    killed = tmp_path / "killed"
    process = reproduce_process(script, killed, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(killed.glob("tiny/runs/*/checkpoint.npz")):
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)  # the command and its cluster's workers
    process.wait(timeout=60)
    assert not (killed / "tiny.json").exists()
    again = reproduce_process(script, killed)
    output, errors = again.communicate(timeout=300)
    assert again.returncode == 0, errors
    assert "to resume" in output
    logs = [path.read_text() for path in killed.glob("tiny/runs/*/log.jsonl")]
    assert any('"resumed"' in log for log in logs)
    assert ours(killed) == ours(whole)
    # each minibatch whole, as the committed runs were trained (paper_tables.RUN_OPTIONS)
    assert {json.loads(path.read_text())["config"]["shards"] for path in killed.glob("tiny/runs/*/metrics.json")} == {1}
    # the workers trained on the smaller treebank
    assert {json.loads(path.read_text())["test"]["sentences"] for path in killed.glob("tiny/runs/*/metrics.json")} == {
        100
    }
    report = (killed / "tiny.md").read_text()
    assert "| - | Tree-LSTM | `tree` (paper) | 60.0 |" in report
    assert "not yet measured (2 of 5 seeds)" in report and "npcomp train --model" in report
    assert (killed / "tiny-figures" / "seeds_test_root_acc.png").is_file()


def test_list_prints_each_row_with_its_time(tmp_path, monkeypatch, capsys):
    table = paper_tables.Table(
        "tiny",
        "A tiny table",
        (
            paper_tables.Row(
                "bag",
                "Mean vectors",
                "mean-vectors",
                "synthetic",
                {"root_acc": 99.0},
                dict(dim=8, embedding_dim=8, epochs=2),
                dev=dict(dim=8, embedding_dim=8, epochs=2, lr=0.1),
            ),
        ),
    )
    monkeypatch.setitem(paper_tables.TABLES, "tiny", table)
    assert npcomp.reproduce("tiny", list=True, out=tmp_path).status == 0
    out = capsys.readouterr().out
    assert "bag " in out and "bag-dev" in out and "a seed" in out and "5 seeds" in out
    cached = json.loads((tmp_path / "estimates.json").read_text())
    assert len(cached) == 2 and all(seconds > 0 for seconds in cached.values())
    assert all(json.loads(setting)["shards"] == 1 for setting in cached)  # as its runs train
    assert npcomp.reproduce("tiny", list=True, out=tmp_path).status == 0
    assert "measuring" not in capsys.readouterr().err  # the cache answers


def test_list_answers_without_the_data(tmp_path, monkeypatch, capsys):
    """Every table listed, each row's time where it can be measured and, where
    its data or vectors are not found, why not: a fresh install, before
    `npcomp download`."""
    monkeypatch.setenv("NPCOMP_DATA", str(tmp_path / "no-data"))
    assert npcomp.reproduce(list=True, out=tmp_path / "out").status == 0
    out = capsys.readouterr().out
    for table in paper_tables.TABLES.values():
        assert f"{table.name}: {table.title}" in out
        for row in table.rows:
            assert all(f"  {name} " in out for name in row.settings())
    assert "not measured: " in out and "no such file" in out
    assert "a seed" not in out  # every table here trains on the real data


def test_an_unknown_table_or_row_is_named():
    with pytest.raises(ConfigError) as error:
        npcomp.reproduce("nosuch")
    assert error.value.option == "table" and "no table 'nosuch'" in str(error.value)
    with pytest.raises(ConfigError) as error:
        npcomp.reproduce("zhu", rows="nosuch")
    assert error.value.option == "rows" and "zhu has no row 'nosuch'" in str(error.value)


def test_the_readmes_results_table_is_the_reports_summary():
    text = (REPO_ROOT / "README.md").read_text()
    start = text.index("<!-- npcomp reproduce --summary -->\n") + len("<!-- npcomp reproduce --summary -->\n")
    end = text.index("\n<!-- end of npcomp reproduce --summary -->")
    assert text[start:end] == reports_summary(REPO_ROOT / "docs" / "results")


def test_rows_on_dependency_parses_read_the_tables_parses(tmp_path):
    table = paper_tables.table("tai-sst")
    spec = table_spec(table, ["dependency-fine", "lstm-fine"], 5, None, tmp_path / "parses")
    assert spec.settings["dependency-fine"]["parses_dir"] == str(tmp_path / "parses")
    assert list(spec.settings) == ["dependency-fine", "lstm-fine"]
    assert "parses_dir" not in spec.settings["lstm-fine"]


def test_list_measures_the_committed_runs_of_a_row_that_needs_parses(tmp_path, monkeypatch, capsys):
    """The Dependency Tree-LSTM rows' committed seeds give their time, parses
    or not; the total counts them and names the rows left unmeasured."""
    import shutil

    monkeypatch.setenv("NPCOMP_DATA", str(tmp_path / "no-data"))
    out = tmp_path / "out"
    for seed in (1, 2):
        run = f"dependency-fine-s{seed}"
        (out / "tai-sst" / "runs" / run).mkdir(parents=True)
        shutil.copy(
            REPO_ROOT / "docs" / "results" / "tai-sst" / "runs" / run / "metrics.json",
            out / "tai-sst" / "runs" / run / "metrics.json",
        )
    assert npcomp.reproduce("tai-sst", list=True, out=out).status == 0
    listed = capsys.readouterr().out.splitlines()
    fine = next(line for line in listed if line.startswith("  dependency-fine "))
    binary = next(line for line in listed if line.startswith("  dependency-binary "))
    assert fine.endswith(" a seed") and "not measured" not in fine
    assert binary.endswith("not measured: the SST's parses are made on its first run")
    rows = sum(len(row.settings()) for row in paper_tables.TABLES["tai-sst"].rows if row.trained)
    assert listed[-2].endswith(f"(less {rows - 1} not measured)")
    assert "about 0 s" not in listed[-2]
