"""The data layer: labelled trees and the files they are read from.

Four packages, each a job: ``readers`` (the file formats: labelled trees,
PTB brackets, ``*.parents`` files, SICK's directories, word vectors and the
vocabulary), ``text`` (plain text made into trees: the SST's tokeniser,
dependency parses and their binarised trees, typed text), ``datasets`` (the
tasks and their splits, the synthetic treebank, a user's own labelled files,
docs/DATA.md) and ``downloads`` (``npcomp download``).  It imports nothing
above it: every layer above reads data through it.
"""

# the package's public names, each loaded from its module when first named
_HOMES = {"readers": None, "text": None, "datasets": None, "downloads": None}
__all__ = ["readers", "text", "datasets", "downloads"]


def __getattr__(name: str):
    if name in _HOMES:
        from importlib import import_module

        home = _HOMES[name]
        module = import_module(f"{__name__}.{home or name}")
        return module if home is None else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__})
