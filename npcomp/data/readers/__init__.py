"""Readers of the file formats: labelled trees (``formats.py``), PTB bracketed
trees, ``*.parents`` files, SICK's directories, dependency relations, trees
read another way, and word vectors with their vocabulary."""

# the package's public names, each loaded from its module when first named
_HOMES = {
    "Tree": "formats",
    "UNLABELLED": "formats",
    "NO_TOKEN": "formats",
    "NO_PARENT": "formats",
    "chain_tree": "formats",
    "branching_tree": "formats",
    "parse_ptb": "ptb",
    "read_ptb_file": "ptb",
    "read_parents": "parents",
    "write_parents": "parents",
    "parents_to_tree": "parents",
    "SickPair": "sick",
    "read_sick_dir": "sick",
    "ENTAILMENT_CLASSES": "sick",
    "Vocabulary": "embeddings",
    "build_embedding_matrix": "embeddings",
    "WordVectors": "vectors",
    "read_vectors": "vectors",
    "rebracket": "restructure",
    "sentence_chain": "restructure",
    "span_chains": "restructure",
    "RELATIONS": "dependency_relations",
}
__all__ = [
    "Tree",
    "UNLABELLED",
    "NO_TOKEN",
    "NO_PARENT",
    "chain_tree",
    "branching_tree",
    "parse_ptb",
    "read_ptb_file",
    "read_parents",
    "write_parents",
    "parents_to_tree",
    "SickPair",
    "read_sick_dir",
    "ENTAILMENT_CLASSES",
    "Vocabulary",
    "build_embedding_matrix",
    "WordVectors",
    "read_vectors",
    "rebracket",
    "sentence_chain",
    "span_chains",
    "RELATIONS",
]


def __getattr__(name: str):
    if name in _HOMES:
        from importlib import import_module

        home = _HOMES[name]
        module = import_module(f"{__name__}.{home or name}")
        return module if home is None else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__})
