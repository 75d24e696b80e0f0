"""The finite-difference check the suite runs (``npcomp/study/finite_differences.py``,
which ``npcomp explain`` shares), and the assertion the tests use."""

from __future__ import annotations

from npcomp.study.finite_differences import (  # noqa: F401 (the suite's and the tests' names)
    RESOLUTION,
    STEP,
    TOLERANCE,
    check_gradients,
    gradient_rows,
    numerical_gradient,
    objective,
    relative_errors,
)


def assert_passes(errors: dict, tolerance: float = TOLERANCE) -> None:
    """Raise AssertionError naming every entry of ``errors`` above ``tolerance``."""
    failed = {name: error for name, error in errors.items() if not error <= tolerance}
    assert not failed, f"gradient check failed: {failed}"
