"""The experiments layer: many runs and what is made of them.

Sweeps on Dask (``sweep_spec.py``, ``sweep_plan.py``, ``sweep_jobs.py``,
``sweep_task.py``, ``sweep_cluster.py``, ``sweep_results.py``), one run with
its baseline as `npcomp train` makes it (``trained_run.py``), the papers'
tables and their reproduction (``paper_tables.py``, ``table_sweep.py``,
``table_report.py``, ``report.py``, ``time_estimates.py``), summaries over
seeds, the figures ``npcomp plot`` draws, and a failure as `npcomp` reports
it (``failures.py``).  It calls the training layer and is called by the runs
layer (``npcomp.runs``) and the command line.
"""
