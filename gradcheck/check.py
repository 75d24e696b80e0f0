"""Central finite differences against the hand-written backward pass.

For every entry theta_k of the flat parameter vector (float64) the numerical
derivative is the fourth-order central difference

    n_k = [8 (J(theta + h e_k) - J(theta - h e_k)) - (J(theta + 2h e_k) - J(theta - 2h e_k))] / 12h

with h = 1e-3 (truncation error O(h^4); the rounding of J, amplified by 1/h,
leaves an absolute noise of about 1e-13 |J|, measured), and the relative error
of the analytic a_k is

    |a_k - n_k| / max(|a_k| + |n_k|, floor),   floor = 1e-6 * max(1, |J|).

The floor is the resolution of the finite differences: an entry a million
times smaller than |J| (a vanishing gradient deep in a sigmoid network, say)
is known to ~1e-13 |J| only, so relative to itself it cannot be checked to
1e-6; it is compared in absolute terms instead, against 1e-6 |J|.  Every
entry the size of ordinary gradients is still held to 1e-6 relative.

reported as its maximum over each named parameter (and over each gate's
sub-block).  The embedding table is checked on the rows the forest reads; on
every other row the analytic gradient must be exactly zero.
"""
from __future__ import annotations

import numpy as np

from npcomp.params import Parameters

TOLERANCE = 1e-6
STEP = 1e-3
RESOLUTION = 1e-6


def relative_errors(analytic: np.ndarray, numeric: np.ndarray, floor: float = 1e-12) -> np.ndarray:
    return np.abs(analytic - numeric) / np.maximum(np.abs(analytic) + np.abs(numeric), floor)


def objective(model, batch, **options):
    """J(flat) for a float64 flat parameter vector (fixed dropout masks in options)."""
    def evaluate(flat: np.ndarray) -> float:
        params = Parameters(model.layout, flat=flat)
        return model.loss_and_gradient(params, batch, params.zeros_like(), **options)[0]
    return evaluate


def numerical_gradient(function, flat: np.ndarray, indices: np.ndarray,
                       step: float = STEP) -> np.ndarray:
    out = np.zeros(indices.shape[0])
    work = flat.copy()
    for position, k in enumerate(indices):
        original = work[k]
        values = []
        for shift in (step, -step, 2 * step, -2 * step):
            work[k] = original + shift
            values.append(function(work))
        work[k] = original
        out[position] = (8 * (values[0] - values[1]) - (values[2] - values[3])) / (12 * step)
    return out


def check_gradients(model, params: Parameters, batch, step: float = STEP, **options) -> dict:
    """Max relative error per named parameter (and gate sub-block).

    ``batch`` is what the model's ``loss_and_gradient`` takes: a forest, or a
    ``PairBatch`` for the pair model.  ``options`` go to it too (l2, masks,
    average); pass fixed dropout ``masks``, never random ones.  Parameters
    must be float64.
    """
    if params.flat.dtype != np.float64:
        raise TypeError("gradient checks run in float64")
    forest = getattr(batch, "forest", batch)
    grads = params.zeros_like()
    loss, _ = model.loss_and_gradient(params, batch, grads, **options)
    floor = RESOLUTION * max(1.0, abs(loss))
    function = objective(model, batch, **options)
    layout = model.layout
    errors = {}
    full_error = np.zeros(layout.size)
    for block in layout.blocks:
        indices = np.arange(block.offset, block.offset + block.size)
        if block.name == "embedding":
            rows = np.unique(forest.word[forest.word >= 0])
            untouched = np.setdiff1d(np.arange(block.shape[0]), rows)
            stray = grads[block.name][untouched]
            if stray.size and np.any(stray != 0):
                errors["embedding (unread rows)"] = float(np.abs(stray).max())
            indices = (block.offset + rows[:, None] * block.shape[1]
                       + np.arange(block.shape[1])[None, :]).ravel()
        numeric = numerical_gradient(function, params.flat, indices, step)
        block_errors = relative_errors(grads.flat[indices], numeric, floor)
        full_error[indices] = block_errors
        errors[block.name] = float(block_errors.max()) if block_errors.size else 0.0
    error_view = Parameters(layout, flat=full_error)
    for sub_name, (block_name, index) in model.cell.report_slices().items():
        errors[f"cell.{sub_name}"] = float(error_view[f"cell.{block_name}"][index].max())
    return errors


def assert_passes(errors: dict, tolerance: float = TOLERANCE) -> None:
    """Raise AssertionError naming every entry of ``errors`` above ``tolerance``."""
    failed = {name: error for name, error in errors.items() if not error <= tolerance}
    assert not failed, f"gradient check failed: {failed}"
