"""Plain text made into trees: the SST's tokeniser, spaCy's dependency
parses, the binarised trees of those parses, and the trees of typed text.

The trees plain sentences get and the trees a split is scored on are named
here, without NumPy, so that the command line reads them before NumPy loads.
"""

# the trees plain sentences get (predict, neighbours: --tree; text_trees.py) and
# the trees a split is scored on (eval --trees)
TREE_CHOICES = ("parsed", "right", "left", "chain")
EVAL_TREES = ("gold", "parsed", "right", "left")
