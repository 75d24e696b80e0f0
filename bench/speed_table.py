"""The whole speed table in one command: npcomp beside PyTorch and DyNet, at 1
and 2 threads, the Constituency Tree-LSTM on the SST (and the Child-Sum
Tree-LSTM on SICK) and every cell against its PyTorch counterpart, each
figure with its target and whether it is met.

    python bench/speed_table.py --data-dir ../shared/data --out bench-results

runs ``bench_treelstm.py`` at 1 thread and at 2, and ``bench_torch_cells.py``
at 1 and 2 threads, one after another (each writes its JSON into OUT), then
prints the table from those files; ``--from OUT`` prints it again from the
files alone.  Every ratio is one of epochs timed side by side in one run.

The shards of a minibatch are fixed by the run, not by its threads, so a
run at 1 thread computes the default 2 shards one after the other: smaller
levels, more of them.  The same two benchmarks at 1 thread with one shard
(``npcomp train --shards 1``, what a one-core machine gains by it) follow
as a section of their own (``--no-one-shard`` leaves them out).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from npcomp.runfiles.machine import machine_summary

HERE = Path(__file__).resolve().parent
FILES = {"one": "treelstm-1-thread.json", "two": "treelstm-2-threads.json", "cells": "cells.json"}
# the runs at 1 thread in one shard, when the table's shards are more
ONE_SHARD_FILES = {"one": "treelstm-1-thread-1-shard.json", "cells": "cells-1-thread-1-shard.json"}
# the targets of the speed issue: (what, threshold, higher is better)
THREAD_SCALING, MATRIX_SHARE = 1.7, 0.70
DYNET_ONE, DYNET_TWO, EVAL_SECONDS = 2.0, 3.5, 0.12
CELL_RATIO = 2.0  # every cell against its PyTorch counterpart


def run_benchmarks(args) -> None:
    """The three benchmark runs, each writing its JSON into ``args.out``."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    common = ["--data-dir", args.data_dir, "--shards", str(args.shards)]
    size = ["--sentences", str(args.sentences)] if args.sentences else []
    for threads, name in ((1, "one"), (2, "two")):
        _run(
            [
                HERE / "bench_treelstm.py",
                *common,
                *size,
                "--threads",
                str(threads),
                "--dtypes",
                "float32",
                "--rounds",
                str(args.rounds),
                *(["--pairs", str(args.pairs)] if args.pairs is not None else []),
                "--json",
                out / FILES[name],
            ]
        )
    _run(
        [
            HERE / "bench_torch_cells.py",
            *common,
            "--threads",
            "1,2",
            "--rounds",
            str(args.cell_rounds),
            "--sentences",
            str(args.cell_sentences),
            "--json",
            out / FILES["cells"],
        ]
    )
    if args.one_shard and args.shards != 1:
        common = ["--data-dir", args.data_dir, "--shards", "1", "--threads", "1"]
        _run(
            [
                HERE / "bench_treelstm.py",
                *common,
                *size,
                "--dtypes",
                "float32",
                "--rounds",
                str(args.rounds),
                *(["--pairs", str(args.pairs)] if args.pairs is not None else []),
                "--json",
                out / ONE_SHARD_FILES["one"],
            ]
        )
        _run(
            [
                HERE / "bench_torch_cells.py",
                *common,
                "--rounds",
                str(args.cell_rounds),
                "--sentences",
                str(args.cell_sentences),
                "--json",
                out / ONE_SHARD_FILES["cells"],
            ]
        )


def _run(arguments: list) -> None:
    command = [sys.executable, *map(str, arguments)]
    print("$ " + " ".join(command[1:]), flush=True)
    subprocess.run(command, check=True)


def _verdict(value: float | None, target: float, higher: bool = True) -> str:
    if value is None:
        return "not measured"
    met = value >= target if higher else value <= target
    return "met" if met else "NOT met"


