"""A run's files on disk: the run directory and the rules that keep it safe
(``rundir.py``), its recorded paths, checkpoint, best model, figure counts,
the machine it ran on, and the same interface kept in memory."""

# the package's public names, each loaded from its module when first named
_HOMES = {
    "RunDirectory": "rundir",
    "RunDirectoryError": "rundir",
    "RunInMemory": "run_in_memory",
    "load_model": "model_files",
    "save_model": "model_files",
    "read_checkpoint": "checkpoints",
    "machine_description": "machine",
}
__all__ = [
    "RunDirectory",
    "RunDirectoryError",
    "RunInMemory",
    "load_model",
    "save_model",
    "read_checkpoint",
    "machine_description",
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
