"""A sweep's figures as the reports draw them: fine and binary on axes of
their own, at most 6 series an axes with a row's settings together, the
all-node figures one node set an axes (none for runs labelled at their roots
alone), the
paper's figure on the test seed plots, a setting's figures from its runs'
counts or from the sweep's figure data for runs without them, the papers'
own figures naming the settings not yet run, and PNG files that are the same
bytes each time."""

import json
from pathlib import Path

import pytest

from npcomp.runfiles.figure_counts import COUNTS, sentence_counts
from npcomp.experiments.paper_rows import PaperFigure
from npcomp.experiments.sweep_figures import LEGACY, MAX_SERIES, panels, sweep_figures


def test_panels_keep_tasks_apart_and_a_rows_settings_together():
    labels = [label for row in "abcdefg" for label in (row, f"{row}-dev")] + list("hijk")
    groups = panels([("sst5", label) for label in labels] + [("sst2", "z")])
    assert [group["task"] for group in groups] == ["sst5"] * 3 + ["sst2"]
    assert all(len(group["labels"]) <= MAX_SERIES for group in groups)
    for group in groups:  # no row split between two axes
        for label in group["labels"]:
            if label.endswith("-dev"):
                assert label.removesuffix("-dev") in group["labels"]
    assert [len(group["labels"]) for group in panels([("sst5", str(k)) for k in range(6)])] == [6]
    assert [len(group["labels"]) for group in panels([("sst5", str(k)) for k in range(8)])] == [4, 4]
    assert [len(group["labels"]) for group in panels([("sst5", str(k)) for k in range(8)], most=8)] == [8]


def _records(seed: int) -> list:
    """Prediction records of four sentences, one wrong more for a higher seed."""
    out = []
    for index, length in enumerate((3, 5, 8, 12)):
        gold = index % 5
        predicted = gold if index >= seed - 1 else (gold + 1) % 5
        out.append(
            {
                "length": length,
                "gold": [gold, gold],
                "predicted": [gold, predicted],
                "height": [0, 1],
                "span": [1, length],
            }
        )
    return out


def _sweep(root: Path) -> Path:
    """Settings a, a-dev (sst5, with counts) and b (sst2, figure data only)."""
    sweep = root / "sweep"
    plan = {"specs": [], "runs": {}}
    for setting, task in (("a", "sst5"), ("a-dev", "sst5"), ("b", "sst2")):
        for seed in (1, 2):
            name = f"{setting}-s{seed}"
            plan["runs"][name] = {"setting": setting, "seed": seed, "options": {"model": "lstm", "task": task}}
            run = sweep / "runs" / name
            run.mkdir(parents=True)
            accuracy = 40.0 + seed + (setting == "a-dev")
            (run / "metrics.json").write_text(
                json.dumps(
                    {
                        "model": "lstm",
                        "task": task,
                        "config": {"model": "lstm", "task": task, "seed": seed},
                        "test": {"root_acc": accuracy, "all_acc": accuracy},
                        "dev": {"root_acc": accuracy - 1, "all_acc": accuracy - 1},
                    }
                )
            )
            if setting != "b":
                (run / COUNTS).write_text(json.dumps(sentence_counts(_records(seed), task)))
    (sweep / "plan.json").write_text(json.dumps(plan))
    points = [{"length": 2, "low": 0, "high": 4, "n": [5, 5], "accuracy": 80.0}]
    (sweep / LEGACY).write_text(
        json.dumps(
            {
                "settings": {
                    "b": {
                        "runs": ["b-s1", "b-s2"],
                        "curves": {
                            "length_accuracy": {"tail": 45, "series": {"label": "b", "runs": 2, "points": points}}
                        },
                        "root_confusion": [[3, 1], [0, 4]],
                    }
                }
            }
        )
    )
    return sweep


def test_a_sweeps_figures_for_a_report(tmp_path):
    sweep = _sweep(tmp_path)
    spec = PaperFigure("fig", "A paper's figure", (("length_accuracy", "sst5", ("a", "c"), ""),))
    figures, notes = sweep_figures(sweep, confusions=True, paper={"a": {"root_acc": 43.0}}, paper_figures=(spec,))
    by_name = {figure["figure"]: figure for figure in figures}
    boxes = by_name["seeds_test_root_acc"]
    assert [group["labels"] for group in boxes["panels"]] == [["a", "a-dev"], ["b"]]
    assert [box.get("paper") for box in boxes["boxes"]] == [43.0, None, None]
    assert all("paper" not in box for box in by_name["seeds_dev_root_acc"]["boxes"])
    # from the runs' counts: each point the mean over the seeds
    fine = by_name["length_accuracy_sst5"]
    assert [one["label"] for one in fine["series"]] == ["a", "a-dev"]
    assert fine["series"][0]["points"][0]["n"] == [2, 2]  # lengths 3 and 5 in 1..5
    # from the figure data of runs without counts
    binary = by_name["length_accuracy_sst2"]
    assert binary["series"][0]["points"][0]["accuracy"] == 80.0
    assert by_name["root_confusion_b"]["counts"] == [[3, 1], [0, 4]]
    assert by_name["root_confusion_a"]["counts"][0][0] == 1  # seed 1 right, seed 2 wrong
    paper = by_name["fig"]
    assert [one["label"] for one in paper["panels"][0]["series"]] == ["a"]
    assert paper["panels"][0]["missing"] == ["c"]
    assert notes == []


