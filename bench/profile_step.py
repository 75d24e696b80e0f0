"""Where a training step's Python time goes: a cell's minibatches on the
real SST, profiled, per shard count.

    python bench/profile_step.py [--data-dir DIR] [--minibatches M] [--shards 1,2]
                                 [--model treelstm-nary] [--top K] [--json FILE]

The setting of ``bench_torch_cells.py`` (the Constituency Tree-LSTM, the
default ``--model``: Tai et al.'s d = 150, 300-d random word vectors,
dropout 0.5; every other cell d = d_x = 100, no dropout; all minibatch 25,
AdaGrad, lambda 1e-4, float32) on one thread, as ``npcomp train --threads
1`` computes it: each minibatch in S shards (``--shards``,
one line per count), the shards one after another.  For each count it
trains ``M`` minibatches twice from the same start, and prints

* the process CPU time per step (``time.process_time``: forest building,
  forward, backward, update), from the run without the profiler;
* the tree levels a step computes (the calls of the cell's per-level
  forward function, for the cells ``LEVEL_FUNCTIONS`` names; the backward
  visits as many), counted by cProfile in the second run, with every Python function call a step makes and their
  number per level;
* the ``K`` functions with the most time of their own, with their calls per
  step;

and, for the cell alone, what a level costs when its arithmetic is next to
nothing: the forward and the backward over 25 left-branching trees of 40
words at d = d_x = 2 (39 levels of 25 nodes), in microseconds of CPU per
level, the best of 5 rounds -- the Python work and the calls into compiled
code (numba, NumPy, BLAS) a level makes, whatever the sizes.

A step's Python work between the compiled kernels and BLAS products is
what the shards of a minibatch cannot compute at once (the GIL): the work
per level is the figure to keep small.  cProfile counts Python functions
and numba kernels, not NumPy's ufuncs (np.exp, np.matmul, ...): the cost
of a level with next to no arithmetic counts them all.  CPU time counts what the process
did, not what the machine did for others, but a machine busy with other
work still slows it (caches, memory bandwidth): compare counts taken on
the same machine in the same state.  A benchmark, not a test.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

from harness import (
    adagrad,
    initial_parameters,
    load_sst,
    minibatches,
    option_parser,
    parse_options,
    set_up_process,
    training_step,
    write_results,
)

from bench_torch_cells import BATCH_SIZE, EMBEDDING_LR, L2, LR, OPTIONS, settings

DIM = 100  # d = d_x of every cell but treelstm-nary, as bench_torch_cells.py's default
# a function the cell's forward pass calls once per level
LEVEL_FUNCTIONS = {"treelstm-nary": "rows_forward", "rntn": "_gather_features", "mvrnn": "_gather_children"}


def main(argv=None) -> int:
    parser = option_parser(__doc__)
    parser.add_argument("--minibatches", type=int, default=300, help="minibatches per run (default 300)")
    parser.add_argument("--shards", default="1,2", help="shard counts, comma-separated (default 1,2)")
    parser.add_argument("--model", default="treelstm-nary")
    parser.add_argument(
        "--top", type=int, default=15, help="functions listed per count, by their own time (default 15)"
    )
    args = parse_options(parser, argv)
    set_up_process(override_blas_threads=True)

    import numpy as np

    _, vocab, train = load_sst(args.data_dir)
    labels = [tree.label for tree in train.trees]
    _, batches = minibatches(np.random.default_rng(1), len(train), args.minibatches * BATCH_SIZE, BATCH_SIZE)
    setting = settings(args.model, DIM)
    print(
        f"{args.model}, {len(batches)} SST minibatches of {BATCH_SIZE}, "
        f"d = {setting['hidden_dim']}, d_x = {setting['input_dim']}, "
        f"dropout {setting['dropout']}, float32, one thread"
    )
    results = {"model": args.model, "minibatches": len(batches), "shards": {}}
    for shards in (int(count) for count in args.shards.split(",")):
        record = profile(args.model, setting, shards, len(vocab), train, labels, batches, args.top)
        results["shards"][str(shards)] = record
    results["level_us"] = level_cost(args.model)
    print(
        f"\na level with next to no arithmetic (d = 2, 25 nodes): "
        f"{results['level_us']['forward']:.1f} us forward, "
        f"{results['level_us']['backward']:.1f} us backward (CPU)"
    )
    write_results(args.json, results)
    return 0


def level_cost(model_name: str, trees: int = 25, words: int = 40, rounds: int = 5) -> dict:
    """{"forward", "backward": microseconds of CPU per level} of ``model_name``'s
    cell over ``trees`` left-branching trees of ``words`` words, d = d_x = 2."""
    import numpy as np

    from npcomp.cells import make_cell, registry
    from npcomp.data.readers.formats import branching_tree
    from npcomp.forest import build_forest, node_words

    rng = np.random.default_rng(0)
    # a word of a cell with word matrices (the MV-RNN) is a vector and a d x d matrix
    width = 2 + 4 * registry.model(model_name).word_matrices
    cell = make_cell(model_name, width, 2)
    params = {name: rng.uniform(-0.5, 0.5, shape) for name, shape in cell.parameter_shapes()}
    tree = branching_tree([f"w{k}" for k in range(words)], "left")
    forest = build_forest([tree] * trees, [node_words(tree, np.arange(words))] * trees)
    x = rng.normal(size=(words, width))
    word_index = forest.word[forest.word_nodes()].astype(np.int64)
    levels = forest.n_levels - 1
    best = {"forward": float("inf"), "backward": float("inf")}
    for _ in range(rounds):
        tick = time.process_time()
        for _ in range(20):
            h, cache = cell.forward(params, forest, x, word_index)
        best["forward"] = min(best["forward"], (time.process_time() - tick) / 20)
        grads = {name: np.zeros_like(value) for name, value in params.items()}
        tick = time.process_time()
        for _ in range(20):
            cell.backward(params, forest, cache, np.ones_like(h), grads)
        best["backward"] = min(best["backward"], (time.process_time() - tick) / 20)
    return {name: 1e6 * seconds / levels for name, seconds in best.items()}


def profile(model_name: str, setting: dict, shards: int, vocab_size: int, train, labels, batches, top: int) -> dict:
    """CPU per step (unprofiled), then the calls of the same steps under cProfile."""
    import numpy as np

    from npcomp.cells import make_cell
    from npcomp.models import TreeModel

    input_dim = setting["input_dim"]
    cell = make_cell(model_name, input_dim, setting["hidden_dim"], **OPTIONS.get(model_name, {}))
    model = TreeModel(cell, 5, vocab_size, input_dim)
    start = initial_parameters(model, np.random.default_rng(1), np.float32)

    def fresh_step():
        params = start.copy()
        return training_step(
            model,
            params,
            adagrad(model, LR, EMBEDDING_LR, np.float32),
            train,
            labels,
            shards=shards,
            rng=np.random.default_rng(2),
            dropout=setting["dropout"],
            l2=L2,
        )

    fresh_step()(batches[0])  # compile or load the kernels
    step = fresh_step()
    tick, wall = time.process_time(), time.perf_counter()
    for indices in batches:
        step(indices)
    cpu_ms = 1000 * (time.process_time() - tick) / len(batches)
    wall_ms = 1000 * (time.perf_counter() - wall) / len(batches)

    step = fresh_step()
    profiler = cProfile.Profile()
    profiler.enable()
    for indices in batches:
        step(indices)
    profiler.disable()
    stats = pstats.Stats(profiler)
    steps = len(batches)
    levels = (
        sum(entry[1] for (_, _, name), entry in stats.stats.items() if name == LEVEL_FUNCTIONS.get(model_name)) / steps
    )
    calls = stats.total_calls / steps
    per_level = calls / levels if levels else None
    counted = (
        f"{levels:.1f} levels a step, {calls:.0f} Python calls a step, {per_level:.1f} a level"
        if levels
        else f"{calls:.0f} Python calls a step (levels not counted for {model_name})"
    )
    print(f"\nshards {shards}: {cpu_ms:.1f} ms CPU a step ({wall_ms:.1f} ms wall); {counted}")
    print(f"  {'own s':>7} {'calls/step':>10}  function")
    own = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)[:top]
    listed = []
    for (path, line, name), (_, ncalls, tottime, _, _) in own:
        where = f"{path.rsplit('/', 2)[-1] if '/' in path else path}:{line}({name})"
        print(f"  {tottime:7.3f} {ncalls / steps:10.1f}  {where}")
        listed.append({"function": where, "own_s": tottime, "calls_per_step": ncalls / steps})
    return {
        "cpu_ms_per_step": cpu_ms,
        "wall_ms_per_step": wall_ms,
        "levels_per_step": levels,
        "calls_per_step": calls,
        "calls_per_level": per_level,
        "top": listed,
    }


if __name__ == "__main__":
    sys.exit(main())
