"""The experiments layer: many runs and what is made of them.

Sweeps on Dask (``sweep_spec.py``, ``sweep_plan.py``, ``sweep_cluster.py``,
``sweep_results.py``), the papers' tables and their reproduction
(``paper_tables.py``, ``report.py``), summaries over seeds, and the figures
``npcomp plot`` draws.  It calls the training layer and is called only by the
command line.
"""

# the package's public names, each loaded from its module when first named
_HOMES = {"summarise": "summary", "read_runs": "summary", "SweepSpec": "sweep_spec",
          "read_spec": "sweep_spec", "TABLES": "paper_tables",
          "table": "paper_tables", "run_figures": "figures", "write_figures": "plots",
          "estimate_seconds": "estimate", "train_baseline": "baseline"}
__all__ = ["summarise", "read_runs", "SweepSpec", "read_spec", "TABLES", "table", "run_figures",
           "write_figures", "estimate_seconds", "train_baseline"]


def __getattr__(name: str):
    if name in _HOMES:
        from importlib import import_module
        home = _HOMES[name]
        module = import_module(f"{__name__}.{home or name}")
        return module if home is None else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__})
