"""The training layer: options, configurations, the loop and its files.

The option table (``options.py``) and the configuration built from it
(``run_config.py``), optimisers, the training loop (``trainer.py``) and its
parts: encoded splits (``encoding.py``), a minibatch in shards on the run's
threads (``shards.py``), metrics (``evaluation.py``), models
built (``model_building.py``) and saved (``model_files.py``), checkpoints
(``checkpoints.py``), the time estimate (``estimate.py``); run directories
and predictions.  It sits on the models (``npcomp.model``) and the data
layer, and below experiments, study and the command line.
"""
