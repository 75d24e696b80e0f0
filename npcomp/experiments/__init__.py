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

# the package's public names, each loaded from its module when first named
_HOMES = {
    "summarise": "summary",
    "read_runs": "summary",
    "SweepSpec": "sweep_spec",
    "read_spec": "sweep_spec",
    "TABLES": "paper_tables",
    "table": "paper_tables",
    "run_figures": "figures",
    "write_figures": "plots",
    "estimate_seconds": "estimate",
    "train_baseline": "baseline",
}
__all__ = [
    "summarise",
    "read_runs",
    "SweepSpec",
    "read_spec",
    "TABLES",
    "table",
    "run_figures",
    "write_figures",
    "estimate_seconds",
    "train_baseline",
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
