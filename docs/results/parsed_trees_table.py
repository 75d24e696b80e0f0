"""The parsed-trees table: every run of a sweep scored on the test split's
gold, parsed and right-branching trees (`npcomp eval --trees`), as mean ± std
over seeds per setting, with the span recall of the parsed trees.

    python docs/results/parsed_trees_table.py SWEEP_DIR [SWEEP_DIR ...] [--data-dir DIR]
        [--parses-dir DIR] [--json]

The test split is parsed once by ``npcomp parse --copula-head copula`` into
``--parses-dir`` (else each run parses it into RUN_DIR/parses/; spaCy: pip
install "npcomp[parse]"); each run's predictions on each kind of tree go to
RUN_DIR/predictions-test-TREES.jsonl.
"""
import argparse
import contextlib
import io
import json
import re
import sys
from pathlib import Path

from npcomp.cli import main
from npcomp.experiments.summary import describe

TREES = ("gold", "parsed", "right")


def score(run_dir: Path, trees: str, data_dir: str | None, parses_dir: str | None) -> dict:
    """`npcomp eval --run RUN_DIR --trees TREES`'s JSON."""
    argv = ["eval", "--run", str(run_dir), "--trees", trees]
    if data_dir:
        argv += ["--data-dir", data_dir]
    if parses_dir and trees == "parsed":
        argv += ["--parses-dir", parses_dir]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(argv)
    if status != 0:
        sys.exit(f"npcomp eval failed on {run_dir} (--trees {trees})")
    return json.loads(out.getvalue())


def mean_std(values: list) -> str:
    stats = describe(values)
    return f"{stats['mean']:.2f} ± {stats['std']:.2f}"


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep_dirs", type=Path, nargs="+", metavar="SWEEP_DIR")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--parses-dir", default=None,
                        help="npcomp parse --copula-head copula's output for the test split")
    parser.add_argument("--json", action="store_true", help="every run's scores, one a line")
    args = parser.parse_args()
    runs = sorted(path for sweep_dir in args.sweep_dirs for path in (sweep_dir / "runs").iterdir()
                  if (path / "model.npz").is_file())
    groups: dict = {}
    for run_dir in runs:
        setting = re.sub(r"-s\d+$", "", run_dir.name)
        scores = {trees: score(run_dir, trees, args.data_dir, args.parses_dir)
                  for trees in TREES}
        record = {"run": str(run_dir), "setting": setting,
                  **{f"{trees}_root_acc": scores[trees]["root_acc"] for trees in TREES},
                  "span_recall": scores["parsed"]["span_recall"]}
        if args.json:
            print(json.dumps(record))
        groups.setdefault(setting, []).append(record)
    if args.json:
        return
    print("| setting | runs | gold trees | parsed trees | right-branching | span recall |")
    print("|---|---|---|---|---|---|")
    for setting, records in groups.items():
        cells = [mean_std([r[f"{trees}_root_acc"] for r in records]) for trees in TREES]
        print(f"| `{setting}` | {len(records)} | {' | '.join(cells)} | "
              f"{records[0]['span_recall']:.1f}% |")


if __name__ == "__main__":
    run()
