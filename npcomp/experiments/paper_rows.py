"""A row of a paper's table, as ``npcomp reproduce`` trains and reports it.

Every row of the papers' tables is declared (``paper_tables.py``), with a
status when it is not trained here:

* trained here (``status`` empty): a model on a task with the paper's
  setting (``printed``, on top of the model's defaults for the task,
  ``defaults.defaults_for``) and, where that falls far below the paper
  here, an alternative setting ``ROW-dev`` (``dev``); the report says, from
  the runs, whether dev chose it (``report.dev_choices``);
* measured by another report (``same_as``: ``TABLE/SETTING``, the same
  model, task and setting in that table);
* ``no data``: what it needs is not in the data (``reason``);
* ``not implemented``: another paper's model npcomp does not implement,
  or a setting of the paper it cannot express (``reason``).

A table on a corpus not shipped with the data here (``OwnData``: Irsoy &
Cardie's MPQA phrases) trains its rows on a user's copy in one of the
own-data formats (docs/DATA.md), in K-fold cross-validation
(``Table.folds``): its rows' task names the corpus (``mpqa``), and
``Table.run_options`` turns a setting into `npcomp train` options on the
file (``--train FILE --folds K``).  Without the file every such row is
reported ``no data`` (``report.report_record``).

``option_sources``: where the row's own options come from, option ->
(``paper``, section) or (``default``, why), for the report's list of every
option and its source (``option_sources.py``).  Nothing here imports NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from npcomp.cells import registry

NO_DATA, NOT_IMPLEMENTED = "no data", "not implemented"
PAPER, DEFAULT, DEV = "paper", "default", "dev"
# an option's source where the row runs something in place of what the paper used
SUBSTITUTE = "substitute"
# what a row's departure from the paper concerns (``Deviation``)
VECTORS, PARSES, PROTOCOL, PARAMETERS = "vectors", "parses", "protocol", "parameters"
# the metric a row on a task is judged on
# a row is measured once this many of its seeds have finished
MIN_SEEDS = 5
MAIN_METRIC = {"sick": "pearson", "mpqa": "ranking_loss", "sick-entailment": "accuracy"}
# the metrics where lower is better: a verdict and a choice on dev turn round
LOWER_IS_BETTER = ("ranking_loss", "mae", "mse")


@dataclass(frozen=True)
class Deviation:
    """A departure of a row from the paper: ``what`` it concerns (``VECTORS``
    and their dimension, ``PARSES``, ``PROTOCOL``: how the figure is made,
    ``PARAMETERS``), what the row runs (``ours``) and what the paper did."""

    what: str
    ours: str
    paper: str
    # for a table's ``paper_protocol``: the models of the paper's own runs it
    # concerns (the figures it quotes from other papers were made otherwise)
    models: tuple = ()

    def record(self) -> dict:
        """As the report's JSON carries it, with the text its table shows."""
        return {"what": self.what, "ours": self.ours, "paper": self.paper, "text": f"{self.ours}, not {self.paper}"}


@dataclass(frozen=True)
class Row:
    """One row of a paper's table.  ``name`` is unique in its table and
    names the row's run directories; ``paper``: metric -> the paper's figure
    (None where the paper prints none for this task)."""

    name: str
    label: str
    model: str
    task: str
    paper: dict
    printed: dict = field(default_factory=dict)
    dev: dict | None = None
    dev_source: str = ""
    vectors: str = "random vectors, as the paper"
    # trains on `npcomp parse`'s dependency parses of the SST, which reproduce
    # makes (in OUT/parses/sst) when they are missing
    parses: bool = False
    status: str = ""
    reason: str = ""
    # the paper's table the row is in ("Table 2")
    source: str = ""
    same_as: str = ""
    option_sources: dict = field(default_factory=dict)
    # the paper's figure is the test figure of the best of this many seeds on dev
    best_of: int = 0
    # metric -> the standard deviation the paper prints beside its figure (over
    # ``Table.paper_runs`` runs where the paper says how many)
    paper_std: dict = field(default_factory=dict)
    # its departures from the paper (``Deviation``) beyond the table's own
    deviations: tuple = ()

    def settings(self) -> dict:
        """Setting name -> the options of ``npcomp train`` (model, task and the
        row's options): the printed setting, and the dev one if any; none for
        a row not trained here.  The printed setting names ``--protocol
        paper`` for a model whose bare command may take a setting chosen on
        dev (registry ``tuned``)."""
        if self.status or self.same_as:
            return {}
        base = {"model": self.model, "task": self.task}
        printed = dict(self.printed)
        if registry.model(self.model).tuned and "protocol" not in printed:
            printed["protocol"] = "paper"
        out = {self.name: dict(base, **printed)}
        if self.dev is not None:
            out[f"{self.name}-dev"] = dict(base, **self.dev)
        return out

    @property
    def metric(self) -> str:
        """The metric the row is judged on."""
        return MAIN_METRIC.get(self.task, "root_acc")

    @property
    def trained(self) -> bool:
        """Whether this table's own runs measure the row."""
        return not (self.status or self.same_as)


@dataclass(frozen=True)
class PaperFigure:
    """A figure of the paper drawn from the report's runs: ``panels``, each
    (per-length figure, task, the settings drawn, the panel's title)."""

    name: str
    title: str
    panels: tuple


