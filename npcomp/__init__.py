"""npcomp: compositional sentence models with hand-written, gradient-checked backpropagation."""
__version__ = "0.1.0"
