"""Parameters as one flat vector with named views.

The optimiser, the gradient check and the checkpoint all see a model's
parameters as a single 1-D array; the model's code sees the same memory as
named matrices (``cell.U``, ``softmax.W``, ``embedding``).  Gradients use the
same layout, so ``grad["cell.U"]`` is dLoss/d``params["cell.U"]``.

On disk (``Parameters.save``, ``Parameters.load``) the parameters are a
NumPy archive (.npz) of one array per named block, under its name and in its
shape, in the layout's order: the file says which model it fits, and
loading it into a layout checks every name and shape.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from npcomp.errors import DataError

__all__ = ["Layout", "Parameters", "ParameterFileError"]


class ParameterFileError(DataError):
    """A parameter file that cannot be read, or that does not fit the
    layout it is loaded into; the message names the file and what differs."""


@dataclass(frozen=True)
class Block:
    name: str
    shape: tuple
    offset: int

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


class Layout:
    """An ordered list of named blocks packed into one flat vector."""

    def __init__(self, shapes: Iterable):
        blocks = []
        offset = 0
        for name, shape in shapes:
            shape = tuple(int(s) for s in shape)
            block = Block(name, shape, offset)
            if any(b.name == name for b in blocks):
                raise ValueError(f"duplicate parameter name {name!r}")
            blocks.append(block)
            offset += block.size
        self.blocks = tuple(blocks)
        self.size = offset
        self._by_name = {b.name: b for b in blocks}

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> Block:
        return self._by_name[name]

    @property
    def names(self) -> list:
        return [b.name for b in self.blocks]

    @property
    def shapes(self) -> list:
        """(name, shape) of every block, in order: what ``Layout(shapes)`` takes."""
        return [(b.name, b.shape) for b in self.blocks]


class Parameters:
    """A flat vector (``flat``) and its named views (``params[name]``)."""

    def __init__(self, layout: Layout, dtype=np.float64, flat: np.ndarray | None = None):
        self.layout = layout
        if flat is None:
            flat = np.zeros(layout.size, dtype=dtype)
        if flat.shape != (layout.size,):
            raise ValueError(f"flat vector has shape {flat.shape}, layout needs ({layout.size},)")
        self.flat = flat
        self._views = {b.name: flat[b.offset : b.offset + b.size].reshape(b.shape) for b in layout.blocks}

    def __getitem__(self, name: str) -> np.ndarray:
        return self._views[name]

    def __contains__(self, name: str) -> bool:
        return name in self._views

    def items(self):
        return self._views.items()

    def zeros_like(self) -> "Parameters":
        return Parameters(self.layout, self.flat.dtype)

    def astype(self, dtype) -> "Parameters":
        return Parameters(self.layout, flat=self.flat.astype(dtype))

    def copy(self) -> "Parameters":
        return Parameters(self.layout, flat=self.flat.copy())

    def prefixed(self, prefix: str) -> dict:
        """Views whose names start with ``prefix + '.'``, keyed without it."""
        start = prefix + "."
        return {name[len(start) :]: view for name, view in self._views.items() if name.startswith(start)}

    def save(self, path: str | Path) -> None:
        """Write the parameters to ``path``, a NumPy archive named exactly so
        (no suffix added): one array per block, under its name, in its shape
        and the parameters' dtype.  The file is written beside ``path`` and
        renamed over it once complete: a file already there is replaced
        whole or, if writing fails, left as it was."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        try:
            with open(tmp, "wb") as handle:
                np.savez(handle, **dict(self.items()))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: str | Path, layout: Layout | None = None, dtype=None) -> "Parameters":
        """The parameters ``save`` wrote to ``path``, laid out by ``layout``
        (a model's ``model.layout``; None: the file's own names and shapes),
        in the file's dtype or ``dtype``.  ParameterFileError names the file
        and what differs from ``layout``: names missing or unexpected, shapes
        (an embedding table of another vocabulary, a cell of another size)."""
        arrays = _read_archive(Path(path))
        if layout is None:
            layout = Layout((name, array.shape) for name, array in arrays.items())
        _check_fits(path, arrays, layout)
        if dtype is None:
            dtype = np.result_type(*arrays.values())
        params = cls(layout, dtype)
        for name, array in arrays.items():
            params[name][...] = array
        return params


def _read_archive(path: Path) -> dict:
    """name -> array of a parameter file, read into memory; every array of floats."""
    try:
        loaded = np.load(path, allow_pickle=False)
    except (EOFError, ValueError) as error:  # neither an archive nor an array
        raise ParameterFileError(f"not a NumPy archive of parameters ({error})", path) from None
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise ParameterFileError(
            "a single array, not an archive of named parameters (Parameters.save writes one)", path
        )
    try:
        with loaded as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (zipfile.BadZipFile, EOFError, ValueError, KeyError, OSError) as error:
        raise ParameterFileError(f"a damaged NumPy archive ({type(error).__name__}: {error})", path) from None
    if not arrays:
        raise ParameterFileError("holds no parameters", path)
    not_float = [
        f"{name} ({array.dtype})" for name, array in arrays.items() if not np.issubdtype(array.dtype, np.floating)
    ]
    if not_float:
        raise ParameterFileError(f"parameters must be floating point: {', '.join(not_float)}", path)
    return arrays


def _check_fits(path, arrays: dict, layout: Layout) -> None:
    """ParameterFileError unless ``arrays`` has exactly ``layout``'s names and shapes."""
    missing = [name for name in layout.names if name not in arrays]
    unexpected = [name for name in arrays if name not in layout]
    if missing or unexpected:
        parts = ([f"lacks {', '.join(missing)}"] if missing else []) + (
            [f"holds {', '.join(unexpected)}, which the model has not"] if unexpected else []
        )
        raise ParameterFileError(
            f"parameters of another model: it {' and '.join(parts)} (the model's: {', '.join(layout.names)})", path
        )
    wrong = [
        f"{name} has shape {arrays[name].shape} where the model's is "
        f"{layout[name].shape}{_what_differs(name, arrays[name].shape, layout[name].shape)}"
        for name in layout.names
        if arrays[name].shape != layout[name].shape
    ]
    if wrong:
        raise ParameterFileError("parameters of another model: " + "; ".join(wrong), path)


def _what_differs(name: str, found: tuple, needed: tuple) -> str:
    """What a shape mismatch of the embedding table means, in words."""
    if name != "embedding" or len(found) != 2 or len(needed) != 2:
        return ""
    if found[0] != needed[0]:
        return f" (a vocabulary of {found[0]} words, not {needed[0]})"
    return f" (word vectors of dimension {found[1]}, not {needed[1]})"
