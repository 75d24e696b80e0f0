"""The names the data layer answers to: tasks, tree structures, the trees of
typed text and of scored splits, the neutral policies of the SST's binary task.

The option table (``npcomp/configuration/options.py``) offers these as its
choices; they are here, without NumPy, so that the data layer checks them
itself and the command line reads them before NumPy loads.
"""

TASKS = ("sst5", "sst2", "synthetic", "sick", "sick-entailment")
# a user's files (--train FILE in place of --task): labelled sentences or trees,
# scored sentence pairs or labelled ones, as the training file holds (own_data.py)
FILE_TASKS = ("files", "file-pairs", "file-pair-labels")
# the names of a built-in task's classes, by class number (Nayebi & Blundell
# Fig. 2's; the synthetic treebank's five are the SST's); a user's files name
# their own (own_data.py), and so do SICK's entailment judgments (sick.py)
TASK_CLASSES = {
    "sst5": ("very negative", "negative", "neutral", "positive", "very positive"),
    "synthetic": ("very negative", "negative", "neutral", "positive", "very positive"),
    "sst2": ("negative", "positive"),
}
# the tasks whose examples are sentence pairs: scored by the similarity head,
# or classified by the pair classifier (PAIR_CLASS_TASKS)
PAIR_TASKS = ("sick", "file-pairs", "sick-entailment", "file-pair-labels")
PAIR_CLASS_TASKS = ("sick-entailment", "file-pair-labels")
# the tasks whose examples carry class names of their own (a user's labels, SICK's)
NAMED_CLASS_TASKS = ("files", "file-pair-labels", "sick-entailment")
# the labelled nodes a run trains on (the option ``supervision``; forest.py)
SUPERVISION_MODES = ("all", "root", "root+leaves", "spans")
# the trees a task's sentences can be read as (the option ``structure``)
STRUCTURES = ("gold", "left", "right", "chain", "dependency", "parsed", "constituency")
# sst2: the neutral phrases of training sentences left unlabelled, or trained on
NEUTRAL_POLICIES = ("unlabelled", "train")

# the package's public names, each loaded from its module when first named
_HOMES = {
    "load_task": "tasks",
    "TaskData": "tasks",
    "SPLITS": "tasks",
    "default_data_dir": "tasks",
    "synthetic_splits": "synthetic",
    "generate_treebank": "synthetic",
    "load_files": "own_data",
    "read_files": "own_data",
    "split_files": "own_data",
    "class_names": "class_list",
    "load_sst_dependency": "sst_dependency",
    "dev_split": "data_splits",
    "fold_split": "data_splits",
}
__all__ = [
    "TASKS",
    "FILE_TASKS",
    "TASK_CLASSES",
    "PAIR_TASKS",
    "PAIR_CLASS_TASKS",
    "NAMED_CLASS_TASKS",
    "SUPERVISION_MODES",
    "STRUCTURES",
    "NEUTRAL_POLICIES",
    "load_task",
    "TaskData",
    "SPLITS",
    "default_data_dir",
    "synthetic_splits",
    "generate_treebank",
    "load_files",
    "read_files",
    "split_files",
    "class_names",
    "load_sst_dependency",
    "dev_split",
    "fold_split",
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
