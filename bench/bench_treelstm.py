"""Training and evaluation speed of Tai et al.'s Tree-LSTMs: the
Constituency Tree-LSTM on the real SST beside the same model level-batched
in PyTorch and written node by node in DyNet, and the Child-Sum Tree-LSTM
on SICK beside DyNet, all measured in the same run.

    python bench/bench_treelstm.py [--data-dir DIR] [--threads N] [--shards S] [--rounds R]
                                   [--no-torch] [--no-dynet] [--pairs P] [--json FILE]

Tai et al.'s setting: d = 150, 300-d (random) word vectors, minibatch 25,
AdaGrad, dropout 0.5, every labelled node supervised.  For float32 and
float64 it prints

* training sentences per second (forest building, forward, backward and the
  AdaGrad update; compilation excluded by a warm-up), the median of ``R``
  timed epochs,
* the time to evaluate the 2210 test sentences (best of 3),
* the matrix-product FLOPs of one training epoch (counted from the actual
  minibatches: forward, backward through the levels, weight gradients), and
  the GFLOP/s they ran at,
* this machine's matrix-product throughput measured in the same run with the
  same threads (so the result reads as a fraction of what the hardware does),
* at 1 thread, the same epochs' matrix products alone, replayed at the
  shapes the steps compute them (``products_alone``), epochs alternating
  with npcomp's: the share of the step's time they take, and so the share
  of the matrix-product rate a step would reach if nothing but its products
  took time.

npcomp computes each minibatch in ``S`` shards (``--shards``, default
``npcomp train``'s), on N threads at once: shards 1.. on N - 1 helper
processes where ``npcomp train`` forks them, on helper threads otherwise
(``npcomp/training/shards.py``); the numbers it computes do not depend on N.
At N > 1 threads each round also times an epoch of the same run on one
thread, alternating with the N-thread epochs (the same shards, so the same
computation), and the speed-up of N threads over one is printed; with
helper processes, an epoch on helper threads too (what the GIL between
threads costs).

In float32, when PyTorch is installed (``pip install torch``; not an npcomp
dependency), each npcomp epoch alternates with an epoch of the PyTorch
baseline of ``torch_cells.py`` on the same minibatches and threads, whose
loss is first checked against npcomp's on one forest, and the speed ratio
is printed: these machines' speed drifts by a quarter within minutes, so
the ratio of epochs timed side by side is the comparable figure.

When DyNet is installed (``pip install dynet38``; not an npcomp dependency),
the same model in DyNet (``dynet_cells.py``: built node by node with
autobatching on, AdaGrad at npcomp's rates, dropout 0.5, lambda as a term of
the loss) takes its turn in float32 after npcomp's (and PyTorch's) epoch on
the same minibatches, with its test-set evaluation timed as npcomp's.  Its
loss and gradients on the first minibatch are checked against npcomp's
first, and the benchmark stops if they differ (tolerances in
``dynet_cells.py``).  DyNet's CPU build computes on one thread whatever
``--threads`` says: at N > 1 threads the ratio is npcomp at N against DyNet
at one.  ``--no-dynet`` leaves it out.

SICK (``--pairs``, default every training pair; 0 leaves it out): the
Child-Sum Tree-LSTM over the dependency parses with Tai et al.'s similarity
head (d = 150, 300-d random word vectors held fixed, a 50-unit similarity
layer, minibatch 25 pairs, AdaGrad 0.05, lambda 1e-4, no dropout), in
float32, npcomp's epochs alternating with DyNet's (checked the same way)
when DyNet is installed; training pairs per second.  ``torch_cells.py`` has
no similarity head, so PyTorch sits this one out.

Results are also written as JSON (``--json``).  A benchmark, not a test.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from harness import (
    adagrad,
    add_shards_option,
    as_npcomp_trains,
    add_threads_option,
    alternate_epochs,
    best_of_3,
    initial_parameters,
    load_sst,
    matmul_throughput,
    minibatches,
    option_parser,
    optional_module,
    parse_options,
    ratios,
    set_up_process,
    training_step,
    write_results,
)

INPUT_DIM, HIDDEN_DIM, BATCH_SIZE = 300, 150, 25
LR, EMBEDDING_LR, L2, DROPOUT = 0.05, 0.1, 1e-4, 0.5
SIMILARITY_DIM = 50


def main(argv=None) -> int:
    parser = option_parser(__doc__)
    add_threads_option(parser)
    add_shards_option(parser)
    parser.add_argument(
        "--sentences", type=int, default=8544, help="training sentences timed per epoch (default: the SST's 8544)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed float32 epochs of each implementation (default 3)")
    parser.add_argument("--dtypes", default="float32,float64")
    parser.add_argument(
        "--no-torch", action="store_true", help="skip the PyTorch baseline even if PyTorch is installed"
    )
    parser.add_argument("--no-dynet", action="store_true", help="skip the DyNet baselines even if DyNet is installed")
    parser.add_argument(
        "--pairs",
        type=int,
        default=4500,
        help="SICK training pairs timed per epoch (default: all 4500; 0 leaves SICK out)",
    )
    args = parse_options(parser, argv)
    set_up_process()

    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from npcomp.runfiles.machine import machine_description

    machine = matmul_throughput(np, args.threads)
    print(
        f"machine: {args.threads} thread(s); float32 matrix product "
        f"{machine['float32']:.1f} GFLOP/s, float64 {machine['float64']:.1f} GFLOP/s"
    )
    torch_baseline = (
        None
        if args.no_torch
        else optional_module(
            "torch", "torch_cells", "PyTorch baseline skipped: PyTorch is not installed (pip install torch)"
        )
    )
    # dynet_config, not dynet: dynet_cells configures DyNet before it loads
    dynet = (
        None
        if args.no_dynet
        else optional_module(
            "dynet_config", "dynet_cells", "DyNet baselines skipped: DyNet is not installed (pip install dynet38)"
        )
    )

    results = {
        "threads": args.threads,
        "shards": args.shards,
        "machine_gflops": machine,
        "machine": machine_description(),
    }
    # the calling thread and N - 1 helpers (BLAS runs one thread in each)
    helpers = ThreadPoolExecutor(max_workers=args.threads - 1) if args.threads > 1 else None
    try:
        results["dtypes"] = sst(args, machine, helpers, torch_baseline, dynet)
        if args.pairs > 0:
            results["sick"] = sick(args, helpers, dynet)
    finally:
        if helpers is not None:
            helpers.shutdown()
    write_results(args.json, results)
    return 0


def sst(args, machine: dict, helpers, torch_baseline, dynet) -> dict:
    """The Constituency Tree-LSTM on the SST in each of ``args.dtypes``: a
    record per dtype."""
    import numpy as np

    from npcomp.training.encoding import encode

    task, vocab, train = load_sst(args.data_dir)
    data = {"train": train, "test": encode(task.splits["test"], vocab)}
    records = {}
    for dtype_name in args.dtypes.split(","):
        baselines = dtype_name == "float32"
        records[dtype_name] = _sst_dtype(
            np.dtype(dtype_name).type,
            data,
            len(vocab),
            args,
            machine[dtype_name],
            helpers,
            torch_baseline if baselines else None,
            dynet if baselines else None,
        )
    return records


def _sst_dtype(dtype, data: dict, vocab_size: int, args, machine_gflops: float, helpers, torch_baseline, dynet) -> dict:
    """Training and test-set speed of npcomp in ``dtype``, each epoch
    followed by one on a single thread (at N > 1 threads) and one of each
    baseline given (PyTorch, DyNet)."""
    import numpy as np

    from npcomp.cells import make_cell
    from npcomp.models import TreeModel
    from npcomp.training.evaluation import batch_bounds, evaluate

    train, test = data["train"], data["test"]
    labels = [tree.label for tree in train.trees]
    rng = np.random.default_rng(1)
    model = TreeModel(make_cell("treelstm-nary", INPUT_DIM, HIDDEN_DIM), 5, vocab_size, INPUT_DIM)
    params = initial_parameters(model, rng, dtype)
    params, processes = as_npcomp_trains(params, args.shards, args.threads)
    optimizer = adagrad(model, LR, EMBEDDING_LR, dtype)
    order, batches = minibatches(rng, len(train), args.sentences, BATCH_SIZE)
    step = training_step(
        model,
        params,
        optimizer,
        train,
        labels,
        shards=args.shards,
        helpers=helpers,
        rng=rng,
        dropout=DROPOUT,
        l2=L2,
        threads=args.threads,
        processes=processes,
    )
    step(batches[0])  # compile or load the kernels
    evaluate(model, params, test, 512, helpers)
    steps = {"npcomp": step}
    if helpers is not None:  # the same run on one thread, alternating
        steps["npcomp_1"] = training_step(
            model, params, optimizer, train, labels, shards=args.shards, rng=rng, dropout=DROPOUT, l2=L2
        )
    if args.threads == 1:  # its products alone, alternating
        steps["products"] = products_alone(params, train, batches, args.shards)
    if processes:  # and on helper threads, the GIL between them
        steps["npcomp_threads"] = training_step(
            model,
            params,
            optimizer,
            train,
            labels,
            shards=args.shards,
            helpers=helpers,
            rng=rng,
            dropout=DROPOUT,
            l2=L2,
            threads=args.threads,
        )
    baselines = {}
    if torch_baseline is not None:
        baselines["torch"] = _torch_trees(torch_baseline, model, params, train, labels, batches, args.threads)
    if dynet is not None:
        baselines["dynet"] = _dynet_trees(dynet, model, params, train, labels, batches, test)
    steps.update({name: baseline["step"] for name, baseline in baselines.items()})
    try:
        speeds = alternate_epochs(steps, batches, len(order), args.rounds if dtype == np.float32 else 1)
    finally:
        step.close()
    speed = statistics.median(speeds["npcomp"])
    flops = sum(matmul_flops(train.forest(indices), INPUT_DIM, HIDDEN_DIM) for indices in batches)
    eval_times = best_of_3(lambda: evaluate(model, params, test, 512, helpers))
    test_time = min(eval_times)
    # the forward's products over the forests evaluate cuts the test set into
    eval_flops = sum(
        matmul_flops(test.forest(range(start, stop)), INPUT_DIM, HIDDEN_DIM) / 3
        for start, stop in batch_bounds(len(test), 512)
    )
    epoch_flops = flops * len(train) / len(order)
    achieved = flops * speed / len(order) / 1e9
    record = {
        "train_sentences_per_s": speed,
        "train_sentences_per_s_all": speeds["npcomp"],
        "epoch_seconds": len(train) / speed,
        "test_eval_s": test_time,
        "test_eval_s_all": eval_times,
        "test_sentences": len(test),
        "test_eval_gflop": eval_flops / 1e9,
        "test_eval_product_floor_s": eval_flops / 1e9 / machine_gflops,
        "epoch_gflop": epoch_flops / 1e9,
        "achieved_gflops": achieved,
        "fraction_of_machine": achieved / machine_gflops,
    }
    print(
        f"{np.dtype(dtype).name}: {speed:7.0f} training sentences/s (epoch "
        f"{len(train) / speed:5.1f} s{_spread(speeds['npcomp'])}), test eval {test_time:5.2f} s "
        f"(best of 3) for {len(test)} sentences, whose {eval_flops / 1e9:.1f} GFLOP of "
        f"products alone take {eval_flops / 1e9 / machine_gflops:.2f} s at the measured "
        f"rate; {epoch_flops / 1e9:6.1f} GFLOP/epoch at "
        f"{achieved:5.1f} GFLOP/s = {100 * record['fraction_of_machine']:4.1f}% of the "
        f"measured matrix product"
    )
    if "products" in speeds:
        record.update(_products_alone(speeds, record["fraction_of_machine"]))
    if "npcomp_1" in speeds:
        record.update(_thread_scaling(speeds, args.threads, processes))
    record.update(_baseline_records(speeds, baselines))
    return record


def _products_alone(speeds: dict, fraction_of_machine: float) -> dict:
    """The epochs of the step's products alone, alternating with the step's
    (printed): the share of the step's time they take, and the share of
    the matrix-product rate a step would reach if nothing else took time."""
    each = [step / products for step, products in zip(speeds["npcomp"], speeds["products"])]
    time_share = statistics.median(each)
    ceiling = fraction_of_machine / time_share
    print(
        f"  its matrix products alone, replayed at the step's shapes, epochs alternating: "
        f"{statistics.median(speeds['products']):7.0f} sentences/s{_spread(speeds['products'])}; "
        f"{100 * time_share:.1f}% of the step's time ({', '.join(f'{100 * r:.1f}' for r in each)})"
        f": a step of nothing else would run at {100 * ceiling:.1f}% of the measured matrix "
        f"product"
    )
    return {
        "products_alone": {
            "sentences_per_s": statistics.median(speeds["products"]),
            "sentences_per_s_all": speeds["products"],
            "share_of_step_time": time_share,
            "share_of_step_time_all": each,
            "fraction_of_machine": ceiling,
        }
    }


# the target of 2 threads over one (docs/SPEED.md, "The Constituency Tree-LSTM
# against PyTorch and DyNet")
SCALING_TARGET = 1.7


def _thread_scaling(speeds: dict, threads: int, processes: bool) -> dict:
    """The same run on one thread, epochs alternating with N threads'
    (printed): its speeds and the speed-up of N threads (helper processes
    where npcomp train forks them; then also on helper threads)."""
    each = [many / one for many, one in zip(speeds["npcomp"], speeds["npcomp_1"])]
    speed_up = statistics.median(each)
    helpers = "processes" if processes else "threads"
    print(
        f"  the same run on 1 thread, epochs alternating: "
        f"{statistics.median(speeds['npcomp_1']):7.0f} training sentences/s"
        f"{_spread(speeds['npcomp_1'])}; {threads} threads ({threads - 1} helper "
        f"{helpers}) / 1: {speed_up:.2f}x ({', '.join(f'{ratio:.2f}' for ratio in each)})"
        + (f", target {SCALING_TARGET}x {'met' if speed_up >= SCALING_TARGET else 'not met'}" if threads == 2 else "")
    )
    record = {
        "one_thread": {
            "train_sentences_per_s": statistics.median(speeds["npcomp_1"]),
            "train_sentences_per_s_all": speeds["npcomp_1"],
        },
        "thread_speed_up": speed_up,
        "thread_speed_up_all": each,
        "helpers": helpers,
    }
    if processes:
        on_threads = [many / one for many, one in zip(speeds["npcomp_threads"], speeds["npcomp_1"])]
        print(
            f"  on {threads - 1} helper thread(s) instead of processes: "
            f"{statistics.median(speeds['npcomp_threads']):7.0f} training sentences/s"
            f"{_spread(speeds['npcomp_threads'])}; / 1 thread: "
            f"{statistics.median(on_threads):.2f}x"
        )
        record["helper_threads"] = {
            "train_sentences_per_s": statistics.median(speeds["npcomp_threads"]),
            "train_sentences_per_s_all": speeds["npcomp_threads"],
            "speed_up": statistics.median(on_threads),
            "speed_up_all": on_threads,
        }
    return record


def _baseline_records(speeds: dict, baselines: dict) -> dict:
    """Each baseline's record, printed: speeds, check, npcomp's ratio (and
    DyNet's test-set evaluation, timed here)."""
    records = {}
    if "torch" in baselines:
        baseline = baselines["torch"]
        records["torch"] = _compared(
            speeds["npcomp"], speeds["torch"], baseline["version"], loss_relative_difference=baseline["loss_difference"]
        )
        print(
            f"  PyTorch {baseline['version']} level-batched, same minibatches: "
            f"{_speeds(records['torch'], 'training sentences')} (loss on one forest within "
            f"{baseline['loss_difference']:.1e} of npcomp's); npcomp / PyTorch, "
            f"{_ratios(records['torch'])}"
        )
    if "dynet" in baselines:
        baseline = baselines["dynet"]
        eval_times = best_of_3(baseline["evaluate"])
        records["dynet"] = _compared(
            speeds["npcomp"],
            speeds["dynet"],
            baseline["version"],
            threads=1,
            check=baseline["check"],
            test_eval_s=min(eval_times),
            test_eval_s_all=eval_times,
        )
        print(
            f"  DyNet {baseline['version']} node by node, autobatching, one thread, same "
            f"minibatches: {_speeds(records['dynet'], 'training sentences')} "
            f"({_checked(baseline['check'])}), test eval {min(eval_times):5.2f} s "
            f"(best of 3); npcomp / DyNet, {_ratios(records['dynet'])}"
        )
    return records


def sick(args, helpers, dynet) -> dict | None:
    """The Child-Sum Tree-LSTM with the similarity head on SICK's training
    pairs in float32, beside DyNet; None (with a note) without SICK."""
    import numpy as np

    from npcomp.cells import make_cell
    from npcomp.data.readers.embeddings import Vocabulary
    from npcomp.data.datasets.tasks import load_task
    from npcomp.models import PairModel
    from npcomp.training.encoding import encode_split
    from npcomp.training.shards import ShardedGradient

    if not (Path(args.data_dir) / "sick" / "train").is_dir():
        print(f"SICK skipped: no {Path(args.data_dir) / 'sick' / 'train'} (npcomp download sick, or --pairs 0)")
        return None
    pairs = load_task("sick", args.data_dir, structure="dependency", splits=("train",)).splits["train"]
    vocab = Vocabulary.from_trees(tree for pair in pairs for tree in (pair.tree_a, pair.tree_b))
    train = encode_split(pairs, vocab)
    rng = np.random.default_rng(1)
    model = PairModel(
        make_cell("treelstm-childsum", INPUT_DIM, HIDDEN_DIM), len(vocab), INPUT_DIM, hidden_dim=SIMILARITY_DIM
    )
    params = initial_parameters(model, rng, np.float32)
    optimizer = adagrad(model, LR, LR, np.float32)
    order, batches = minibatches(rng, len(train), args.pairs, BATCH_SIZE)

    sharded = ShardedGradient(model, params.zeros_like(), args.shards, helpers)
    params, processes = as_npcomp_trains(params, args.shards, args.threads)
    if processes:
        sharded.use_processes(params, args.threads - 1)
    grads = sharded.grads

    def step(indices):
        # the buffers are zero where it matters, as in npcomp train: the step
        # and the line below zero what it consumed
        _, rows = sharded.loss_and_gradient(params, sharded.shards_of(params, train, indices), l2=L2)
        optimizer.step(params.flat, grads.flat, None)  # the word vectors stay fixed
        grads["embedding"][rows] = 0.0

    try:
        step(batches[0])  # compile or load the kernels
        steps = {"npcomp": step}
        if dynet is not None:
            baseline = _dynet_pairs(dynet, model, params, train, batches)
            steps["dynet"] = baseline["step"]
        speeds = alternate_epochs(steps, batches, len(order), args.rounds)
    finally:
        sharded.close()
    speed = statistics.median(speeds["npcomp"])
    record = {"pairs": len(order), "train_pairs_per_s": speed, "train_pairs_per_s_all": speeds["npcomp"]}
    print(
        f"SICK, Child-Sum Tree-LSTM over dependency parses, float32, {len(order)} training "
        f"pairs: {speed:7.0f} training pairs/s{_spread(speeds['npcomp'])}"
    )
    if dynet is not None:
        record["dynet"] = _compared(
            speeds["npcomp"], speeds["dynet"], baseline["version"], unit="pairs", threads=1, check=baseline["check"]
        )
        print(
            f"  DyNet {baseline['version']} node by node, autobatching, one thread, same "
            f"minibatches: {_speeds(record['dynet'], 'training pairs', 'pairs')} "
            f"({_checked(baseline['check'])}); npcomp / DyNet, {_ratios(record['dynet'])}"
        )
    return record


def _compared(ours: list, theirs: list, version: str, unit: str = "sentences", **extra) -> dict:
    """A baseline's record: its speeds and npcomp's ratio, round by round."""
    median, each = ratios(ours, theirs)
    return {
        "version": version,
        f"train_{unit}_per_s": statistics.median(theirs),
        f"train_{unit}_per_s_all": theirs,
        **extra,
        "speed_ratio": median,
        "speed_ratio_all": each,
    }


def _speeds(record: dict, what: str, unit: str = "sentences") -> str:
    return f"{record[f'train_{unit}_per_s']:7.0f} {what}/s{_spread(record[f'train_{unit}_per_s_all'])}"


def _ratios(record: dict) -> str:
    return (
        f"epochs side by side: {record['speed_ratio']:.2f}x "
        f"({', '.join(f'{ratio:.2f}' for ratio in record['speed_ratio_all'])})"
    )


def _spread(values) -> str:
    if len(values) < 2:
        return ""
    return f"; {len(values)} epochs {min(values):.0f}-{max(values):.0f}"


def _torch_trees(torch_cells, model, params, train, labels, batches, threads) -> dict:
    """The same model and initial weights in PyTorch (``torch_cells``), its
    loss checked on one forest: {"step", "version", "loss_difference"}."""
    import torch

    torch.set_num_threads(threads)
    torch.sparse.check_sparse_tensor_invariants.disable()  # opting out, as its warning asks
    baseline = torch_cells.TorchModel.of(model)
    baseline.load_npcomp(params)
    forest = train.forest(batches[0], labels)
    ours, _ = model.loss_and_gradient(params, forest, params.zeros_like())
    with torch.no_grad():
        theirs = float(baseline.loss(forest))
    step = baseline.training_step(train, labels, lr=LR, embedding_lr=EMBEDDING_LR, l2=L2, dropout=DROPOUT)
    step(batches[0])
    return {"step": step, "version": torch.__version__, "loss_difference": abs(ours - theirs) / abs(ours)}


def _dynet_check(dynet, model, params, batch) -> dict:
    """DyNet's loss and gradients on ``batch`` against npcomp's (the
    objective timed, lambda included); stops the benchmark if they differ."""
    from counterparts import worst_gradient

    check = dynet.check_against_npcomp(model, params, batch, l2=L2)
    _, gradient = worst_gradient(check)
    if not dynet.passes(check):
        sys.exit(
            f"the DyNet {model.cell.name} differs from npcomp's on one minibatch: loss "
            f"by {check['loss_difference']:.1e} (tolerance {dynet.LOSS_TOLERANCE:.0e}), "
            f"gradients by {gradient:.1e} ({dynet.GRADIENT_TOLERANCE:.0e}); not timed"
        )
    return {"loss_relative_difference": check["loss_difference"], "gradient_relative_difference": gradient}


def _checked(check: dict) -> str:
    return (
        f"on one minibatch loss within {check['loss_relative_difference']:.1e} and "
        f"gradients within {check['gradient_relative_difference']:.1e} of npcomp's"
    )


def _dynet_trees(dynet, model, params, train, labels, batches, test) -> dict:
    """The Constituency Tree-LSTM in DyNet from npcomp's weights, checked:
    {"step", "evaluate" (the test set), "version", "check"}."""
    check = _dynet_check(dynet, model, params, train.forest(batches[0], labels))
    baseline = dynet.counterpart(model)
    baseline.weights.load_npcomp(params)
    trainer = baseline.weights.trainer(lr=LR, embedding_lr=EMBEDDING_LR)

    def step(indices):
        trainer.step(baseline.loss(train.forest(indices, labels), dropout=DROPOUT, l2=L2))

    def evaluate():
        """Every test node's class, in forests of 512 sentences as npcomp's."""
        for start in range(0, len(test), 512):
            baseline.predict(test.forest(range(start, min(start + 512, len(test)))))

    step(batches[0])
    evaluate()
    return {"step": step, "evaluate": evaluate, "version": dynet.version(), "check": check}


def _dynet_pairs(dynet, model, params, train, batches) -> dict:
    """The Child-Sum Tree-LSTM with the similarity head in DyNet, word
    vectors fixed, from npcomp's weights, checked: {"step", "version", "check"}."""
    check = _dynet_check(dynet, model, params, train.batch(batches[0]))
    baseline = dynet.counterpart(model, fixed_embeddings=True)
    baseline.weights.load_npcomp(params)
    trainer = baseline.weights.trainer(lr=LR, embedding_lr=None)

    def step(indices):
        trainer.step(baseline.loss(train.batch(indices), l2=L2))

    step(batches[0])
    return {"step": step, "version": dynet.version(), "check": check}


def products_alone(params, train, batches, shards: int):
    """step(indices): the matrix products alone of the training step on the
    minibatch ``indices`` (one of ``batches``), on the calling thread,
    replayed at the shapes the N-ary Tree-LSTM computes them
    (``treelstm_nary.py``): the minibatch cut into ``shards`` as ``npcomp
    train`` cuts it; per shard, its distinct words' x W, d_x = delta W^T and
    W's gradient, each level's [h_1 h_2] U and delta U^T over its padded
    rows, and U's gradient over the inner nodes.  The forests are cut
    beforehand, so the step times products and nothing else.  Operands are
    contiguous arrays of each width, as the cell's, holding values in (-1, 1)
    (no subnormals)."""
    import numpy as np

    from npcomp.cells.kernels.levels import ROW_PAD, padded_stop
    from npcomp.training.shards import shard_bounds

    u, w = params["cell.U"], params["cell.W"]
    u_transposed = np.ascontiguousarray(u.T)
    grad_u, grad_w = np.zeros_like(u), np.zeros_like(w)
    rows = max(train.node_counts(indices).sum() for indices in batches) + ROW_PAD
    generator = np.random.default_rng(0)

    def block(width: int) -> np.ndarray:
        return generator.uniform(-1, 1, (rows, width)).astype(u.dtype)

    hc, delta = block(u.shape[0]), block(u.shape[1])
    x, delta_word = block(w.shape[0]), block(w.shape[1])
    gates, d_hc = np.empty_like(delta), np.empty_like(hc)
    # per minibatch, per shard: (distinct words, levels, inner nodes)
    shapes = {}
    for indices in map(np.asarray, batches):
        shapes[indices.tobytes()] = [
            (
                np.unique(forest.word[forest.word >= 0]).shape[0],
                [(start, padded_stop(start, stop)) for start, stop in forest.levels(first=1)],
                slice(forest.n_leaves, forest.n_nodes),
            )
            for forest in (
                train.batch(indices[start:stop]) for start, stop in shard_bounds(train.node_counts(indices), shards)
            )
        ]

    def step(indices):
        for words, levels, inner in shapes[np.asarray(indices).tobytes()]:
            x[:words] @ w
            delta_word[:words] @ w.T
            grad_w[...] += x[:words].T @ delta_word[:words]
            for start, padded in levels:
                np.matmul(hc[start:padded], u, out=gates[start:padded])
                np.matmul(delta[start:padded], u_transposed, out=d_hc[: padded - start])
            grad_u[...] += hc[inner].T @ delta[inner]

    return step


def matmul_flops(forest, input_dim: int, hidden_dim: int, arity: int = 2) -> float:
    """Matrix-product FLOPs of one training step of the N-ary Tree-LSTM on a forest.

    Leaves (per distinct word): x W forward, W's gradient and dx: 3 products
    of d_x by 3d.  Inner nodes: [h_1..h_N] U forward, delta U^T backward and
    U's gradient: 3 products of N d by (3+N) d.  The classifier is negligible.
    """
    import numpy as np

    distinct_words = np.unique(forest.word[forest.word >= 0]).shape[0]
    inner = forest.n_nodes - forest.n_leaves
    leaf_flops = 2.0 * distinct_words * input_dim * 3 * hidden_dim
    inner_flops = 2.0 * inner * arity * hidden_dim * (3 + arity) * hidden_dim
    return 3.0 * (leaf_flops + inner_flops)


if __name__ == "__main__":
    sys.exit(main())
