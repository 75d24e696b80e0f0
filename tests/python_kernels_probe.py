"""Run by tests/cells/test_python_kernels.py with NUMBA_DISABLE_JIT=1 (and imported
by it to run the same cases compiled): the loss and gradient of every
gradient-check setting and a step of each optimiser; as a script it prints
them with the numba kernels of npcomp that did not run."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import numpy as np

# gradcheck/ is the checkout's, beside tests/ (the wheel installs npcomp alone)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gradcheck.suite import CHECKED_MODELS, build_case, random_trees, settings
from npcomp.training.optimizers import make_optimizer


def run_everything() -> dict:
    """case -> [loss, gradient...] or the parameters after optimiser steps."""
    results = {}
    for model in CHECKED_MODELS:
        for k, setting in enumerate(settings(model)):
            rng = np.random.default_rng(k)
            case, params, batch, options = build_case(setting, random_trees(setting, rng), rng)
            grads = params.zeros_like()
            loss, _ = case.loss_and_gradient(params, batch, grads, **options)
            results[f"{model} {k}: {setting.describe()}"] = [float(loss), *grads.flat.tolist()]
    rng = np.random.default_rng(0)
    for name in ("adagrad", "adadelta", "sgd"):
        params = rng.normal(size=12)
        optimizer = make_optimizer(
            name, size=12, dense_size=8, embedding_offset=8, embedding_dim=2, lr=0.1, embedding_lr=0.2, dtype=np.float64
        )
        for _ in range(3):
            optimizer.step(params, rng.normal(size=12), np.array([1]))
        results[f"optimiser {name}"] = params.tolist()
    return results


def kernels(root: Path) -> list:
    """(file, function name) of every @njit function under ``root``."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                "njit" in ast.unparse(decorator) for decorator in node.decorator_list
            ):
                out.append((str(path), node.name))
    return out


def main() -> None:
    import npcomp

    called = set()

    def profile(frame, event, arg):
        if event == "call":
            called.add((frame.f_code.co_filename, frame.f_code.co_name))

    sys.setprofile(profile)
    results = run_everything()
    sys.setprofile(None)
    root = Path(npcomp.__file__).parent
    found = kernels(root)
    not_run = [f"{Path(path).relative_to(root)}:{name}" for path, name in found if (path, name) not in called]
    print(json.dumps({"kernels": len(found), "not_run": not_run, "results": results}))


if __name__ == "__main__":
    main()
