"""What the cells share: activations, leaf inputs, level loops, the LSTM and
recurrence kernels, and the overflow guard.  Kernels are numba loops over a
forest's index arrays; they import the forest and nothing above it.
"""
