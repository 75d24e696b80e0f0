"""What the cells share: activations, leaf inputs, level loops, the LSTM and
recurrence kernels, and the overflow guard.  Kernels are numba loops over a
forest's index arrays; they import the forest and nothing above it.
"""

# the package's public names, each loaded from its module when first named
_HOMES = {
    "CODES": "activations",
    "activation_code": "activations",
    "sum_by_index": "inputs",
    "StateOverflow": "overflow",
}
__all__ = ["CODES", "activation_code", "sum_by_index", "StateOverflow"]


def __getattr__(name: str):
    if name in _HOMES:
        from importlib import import_module

        home = _HOMES[name]
        module = import_module(f"{__name__}.{home or name}")
        return module if home is None else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__})
