"""A sweep's specification: what it trains, read from a SPEC file (TOML)
and the command line's options into a ``SweepSpec``.

A sweep is a base training configuration (any ``npcomp train`` option), the
seeds, and what varies: a grid (every combination of the values given for
some options) and/or named settings (each a set of options).  With both,
every named setting is combined with every grid point (``sweep_plan.py``
makes the runs).  Anything malformed raises ``SpecError``, naming the file
and line (or the command-line option) at fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

# sections of a SPEC file
_SECTIONS = ("seeds", "base", "grid", "settings")


class SpecError(Exception):
    """A sweep specification that cannot be used; the message names the file
    and line (or the command-line option) at fault."""


@dataclass
class SweepSpec:
    """What a sweep trains.  Options are train config keys (``lr``,
    ``data_dir``: a flag's name with underscores) mapped to values: TOML
    scalars from a file, the parsed values of the command line's options.

    ``base``: the options every run takes; ``grid``: option -> its values;
    ``settings``: name -> options; ``seeds``: ints; ``source``: the SPEC
    file or None; ``lines``: (section, option) -> the line it is on in the
    file (section ``settings.NAME`` for a named setting); ``command_line``:
    the (section, option) pairs given on the command line instead."""

    base: dict = field(default_factory=dict)
    seeds: list = field(default_factory=lambda: [1])
    grid: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    source: str | None = None
    lines: dict = field(default_factory=dict)
    command_line: set = field(default_factory=set)

    def where(self, section: str, option: str | None = None) -> str:
        """``FILE:LINE`` of an option (or a section header, or the top-level
        key ``section``'s line) in the SPEC file, or ``the command line`` for
        what was given there."""
        if self.source is None or (section, option) in self.command_line:
            return "the command line"
        line = (
            (self.lines.get((section, option)) if option is not None else None)
            or self.lines.get((section, None))
            or self.lines.get(("", section))
        )
        return f"{self.source}:{line}" if line else str(self.source)


def option_key(name: str) -> str:
    """``data-dir`` or ``data_dir`` -> ``data_dir``."""
    return name.strip().replace("-", "_")


def parse_seeds(text) -> list:
    """``1-5``, ``1,3,7``, ``1-3,10`` (or a list of ints from TOML) -> [ints],
    in order, without repeats; ValueError on anything else."""
    if isinstance(text, list):
        items = text
    else:
        items = []
        for part in str(text).split(","):
            match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
            if not match:
                raise ValueError(f"seeds are whole numbers >= 0 and ranges like 1-5, separated by commas, not {text!r}")
            first, last = int(match[1]), int(match[2] or match[1])
            if last < first:
                raise ValueError(f"the seed range {part.strip()} runs backwards")
            items.extend(range(first, last + 1))
    seeds = []
    for seed in items:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seeds are whole numbers >= 0, not {seed!r}")
        if seed not in seeds:
            seeds.append(seed)
    if not seeds:
        raise ValueError("no seeds given")
    return seeds


def read_spec(path: str | Path) -> SweepSpec:
    """A SPEC file::

        seeds = "1-5"              # or [1, 2, 3]
        [base]                     # any npcomp train option, by its flag's name
        model = "treelstm-nary"
        task = "sst5"
        epochs = 10
        [grid]                     # every combination of these values
        lr = [0.05, 0.1]
        [settings.glove]           # named settings, each combined with the grid
        vectors = "glove.6B.50d.sst-sick.txt"
        [settings.random]
        vectors = "random"

    SpecError names the file and line of anything malformed."""
    path = Path(path)
    text, document = _toml_document(path)
    spec = SweepSpec(source=str(path), lines=_key_lines(text))
    for key in document:
        if key not in _SECTIONS:
            raise SpecError(
                f"{spec.where(key)}: unknown entry {key!r}; a sweep specification "
                f"has {', '.join(_SECTIONS)} (training options go in [base])"
            )
    if "seeds" in document:
        try:
            spec.seeds = parse_seeds(document["seeds"])
        except ValueError as error:
            raise SpecError(f"{spec.where('seeds')}: {error}") from None
    spec.base = _options(document.get("base", {}), "base", spec)
    grid = document.get("grid", {})
    if not isinstance(grid, dict):
        raise SpecError(f"{spec.where('grid')}: grid is a table of options and their values")
    for option, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SpecError(
                f"{spec.where('grid', option)}: a grid option takes a non-empty list "
                f"of values ({option} = [0.05, 0.1]), not {values!r}"
            )
        for value in values:
            _check_scalar(value, "grid", option, spec)
        spec.grid[option_key(option)] = values
        spec.lines[("grid", option_key(option))] = spec.lines.get(("grid", option))
    settings = document.get("settings", {})
    if not isinstance(settings, dict):
        raise SpecError(f"{spec.where('settings')}: settings are tables, [settings.NAME]")
    for name, options in settings.items():
        section = f"settings.{name}"
        if not isinstance(options, dict):
            raise SpecError(
                f"{spec.where('settings', name)}: a named setting is a table of "
                f"options ([settings.{name}]), not {options!r}"
            )
        if not re.fullmatch(r"[A-Za-z0-9_.+=-]+", name):
            raise SpecError(
                f"{spec.where(section)}: a setting's name becomes a directory "
                f"name: letters, digits and . _ + = - only, not {name!r}"
            )
        spec.settings[name] = _options(options, section, spec)
    return spec


def _toml_document(path: Path) -> tuple:
    """(text, document) of the SPEC file ``path``: its text and what the TOML
    in it says; SpecError naming the file and line when either cannot be read."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise SpecError(f"{path}: no such sweep specification") from None
    except IsADirectoryError:
        raise SpecError(f"{path} is a directory, not a sweep specification (a TOML file)") from None
    except UnicodeDecodeError as error:
        line = text_line(error.object, error.start)
        raise SpecError(f"{path}:{line}: not UTF-8 text (byte {error.start})") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        # the message ends "(at line L, column C)": name the place as FILE:LINE
        message = str(error)
        found = re.search(r"\(at line (\d+), column (\d+)\)", message)
        at_end = re.search(r"\(at end of document\)", message)
        if found:
            message = f"{path}:{found[1]}: {message[: found.start()].strip()} (column {found[2]})"
        elif at_end:  # something left open: name the last line written
            last = max((number for number, line in enumerate(text.splitlines(), start=1) if line.strip()), default=1)
            message = f"{path}:{last}: {message[: at_end.start()].strip()} at the end of the file"
        else:
            message = f"{path}: {message}"
        raise SpecError(f"{message}: not valid TOML") from None
    return text, document


def _options(table, section: str, spec: SweepSpec) -> dict:
    if not isinstance(table, dict):
        raise SpecError(f"{spec.where(section)}: {section} is a table of options")
    options = {}
    for option, value in table.items():
        _check_scalar(value, section, option, spec)
        options[option_key(option)] = value
        spec.lines[(section, option_key(option))] = spec.lines.get((section, option))
    return options


def _check_scalar(value, section: str, option: str, spec: SweepSpec) -> None:
    if isinstance(value, (dict, list)) or not isinstance(value, (str, int, float, bool)):
        raise SpecError(
            f"{spec.where(section, option)}: {option} takes one value (a string, number or true/false), not {value!r}"
        )


def _key_lines(text: str) -> dict:
    """(section, key) -> line number of each ``key = value`` and ``[section]``
    header in a TOML text (section "" before the first header; a header is
    (section, None)), so errors found after parsing can name their line."""
    lines, section = {}, ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$", line)
        if header:
            section = ".".join(part.strip().strip("\"'") for part in header[1].split("."))
            lines.setdefault((section, None), number)
            if "." in section:  # [settings.glove] also names the key glove of [settings]
                parent, _, name = section.rpartition(".")
                lines.setdefault((parent, name), number)
            continue
        key = re.match(r"\s*([\"']?)([A-Za-z0-9_.+=-]+)\1\s*=", line)
        if key:
            lines.setdefault((section, key[2]), number)
    return lines


def text_line(data: bytes, offset: int) -> int:
    """The 1-based line of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


def grid_from_arguments(items) -> dict:
    """``["lr=0.05,0.1", "dropout=0.3,0.5"]`` -> {"lr": [0.05, 0.1], ...}:
    values read as a SPEC file's would be (numbers, true/false, else text),
    so the same sweep plans alike from either."""
    grid = {}
    for item in items or ():
        option, equals, values = item.partition("=")
        values = [_scalar(value.strip()) for value in values.split(",") if value.strip()]
        if not equals or not option.strip() or not values:
            raise SpecError(f"--grid {item}: give OPTION=VALUE,VALUE,... (--grid lr=0.05,0.1)")
        grid[option_key(option)] = values
    return grid


def _scalar(text: str):
    """``3`` -> 3, ``0.05`` -> 0.05, ``true`` -> True, anything else the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)
