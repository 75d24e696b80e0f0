"""The error a cell raises when a sentence's state leaves the floating-point
range while every parameter it read is finite: the sentence itself (its
length) is the cause, not the training.  Callers that know the sentences
name the one at fault (``training.finite_outputs.naming_the_sentence``)."""

from __future__ import annotations


class StateOverflow(ArithmeticError):
    """``tree``: the index, in the forest, of the sentence whose state overflowed."""

    def __init__(self, message: str, tree: int):
        super().__init__(message)
        self.tree = int(tree)

    def __reduce__(self):  # pickled whole: a helper process sends it back (shard_processes.py)
        return type(self), (str(self), self.tree)