def tree_lstm_rows(one: dict, two: dict) -> list:
    """(figure, measured, target, verdict) rows of the Tree-LSTM runs."""
    first, second = one["dtypes"]["float32"], two["dtypes"]["float32"]
    dynet_one = (first.get("dynet") or {}).get("speed_ratio")
    dynet_two = (second.get("dynet") or {}).get("speed_ratio")
    scaling = second.get("thread_speed_up")
    rows = [
        ("npcomp training, 1 thread (sentences/s)", f"{first['train_sentences_per_s']:,.0f}", "", ""),
        ("npcomp training, 2 threads (sentences/s)", f"{second['train_sentences_per_s']:,.0f}", "", ""),
        (
            f"2 threads / 1 thread, epochs alternating in one run (a helper "
            f"{'process' if second.get('helpers') == 'processes' else 'thread'})",
            _times(scaling),
            f">= {THREAD_SCALING}x",
            _verdict(scaling, THREAD_SCALING),
        ),
    ]
    on_threads = second.get("helper_threads")
    if on_threads is not None:  # what the GIL between two threads costs
        rows.append(("the same on a helper thread instead / 1 thread", _times(on_threads["speed_up"]), "", ""))
    rows += [
        *_share_rows(first),
        ("npcomp / DyNet, 1 thread", _times(dynet_one), f">= {DYNET_ONE}x", _verdict(dynet_one, DYNET_ONE)),
        (
            "npcomp / DyNet, 2 threads (DyNet on one)",
            _times(dynet_two),
            f">= {DYNET_TWO}x",
            _verdict(dynet_two, DYNET_TWO),
        ),
        (
            "SST test-set evaluation, 2 threads",
            f"{second['test_eval_s']:.2f} s",
            f"<= {EVAL_SECONDS} s",
            _verdict(second["test_eval_s"], EVAL_SECONDS, higher=False),
        ),
    ]
    floor = second.get("test_eval_product_floor_s")
    if floor is not None:  # what the target leaves for everything but the products
        rows.append(
            (
                "  its matrix products alone at the measured 2-thread rate",
                f"{floor:.2f} s ({second['test_eval_gflop']:.1f} GFLOP)",
                "",
                "",
            )
        )
    for label, run in (("1 thread", first), ("2 threads", second)):
        ratio = (run.get("torch") or {}).get("speed_ratio")
        rows.append((f"npcomp / PyTorch, {label}", _times(ratio), "", ""))
    for label, run in (("1 thread", one), ("2 threads", two)):
        sick = (run.get("sick") or {}).get("dynet") or {}
        if sick.get("speed_ratio") is not None:
            rows.append((f"SICK Child-Sum, npcomp / DyNet, {label}", _times(sick["speed_ratio"]), "", ""))
    return rows


def one_shard_rows(one: dict, default: dict) -> list:
    """(figure, measured, target, verdict) rows of the Tree-LSTM at 1 thread
    in one shard, beside ``default``, the same at the table's shards."""
    first, shards = one["dtypes"]["float32"], default["dtypes"]["float32"]
    dynet = (first.get("dynet") or {}).get("speed_ratio")
    torch = (first.get("torch") or {}).get("speed_ratio")
    rows = [
        (
            "npcomp training, 1 thread (sentences/s)",
            f"{first['train_sentences_per_s']:,.0f} (in {default['shards']} shards: "
            f"{shards['train_sentences_per_s']:,.0f})",
            "",
            "",
        ),
        *_share_rows(first),
        ("npcomp / DyNet, 1 thread", _times(dynet), f">= {DYNET_ONE}x", _verdict(dynet, DYNET_ONE)),
        ("npcomp / PyTorch, 1 thread", _times(torch), "", ""),
    ]
    sick = (one.get("sick") or {}).get("dynet") or {}
    if sick.get("speed_ratio") is not None:
        rows.append(("SICK Child-Sum, npcomp / DyNet, 1 thread", _times(sick["speed_ratio"]), "", ""))
    return rows


