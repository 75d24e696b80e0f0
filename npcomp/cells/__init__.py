"""Composition cells: one module per cell, equations at the top of each.

``registry.py`` declares every model (its cell, structure, options and
settings); ``interface.py`` the interface every cell implements.  Cell
modules are imported when first used, so reading the registry loads
neither NumPy nor numba.
"""

from __future__ import annotations

from importlib import import_module

from .registry import MODELS, model

# what every cell implements (``interface.py``), loaded with NumPy when first named
_INTERFACE = ("Cell", "Nudge", "Term", "StructureError")
__all__ = ["MODELS", "cell_class", "make_cell", "model", "registry", *_INTERFACE]


def __getattr__(name: str):
    if name in _INTERFACE:
        from . import interface

        return getattr(interface, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def cell_class(name: str):
    """The class of the cell registered as ``name``."""
    entry = model(name)
    return getattr(import_module(f"{__name__}.{entry.module}"), entry.class_name)


def make_cell(name: str, input_dim: int, hidden_dim: int, **options):
    """A cell built with the options it takes; options it does not take must be
    None (not given), and an option's value one the model allows."""
    entry = model(name)
    given = {key: value for key, value in options.items() if value is not None}
    unused = sorted(set(given) - set(entry.options))
    if unused:
        raise ValueError(f"{name} takes no option {', '.join(unused)}")
    for key, value in given.items():
        allowed = entry.allowed(key)
        if allowed is not None and value not in allowed:
            raise ValueError(f"{name}: {key} must be one of {list(allowed)}, not {value!r}")
    return cell_class(name)(input_dim, hidden_dim, **given)