def test_figure_files_are_the_same_bytes_each_time(tmp_path):
    pytest.importorskip("matplotlib")
    from npcomp.experiments.plots import write_figures

    figures, _ = sweep_figures(_sweep(tmp_path), paper={"a": {"root_acc": 43.0}})
    first = write_figures(figures, tmp_path / "one")
    again = write_figures(figures, tmp_path / "two")
    for one, two in zip(first, again):
        assert Path(one).read_bytes() == Path(two).read_bytes(), one
    assert Path(first[0]).read_bytes().startswith(b"\x89PNG")


def _lstm_run(
    sweep: Path, plan: dict, setting: str, seed: int, structure: str = "chain", nodes: int | None = None
) -> Path:
    """A finished sst5 run of ``setting`` in ``sweep``, entered in ``plan``,
    on ``structure``'s trees labelling ``nodes`` test nodes."""
    name = f"{setting}-s{seed}"
    plan["runs"][name] = {"setting": setting, "seed": seed, "options": {"model": "lstm", "task": "sst5"}}
    run = sweep / "runs" / name
    run.mkdir(parents=True)
    (run / "metrics.json").write_text(
        json.dumps(
            {
                "model": "lstm",
                "task": "sst5",
                "config": {"model": "lstm", "task": "sst5", "seed": seed, "structure": structure},
                "test": {"root_acc": 40.0, "all_acc": 40.0 + seed, "sentences": 4, "labelled_nodes": nodes or 4},
                "dev": {"root_acc": 39.0, "all_acc": 39.0},
            }
        )
    )
    return run


def test_all_node_figures_are_drawn_one_node_set_a_panel(tmp_path):
    """The phrases of the treebank's trees, a dependency parse's spans and a
    chain's roots are three node sets: the first two on axes of their own,
    the roots left to the root figures."""
    sweep = tmp_path / "sweep"
    plan = {"specs": [], "runs": {}}
    for setting, structure, nodes in (
        ("tree", "gold", 12),
        ("tree-dev", "gold", 12),
        ("dependency", "dependency", 9),
        ("chain", "chain", 4),
    ):
        for seed in (1, 2):
            run = _lstm_run(sweep, plan, setting, seed, structure, nodes)
            (run / COUNTS).write_text(json.dumps(sentence_counts(_records(seed), "sst5")))
    (sweep / "plan.json").write_text(json.dumps(plan))
    figures, _ = sweep_figures(sweep, confusions=False)
    by_name = {figure["figure"]: figure for figure in figures}
    for name in ("seeds_test_all_acc", "height_accuracy", "phrase_length_accuracy"):
        assert [(group["title"], group["labels"]) for group in by_name[name]["panels"]] == [
            ("phrases (12 test nodes)", ["tree", "tree-dev"]),
            ("dependency spans (9 test nodes)", ["dependency"]),
        ], name
    assert [box["label"] for box in by_name["seeds_test_root_acc"]["boxes"]] == [
        "tree",
        "tree-dev",
        "dependency",
        "chain",
    ]
    assert "chain" in [one["label"] for one in by_name["length_accuracy"]["series"]]


@pytest.mark.parametrize("with_counts, drawn", [(5, True), (4, False)])
def test_a_setting_whose_early_seeds_have_no_counts(tmp_path, with_counts, drawn):
    """Seeds trained before counts were kept beside later ones: the curves of
    the seeds with counts when they are as many as measure a row (5), said in
    the series' label and a note; fewer, and the setting is left out."""
    sweep = tmp_path / "sweep"
    plan = {"specs": [], "runs": {}}
    for seed in range(1, 11):
        run = _lstm_run(sweep, plan, "a", seed)
        if seed > 10 - with_counts:
            (run / COUNTS).write_text(json.dumps(sentence_counts(_records(seed % 3), "sst5")))
    (sweep / "plan.json").write_text(json.dumps(plan))
    figures, notes = sweep_figures(sweep, confusions=False)
    curves = [figure for figure in figures if figure["figure"] == "length_accuracy"]
    if drawn:
        series = curves[0]["series"]
        assert [one["label"] for one in series] == ["a (5 of 10 seeds)"]
        assert series[0]["runs"] == 5
        assert any("over the 5 of its 10 seeds" in note for note in notes)
    else:
        assert not curves
        assert any("left out of the per-length figures" in note for note in notes)


@pytest.mark.parametrize("seeds_of_b, labels", [(3, ["a", "b"]), (2, ["a (3 seeds)", "b (2 seeds)"])])
def test_settings_of_different_seed_counts_name_their_counts(tmp_path, seeds_of_b, labels):
    """A row still training beside finished ones: when the settings on a
    per-length figure average different numbers of seeds, each label says
    how many; when they all average the same number, none does."""
    sweep = tmp_path / "sweep"
    plan = {"specs": [], "runs": {}}
    for setting, count in (("a", 3), ("b", seeds_of_b)):
        for seed in range(1, count + 1):
            run = _lstm_run(sweep, plan, setting, seed)
            (run / COUNTS).write_text(json.dumps(sentence_counts(_records(seed), "sst5")))
    (sweep / "plan.json").write_text(json.dumps(plan))
    figures, _ = sweep_figures(sweep, confusions=False)
    curve = next(figure for figure in figures if figure["figure"] == "length_accuracy")
    shown = [one["label"] for one in curve["series"]]
    assert shown == labels
