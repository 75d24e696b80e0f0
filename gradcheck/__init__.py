"""Finite-difference gradient checks for every npcomp model.

``python -m gradcheck --model all`` prints the largest relative error of each
named parameter of each model, head and supervision mode, and exits 1 on any
failure.  The test suite runs the same check on hypothesis-generated trees.
"""

from .check import TOLERANCE, check_gradients, relative_errors
from .trees import random_binary_tree, random_forest_trees

__all__ = ["TOLERANCE", "check_gradients", "relative_errors", "random_binary_tree", "random_forest_trees"]