@dataclass(frozen=True)
class OwnData:
    """A corpus a table reads from a user's copy: ``task``, the name its rows
    give it; ``files``, the paths in the data directory looked for, in this
    order, each in one of the own-data formats (docs/DATA.md); ``what``:
    the data, in the plural ("the paper's phrases"), and ``holds``: what the
    file holds, for the reason a row without it gives; ``classes``: the
    class names in the order an ordinal head ranks them."""

    task: str
    files: tuple
    what: str
    holds: str
    classes: tuple

    def find(self, data_dir: str | Path) -> Path | None:
        """The first of ``files`` in ``data_dir``, as ``data_dir`` is given; None
        when there is none."""
        for name in self.files:
            if (Path(data_dir) / name).is_file():
                return Path(data_dir) / name
        return None

    def missing(self, data_dir: str, command: str) -> str:
        """Why the rows are not measured: the files looked for in ``data_dir``
        (as the report shows it) and ``command``, which runs the table on a copy."""
        looked = ", ".join(f"`{data_dir}/{name}`" for name in self.files)
        return (
            f"{self.what} are not in the data here: none of {looked} exists. They are "
            f"read from a user's copy, {self.holds} (docs/DATA.md, \"Reproduce a table on "
            f'your copy"); with one there, `{command}` runs the table'
        )


def config_task(task: str) -> str:
    """The `npcomp train` task of a row's task: ``files`` for a corpus read
    from a user's copy (``OwnData``), else the task itself."""
    return "files" if task in OWN_DATA_TASKS else task


# the tasks of corpora a table reads from a user's copy (paper_tables.py declares them)
OWN_DATA_TASKS = ("mpqa",)


@dataclass(frozen=True)
class Comparison:
    """Two settings of a table compared over their seeds: the difference of
    their mean test figures, ``first`` minus ``second``, on the table's
    metric; ``label`` says what the difference measures."""

    name: str
    label: str
    first: str
    second: str


@dataclass(frozen=True)
class Variant:
    """The same table's rows run again on other data (``directory``: the
    report directory of that sweep, relative to this report's, holding
    TABLE/ and its own TABLE.md): each row's mean test figure there against
    here, Welch's 95% interval and p (``differences.variant_records``).
    ``label`` names the other data, ``note`` says how it differs and how the
    sweep is rerun."""

    name: str
    directory: str
    label: str
    note: str


@dataclass(frozen=True)
class Claim:
    """A comparison the paper makes between two rows of its table: ``first``
    is better than ``second`` (higher; for a loss, lower) on the table's
    metric.  ``claim`` says it as the paper does, ``source`` where (its
    table or section).  The rows are this table's, each measured at its
    paper setting here or by another report (``Row.same_as``)."""

    name: str
    claim: str
    source: str
    first: str
    second: str


@dataclass(frozen=True)
class Table:
    """A paper's table: its rows, whether its report draws each setting's
    root confusion matrix over its seeds (the paper has one), the paper's
    figures it draws, a note on how the paper's figures were obtained, and
    the pairs of settings whose differences it measures (``Comparison``)."""

    name: str
    title: str
    rows: tuple
    confusions: bool = False
    figures: tuple = ()
    note: str = ""
    # K-fold cross-validation on a user's copy of a corpus (own_data), as the paper
    own_data: OwnData | None = None
    folds: int = 0
    # pairs of settings whose difference the report measures (a table of no paper)
    comparisons: tuple = ()
    # the paper's own comparisons between its rows (``Claim``), tested on ours
    claims: tuple = ()
    # how many runs the paper's means and standard deviations are over (0: not said)
    paper_runs: int = 0
    # how the paper made the figures of its own models (``Deviation.models``)
    # where that departs from a mean over our seeds (one run tuned on dev)
    paper_protocol: Deviation | None = None
    # model -> the parameter count the paper prints for it (Tai et al.'s Table 1)
    paper_parameters: dict = field(default_factory=dict)
    # metrics beside the main one whose paper figures the report tests too
    # (Zhu et al.'s PHRASES column: every phrase node's accuracy, ``all_acc``)
    also: tuple = ()
    # the rows run again on other data (``Variant``), compared row by row
    variants: tuple = ()

    def run_options(self, options: dict, train: str, folds: int | None = None) -> dict:
        """A setting's options (``Row.settings``) as `npcomp train` takes them:
        for a table on a user's copy, the row's task replaced by the file
        ``train`` in ``folds`` folds (default the table's); else unchanged."""
        if self.own_data is None:
            return options
        out = {key: value for key, value in options.items() if key != "task"}
        return dict(out, train=str(train), folds=folds or self.folds)

    def row(self, name: str) -> Row:
        for row in self.rows:
            if row.name == name:
                return row
        raise ValueError(f"{self.name} has no row {name!r}; its rows: {', '.join(row.name for row in self.rows)}")


# a not-implemented row's reason, for a model of another paper
OTHER_MODEL = "{model} ({paper}) is a model npcomp does not implement; the figure is that paper's"


def not_implemented(name: str, label: str, paper: dict, reason: str, source: str, task: str = "sst5") -> Row:
    """A row of another paper's model, which npcomp does not implement."""
    return Row(name, label, "", task, paper, status=NOT_IMPLEMENTED, reason=reason, source=source)


def no_data(name: str, label: str, model: str, task: str, paper: dict, reason: str, source: str) -> Row:
    """A row whose data (a corpus, a vector set) is not here."""
    return Row(name, label, model, task, paper, status=NO_DATA, reason=reason, source=source)


def measured_in(name: str, label: str, model: str, task: str, paper: dict, same_as: str, source: str) -> Row:
    """A row another report measures with the same model, task and setting."""
    return Row(name, label, model, task, paper, same_as=same_as, source=source)
