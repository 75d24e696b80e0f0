"""``npcomp download``: each data set's official source (``catalogue.py``),
one file over HTTP, and word vectors kept to the data sets' vocabulary."""

# the package's public names, each loaded from its module when first named
_HOMES = {
    "fetch": "download",
    "fetch_all": "download",
    "installed": "download",
    "DownloadError": "download",
    "DATASETS": "catalogue",
    "dataset": "catalogue",
}
__all__ = ["fetch", "fetch_all", "installed", "DownloadError", "DATASETS", "dataset"]


def __getattr__(name: str):
    if name in _HOMES:
        from importlib import import_module

        home = _HOMES[name]
        module = import_module(f"{__name__}.{home or name}")
        return module if home is None else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__})
