"""Parameters as one flat vector with named views.

The optimiser, the gradient check and the checkpoint all see a model's
parameters as a single 1-D array; the model's code sees the same memory as
named matrices (``cell.U``, ``softmax.W``, ``embedding``).  Gradients use the
same layout, so ``grad["cell.U"]`` is dLoss/d``params["cell.U"]``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np


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


class Parameters:
    """A flat vector (``flat``) and its named views (``params[name]``)."""

    def __init__(self, layout: Layout, dtype=np.float64, flat: np.ndarray | None = None):
        self.layout = layout
        if flat is None:
            flat = np.zeros(layout.size, dtype=dtype)
        if flat.shape != (layout.size,):
            raise ValueError(f"flat vector has shape {flat.shape}, layout needs ({layout.size},)")
        self.flat = flat
        self._views = {b.name: flat[b.offset:b.offset + b.size].reshape(b.shape)
                       for b in layout.blocks}

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
        return {name[len(start):]: view for name, view in self._views.items()
                if name.startswith(start)}
