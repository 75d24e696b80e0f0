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
TASK_CLASSES = {"sst5": ("very negative", "negative", "neutral", "positive", "very positive"),
                "synthetic": ("very negative", "negative", "neutral", "positive",
                              "very positive"),
                "sst2": ("negative", "positive")}
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
