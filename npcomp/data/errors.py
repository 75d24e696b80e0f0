"""The two kinds of bad input, both usage errors (exit status 2): a data
file's content, named by file and line, and an option's value."""
from __future__ import annotations

from pathlib import Path


class DataError(ValueError):
    """Bad input data: the message names the file and line (1-based)."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = self.path + (f":{line}" if line is not None else "") + ": "
        super().__init__(where + message)


class ConfigError(ValueError):
    """A configuration value out of its range, or options that do not go
    together; ``option`` is the config key at fault."""

    def __init__(self, option: str, message: str):
        self.option = option
        self.reason = message
        super().__init__(f"{option}: {message}")
