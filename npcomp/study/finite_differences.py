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

A row whose analytic and numeric gradients are both exactly 0 on every
entry checked is *unexercised*: the batch never makes J depend on those
parameters, so its relative error of 0 says nothing about the backward
(an S-LSTM's left peepholes W_c.^L on trees whose every left child is a
leaf, c^L = 0).  ``gradient_rows`` marks such rows.

``python -m gradcheck`` runs this on every model's settings; ``npcomp
explain`` on the tree it explains, where a trained model's large parameters
may be sampled (``entries``).
"""

from __future__ import annotations

import numpy as np

from npcomp.params import Parameters
from npcomp.training.thread_pools import pinned_thread_pools

TOLERANCE = 1e-6
STEP = 1e-3
RESOLUTION = 1e-6
# seconds of checks before their progress bar shows (``progress_bar``)
PROGRESS_DELAY = 2.0


def relative_errors(analytic: np.ndarray, numeric: np.ndarray, floor: float = 1e-12) -> np.ndarray:
    return np.abs(analytic - numeric) / np.maximum(np.abs(analytic) + np.abs(numeric), floor)


def objective(model, batch, **options):
    """J(flat) for a float64 flat parameter vector (fixed dropout masks in
    options), by the forward pass alone (``model.loss``)."""

    def evaluate(flat: np.ndarray) -> float:
        return model.loss(Parameters(model.layout, flat=flat), batch, **options)

    return evaluate


def numerical_gradient(function, flat: np.ndarray, indices: np.ndarray, step: float = STEP, bar=None) -> np.ndarray:
    """The central differences of ``function`` at ``flat`` in the entries
    ``indices``; ``bar`` (a tqdm bar, or None) advances an entry at a time."""
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
        if bar is not None:
            bar.update(1)
    return out


def progress_bar(total: int, description: str, unit: str, enabled: bool):
    """A tqdm bar over ``total`` checks on standard error, shown (with the
    time left) once they have lasted PROGRESS_DELAY seconds, so a small
    tree's never; None when not ``enabled``."""
    if not enabled:
        return None
    import sys

    from tqdm import tqdm

    # to a file or pipe, a line every few seconds rather than every check
    interval = 0.1 if sys.stderr.isatty() else 5.0
    return tqdm(
        total=total,
        desc=description,
        unit=unit,
        leave=False,
        dynamic_ncols=True,
        mininterval=interval,
        delay=PROGRESS_DELAY,
        file=sys.stderr,
    )


def check_gradients(model, params: Parameters, batch, step: float = STEP, **options) -> dict:
    """Max relative error per named parameter (and gate sub-block).

    ``batch`` is what the model's ``loss_and_gradient`` takes: a forest, or a
    ``PairBatch`` for the pair model.  ``options`` go to it too (l2, masks,
    average); pass fixed dropout ``masks``, never random ones.  Parameters
    must be float64.
    """
    return {name: error for name, error, _ in gradient_rows(model, params, batch, step, **options)}


@pinned_thread_pools()
def gradient_rows(model, params: Parameters, batch, step: float = STEP, **options) -> list:
    """[(name, max relative error, unexercised)] per named parameter and gate
    sub-block, as ``check_gradients``; ``unexercised``: both gradients are
    exactly 0 on every entry checked (module docstring)."""
    checks, full_error, touched = _check_blocks(model, params, batch, step, None, None, options)
    rows = []
    for check in checks:
        if check["name"] == "embedding" and check["unread_rows_error"]:
            rows.append(("embedding (unread rows)", check["unread_rows_error"], False))
        block = model.layout[check["name"]]
        rows.append(
            (
                check["name"],
                check["finite_difference_error"],
                check["entries_checked"] > 0 and not touched[block.offset : block.offset + block.size].any(),
            )
        )
    error_view = Parameters(model.layout, flat=full_error)
    touched_view = Parameters(model.layout, flat=touched.astype(np.float64))
    for sub_name, (block_name, index) in model.cell.report_slices().items():
        name = f"cell.{block_name}"
        rows.append((f"cell.{sub_name}", float(error_view[name][index].max()), not touched_view[name][index].any()))
    return rows


@pinned_thread_pools()
def parameter_checks(
    model,
    params: Parameters,
    batch,
    entries: int | None = None,
    rng: np.random.Generator | None = None,
    step: float = STEP,
    progress: bool = False,
    **options,
) -> list:
    """Per named parameter, in layout order: ``name``, ``shape``,
    ``gradient_norm`` (Frobenius, of dJ/dtheta), ``finite_difference_error``
    (the maximum relative error over the entries checked) and
    ``entries_checked``.  ``entries``: at most this many entries of each
    parameter, drawn by ``rng`` (None: every entry; the embedding's only on
    the rows the batch reads); ``progress``: a progress bar on standard
    error (``progress_bar``)."""
    return _check_blocks(model, params, batch, step, entries, rng, options, progress)[0]


def _check_blocks(
    model,
    params: Parameters,
    batch,
    step: float,
    entries: int | None,
    rng: np.random.Generator | None,
    options: dict,
    progress: bool = False,
) -> tuple:
    """([per-block check record], (size,) relative error of every checked entry,
    (size,) bool: a checked entry whose analytic or numeric gradient is not 0)."""
    if params.flat.dtype != np.float64:
        raise TypeError("gradient checks run in float64")
    forest = getattr(batch, "forest", batch)
    grads = params.zeros_like()
    loss, _ = model.loss_and_gradient(params, batch, grads, **options)
    floor = RESOLUTION * max(1.0, abs(loss))
    function = objective(model, batch, **options)
    checks = []
    full_error = np.zeros(model.layout.size)
    touched = np.zeros(model.layout.size, dtype=bool)
    chosen = []  # (block, the entries checked, the largest gradient off the rows read)
    for block in model.layout.blocks:
        indices = np.arange(block.offset, block.offset + block.size)
        stray_error = 0.0
        if block.name == "embedding":
            rows = np.unique(forest.word[forest.word >= 0])
            untouched = np.setdiff1d(np.arange(block.shape[0]), rows)
            stray = grads[block.name][untouched]
            if stray.size and np.any(stray != 0):
                stray_error = float(np.abs(stray).max())
            indices = (block.offset + rows[:, None] * block.shape[1] + np.arange(block.shape[1])[None, :]).ravel()
        if entries is not None and indices.size > entries:
            indices = np.sort(rng.choice(indices, size=entries, replace=False))
        chosen.append((block, indices, stray_error))
    bar = progress_bar(sum(indices.size for _, indices, _ in chosen), "parameter checks", "entry", progress)
    for block, indices, stray_error in chosen:
        numeric = numerical_gradient(function, params.flat, indices, step, bar)
        block_errors = relative_errors(grads.flat[indices], numeric, floor)
        full_error[indices] = block_errors
        touched[indices] = (grads.flat[indices] != 0) | (numeric != 0)
        check = {
            "name": block.name,
            "shape": list(block.shape),
            "gradient_norm": float(np.linalg.norm(grads[block.name])),
            "finite_difference_error": (float(block_errors.max()) if block_errors.size else 0.0),
            "entries_checked": int(indices.size),
            "unread_rows_error": stray_error,
        }
        if block.name == "embedding":  # per word row: which words' gradients disagree
            row_of = (indices - block.offset) // block.shape[1]
            check["row_errors"] = [[int(row), float(block_errors[row_of == row].max())] for row in np.unique(row_of)]
        checks.append(check)
    if bar is not None:
        bar.close()
    return checks, full_error, touched
