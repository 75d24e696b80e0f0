"""A training configuration: every option declared once (``options.py``),
each model's paper setting for each task (``defaults.py``), the
configuration built from them (``run_config.py``), its checks
(``checks.py``), and the model it describes (``model_building.py``)."""
