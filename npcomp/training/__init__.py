"""The training layer: options, configurations, the loop and its files.

The option table (``options.py``) and the configuration built from it
(``run_config.py``), optimisers, the training loop (``trainer.py``), run
directories, checkpoints and predictions.  It sits on the models
(``npcomp.model``) and the data layer, and below experiments, study and the
command line.
"""
