"""A training configuration: every option declared once (``options.py``),
each model's paper setting for each task (``defaults.py``), the
configuration built from them (``run_config.py``), its checks
(``checks.py``), and the model it describes (``model_building.py``)."""

# the package's public names, each loaded from its module when first named
_HOMES = {
    "OPTIONS": "options",
    "Option": "options",
    "RESUMABLE": "options",
    "PAPER_SETTING": "options",
    "command_line": "options",
    "defaults_for": "defaults",
    "build_config": "run_config",
    "keyword_config": "run_config",
    "check": "checks",
    "build_model": "model_building",
    "initial_parameters": "model_building",
}
__all__ = [
    "OPTIONS",
    "Option",
    "RESUMABLE",
    "PAPER_SETTING",
    "command_line",
    "defaults_for",
    "build_config",
    "keyword_config",
    "check",
    "build_model",
    "initial_parameters",
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
