"""The two kinds of bad input, both usage errors (exit status 2): a data
file's content, named by file and line, and an option's value.

A message that tells the caller which option to give names it as the caller
gives it: ``option("score_range", "LO,HI", "(lo, hi)")`` in a message is
``score_range=(lo, hi)`` where the message reaches Python (``str(error)``),
and ``--score-range LO,HI`` where the command line prints it
(``error.message(flag)``, ``npcomp.cli.failure``).
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["ConfigError", "DataError"]

# an option named inside a message: {option KEY|COMMAND-LINE VALUE|PYTHON VALUE}
_OPTION = re.compile(r"\{option (\w+)\|([^{}|]*)\|([^{}|]*)\}")


def option(key: str, command_line: str = "", python: str = "") -> str:
    """An option named inside a message, with the value to give it as the
    command line writes it (``LO,HI``) and as Python does (``(lo, hi)``)."""
    return f"{{option {key}|{command_line}|{python}}}"


def for_python(text: str) -> str:
    """``text`` with its options named as keyword arguments, ``score_range=(lo, hi)``."""
    return _OPTION.sub(lambda found: f"{found[1]}={found[3]}", text)


def for_command_line(text: str, flag) -> str:
    """``text`` with its options named as flags (``flag(key)``), ``--score-range LO,HI``."""
    return _OPTION.sub(lambda found: f"{flag(found[1])} {found[2]}".rstrip(), text)


class DataError(ValueError):
    """Bad input data: the message names the file and line (1-based)."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        super().__init__(self.where + for_python(message))

    @property
    def where(self) -> str:
        """ "path:line: ", "path: " or ""."""
        if self.path is None:
            return ""
        return self.path + (f":{self.line}" if self.line is not None else "") + ": "

    def message(self, flag) -> str:
        """The message as the command line prints it (options as ``flag(key)``)."""
        return self.where + for_command_line(self.reason, flag)


class ConfigError(ValueError):
    """A configuration value out of its range, or options that do not go
    together; ``option`` is the config key at fault."""

    def __init__(self, option: str, message: str):
        self.option = option
        self.reason = message
        super().__init__(f"{option}: {for_python(message)}")
