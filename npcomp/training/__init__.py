"""The training loop: a run's named steps (``trainer.py``), from its data
(``run_data.py``) encoded for its model (``encoding.py``) to one step of a
minibatch in shards on threads or helper processes (``step.py``,
``shards.py``, ``shard_processes.py``), its optimiser (``optimizers.py``),
metrics (``evaluation.py``) and predictions (``predictions.py``).

Its configuration is ``npcomp.configuration``'s and its files on disk are
``npcomp.runfiles``'; it sits on the models (``npcomp.models``) and the
data layer, and below experiments, study, estimators and the command line.
"""
