"""Plain text made into trees: the SST's tokeniser, spaCy's dependency
parses, the binarised trees of those parses, and the trees of typed text.

The trees plain sentences get and the trees a split is scored on are named
here, without NumPy, so that the command line reads them before NumPy loads.
"""

# the trees plain sentences get (predict, neighbours: --tree; text_trees.py) and
# the trees a split is scored on (eval --trees)
TREE_CHOICES = ("parsed", "right", "left", "chain")
EVAL_TREES = ("gold", "parsed", "right", "left")

# the package's public names, each loaded from its module when first named
_HOMES = {
    "TextTrees": "text_trees",
    "TextParser": "parsed_trees",
    "binarise": "parsed_trees",
    "span_recall": "parsed_trees",
    "SpacyParser": "dependency_parser",
}
__all__ = ["TREE_CHOICES", "EVAL_TREES", "TextTrees", "TextParser", "binarise", "span_recall", "SpacyParser"]


def __getattr__(name: str):
    if name in _HOMES:
        from importlib import import_module

        home = _HOMES[name]
        module = import_module(f"{__name__}.{home or name}")
        return module if home is None else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__})
