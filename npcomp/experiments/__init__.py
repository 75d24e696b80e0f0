"""The experiments layer: many runs and what is made of them.

Sweeps on Dask (``sweep_spec.py``, ``sweep_plan.py``, ``sweep_cluster.py``,
``sweep_results.py``), the papers' tables and their reproduction
(``paper_tables.py``, ``report.py``), summaries over seeds, and the figures
``npcomp plot`` draws.  It calls the training layer and is called only by the
command line.
"""