def _share_rows(run: dict) -> list:
    """The rows of a 1-thread run's share of the measured matrix-product
    rate, with its target, and of its products alone (``bench_treelstm.py``):
    the share a step would reach if its products were all it did."""
    rows = [
        (
            "1 thread: share of the measured matrix-product rate",
            f"{100 * run['fraction_of_machine']:.1f}%",
            f">= {100 * MATRIX_SHARE:.0f}%",
            _verdict(run["fraction_of_machine"], MATRIX_SHARE),
        )
    ]
    alone = run.get("products_alone")
    if alone is not None:
        rows.append(
            (
                "  a step of its matrix products alone (replayed at its shapes, epochs alternating)",
                f"{100 * alone['fraction_of_machine']:.1f}% (they take "
                f"{100 * alone['share_of_step_time']:.1f}% of the step's time)",
                "",
                "",
            )
        )
    return rows


def cell_rows(cells: dict) -> list:
    """(cell, threads, npcomp/s, PyTorch/s, ratio, target, verdict) per cell."""
    rows = []
    for name, cell in cells["cells"].items():
        for threads, figures in cell["threads"].items():
            rows.append(
                (
                    name,
                    threads,
                    f"{figures['npcomp_sentences_per_s']:,.0f}",
                    f"{figures['torch_sentences_per_s']:,.0f}",
                    _times(figures["ratio"]),
                    f">= {CELL_RATIO}x",
                    _verdict(figures["ratio"], CELL_RATIO),
                )
            )
    return rows


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def table(out: Path) -> str:
    """The whole table, in Markdown, from the JSON files in ``out``."""
    read = {name: json.loads((out / file).read_text()) for name, file in FILES.items()}
    one, two = read["one"], read["two"]
    lines = [
        f"Machine: {machine_summary(two.get('machine') or {})}; matrix products "
        f"{one['machine_gflops']['float32']:.1f} GFLOP/s on 1 thread, "
        f"{two['machine_gflops']['float32']:.1f} on 2 (float32)",
        "",
        f"Constituency Tree-LSTM on the SST, float32, {two['shards']} shards",
        "",
        "| figure | measured | target | verdict |",
        "|---|---|---|---|",
    ]
    lines += [f"| {' | '.join(row)} |" for row in tree_lstm_rows(one, two)]
    lines += [
        "",
        f"Every cell against PyTorch ({read['cells']['sentences']} sentences, {read['cells']['shards']} shards)",
        "",
        "| cell | threads | npcomp/s | PyTorch/s | ratio | target | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [f"| {' | '.join(row)} |" for row in cell_rows(read["cells"])]
    if all((out / file).exists() for file in ONE_SHARD_FILES.values()):
        alone = {name: json.loads((out / file).read_text()) for name, file in ONE_SHARD_FILES.items()}
        lines += [
            "",
            "At 1 thread in one shard (`npcomp train --shards 1`: the numbers of a "
            "run in one shard, not those of the default)",
            "",
            "| figure | measured | target | verdict |",
            "|---|---|---|---|",
        ]
        lines += [f"| {' | '.join(row)} |" for row in one_shard_rows(alone["one"], one)]
        lines += [
            "",
            "| cell | threads | npcomp/s | PyTorch/s | ratio | target | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [f"| {' | '.join(row)} |" for row in cell_rows(alone["cells"])]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--out", default="bench-results", help="directory for the benchmarks' JSON files")
    parser.add_argument(
        "--from",
        dest="source",
        default=None,
        metavar="DIR",
        help="print the table from the JSON files in DIR, running nothing",
    )
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="timed epochs of each implementation, Tree-LSTM runs")
    parser.add_argument(
        "--sentences", type=int, default=None, help="Tree-LSTM runs: training sentences per epoch (default all)"
    )
    parser.add_argument(
        "--pairs", type=int, default=None, help="Tree-LSTM runs: SICK pairs per epoch (default all; 0: none)"
    )
    parser.add_argument("--cell-rounds", type=int, default=2)
    parser.add_argument("--cell-sentences", type=int, default=2000)
    parser.add_argument(
        "--no-one-shard", dest="one_shard", action="store_false", help="leave out the runs at 1 thread in one shard"
    )
    args = parser.parse_args(argv)
    if args.source is None:
        run_benchmarks(args)
    print(table(Path(args.source or args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
