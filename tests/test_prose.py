"""Prose held to the reports: every figure README.md, docs/RESULTS.md and
docs/results/README.md quote from a report is written as a link to the
report whose title names the figure, and this test recomputes it from the
report's JSON; a figure of a report written without its reference fails too.

A reference: ``[47.93 ± 0.61](results/tai-sst.md "tai-sst constituency-pretrained-fine
root_acc")``.  The title is ``TABLE SETTING [dev] METRIC [STAT]``: the
setting's test figures (dev's with ``dev``), STAT one of mean, std, median,
min, max, n, ci_low, ci_high, paper (the paper's figure), best (the test
figure of the seed best on dev, a best-of-N row's protocol); without STAT the
text is ``mean ± std``.  Terms joined by `` - `` give a difference.  A
comparison of a report's ("Comparisons") is ``TABLE comparison NAME STAT``,
a test of a paper's claim ("The paper's claims") ``TABLE claim NAME
STAT``, and a row against its runs on other data (a report's variant, "On
..."), ``TABLE variant VARIANT/ROW STAT``, STAT one of difference, ci_low,
ci_high, p (and for a variant here and there, the two means).  The text
must be the value at the precision the text shows.

Sentences that compare or explain are held to the tests behind them
(``test_a_comparative_sentence_links_a_comparison_it_agrees_with``): a
sentence that ranks, reverses, holds, outperforms or gives a cause must
link a report's comparison or claim, and say what its verdict says; a cause
no experiment isolates is written as an open question.
"""

import json
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "docs" / "results"
DOCUMENTS = (
    "README.md",
    "docs/RESULTS.md",
    "docs/results/README.md",
    "docs/models.md",
    "docs/sick.md",
    "docs/reproducing.md",
    "docs/plain-sentences.md",
    "docs/DATA.md",
)
REFERENCE = re.compile(r"\[([^\[\]]+)\]\(([^)\s]+\.md)(?:#[^)\s]*)? \"([^\"]+)\"\)")
NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d{2,}(?![\w.])")
SUMMARY = re.compile(
    r"<!-- npcomp reproduce --summary -->.*?<!-- end of npcomp reproduce "
    r"--summary -->",
    re.S,
)
STATS = (
    "mean",
    "std",
    "median",
    "min",
    "max",
    "n",
    "ci_low",
    "ci_high",
    "paper",
    "best",
    "difference",
    "p",
    "here",
    "there",
)


def _report(table: str) -> dict:
    path = RESULTS / f"{table}.json"
    if not path.is_file():
        raise AssertionError(f"no report {path.name}")
    return json.loads(path.read_text())


def resolve(term: str) -> float:
    """The value a term names (module docstring)."""
    words = term.split()
    if words[1] in ("comparison", "claim", "variant"):
        return _comparison(*words)
    stat = words.pop() if words[-1] in STATS else None
    table, setting, *split, metric = words
    split = split[0] if split else "test"
    assert split in ("test", "dev"), term
    entries = [entry for entry in _report(table)["rows"] if entry["setting"] == setting]
    entries.sort(key=lambda entry: bool(entry.get("same_as")))
    assert entries, f"{term}: no setting {setting} in {table}.json"
    entry = entries[0]
    if stat == "paper":
        return entry["paper"][metric]
    if stat == "best":
        return entry["best_of"][split]
    stats = entry[split][metric]
    if stat in ("ci_low", "ci_high"):
        return stats["ci95"][0 if stat == "ci_low" else 1]
    return stats[stat or "mean"]


def _measured(table: str, kind: str, name: str) -> dict:
    """A report's comparison, claim test or variant row (``kind``), measured."""
    if kind == "variant":
        variant, row = name.split("/")
        found = [
            one
            for record in _report(table).get("variants", [])
            if record["variant"] == variant
            for one in record["rows"]
            if one["row"] == row
        ]
        assert found, f"no variant row {name} in {table}.json"
        assert found[0]["status"] == "measured", f"{table} variant {name}: not yet measured"
        return found[0]
    key = "comparisons" if kind == "comparison" else "claims"
    found = [one for one in _report(table).get(key, []) if one[kind] == name]
    assert found, f"no {kind} {name} in {table}.json"
    assert found[0]["status"] == "measured", f"{table} {kind} {name}: not yet measured"
    return found[0]


def _comparison(table: str, kind: str, name: str, stat: str) -> float:
    found = _measured(table, kind, name)
    if stat in ("here", "there"):  # a variant's two means: (there, here) as recorded
        return found["means"][0 if stat == "there" else 1]
    if stat in ("ci_low", "ci_high"):
        return found["ci95"][0 if stat == "ci_low" else 1]
    return found[stat]


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def check(text: str, title: str, target: str) -> None:
    """The reference's text equals the figures its title names."""
    tables = {term.split()[0] for term in title.split(" - ")}
    assert Path(target).stem in tables, f"{title}: linked to {target}"
    words = title.split()
    if words[-1] not in STATS and " - " not in title:  # mean ± std
        mean, std = (part.strip() for part in text.split("±"))
        assert mean == f"{resolve(title + ' mean'):.{_decimals(mean)}f}", (title, text)
        assert std == f"{resolve(title + ' std'):.{_decimals(std)}f}", (title, text)
        return
    value = 0.0
    for sign, term in zip([1] + [-1] * title.count(" - "), title.split(" - ")):
        value += sign * resolve(term)
    shown = text.replace("−", "-").lstrip("+")
    assert shown == f"{value:.{_decimals(shown)}f}", (title, text, value)


def _documents():
    for name in DOCUMENTS:
        yield pytest.param(REPO_ROOT / name, id=name)


@pytest.mark.parametrize("path", list(_documents()))
def test_every_referenced_figure_is_the_reports(path):
    text = path.read_text()
    found = REFERENCE.findall(text)
    for shown, target, title in found:
        check(shown, title, target)


def _report_figures() -> set:
    """The statistics of our runs in the reports as the prose would print
    them: percentages of 10 or more at 2 decimals, correlations and errors
    at 4 (small percentages, a std's, would meet learning rates and the
    like), less the papers' own figures."""
    figures, papers = set(), set()
    for path in RESULTS.glob("*.json"):
        record = json.loads(path.read_text())
        for entry in record.get("rows", []):
            papers.update(f"{value:.4f}" for value in entry["paper"].values() if value is not None)
            for split in ("test", "dev"):
                for metric, stats in (entry.get(split) or {}).items():
                    values = [stats[key] for key in ("mean", "std", "median", "min", "max")]
                    values += stats["ci95"] or []
                    if metric in ("pearson", "spearman", "mse"):
                        figures.update(f"{value:.4f}" for value in values)
                    else:
                        figures.update(f"{value:.2f}" for value in values if value >= 10)
    return figures - papers


@pytest.mark.parametrize("path", list(_documents()))
def test_no_figure_of_a_report_is_quoted_without_its_reference(path):
    """A number that is one of the reports' statistics must be a reference
    (the README's summary table is checked against the reports on its own)."""
    text = SUMMARY.sub("", path.read_text())
    text = REFERENCE.sub("", text)
    figures = _report_figures()
    unreferenced = sorted({number for number in NUMBER.findall(text) if number in figures})
    assert not unreferenced, f"{path.name}: {unreferenced}"


def test_the_checker_refuses_a_figure_that_drifted():
    entry = _report("rntn")["rows"][0]
    mean = entry["test"]["root_acc"]["mean"]
    check(f"{mean:.2f}", "rntn fine root_acc mean", "rntn.md")
    with pytest.raises(AssertionError):
        check(f"{mean + 0.01:.2f}", "rntn fine root_acc mean", "rntn.md")
    with pytest.raises(AssertionError):
        check(f"{mean:.2f}", "rntn fine root_acc mean", "tai-sst.md")


# what a comparative or causal sentence says, and the verdicts that say the same
SAYS = {
    "reversed": (re.compile(r"\breversed\b|\breverse of\b"), ("reversed", "first below")),
    "holds": (
        re.compile(
            r"\boutperforms?\b|\bbeats?\b|\b(?:claim|order|ranking|comparison)s?"
            r"\b[^.;:]{0,60}\bholds?\b"
        ),
        ("holds", "first above"),
    ),
    "no difference": (re.compile(r"\bno difference\b"), ("no difference detected", "within noise")),
    "higher": (re.compile(r"\bhigher (?:there|on npcomp's)\b"), ("higher there",)),
    "lower": (re.compile(r"\blower (?:there|on npcomp's)\b"), ("lower there",)),
}
RANKING = re.compile(
    r"\branking\b(?! loss)|\bthe (?:paper's )?order of the\b|"
    r"\bhas the high(?:er|est) mean\b"
)
CAUSE = re.compile(
    r"\bbecause\b|\bdue to\b|\battributable\b|\bthe gap is\b|"
    r"\bwhat differs between\b",
    re.I,
)
OPEN = re.compile(r"open question", re.I)
LINKED = re.compile(r"\"(\S+) (comparison|claim|variant) (\S+) [a-z_]+\"")


def sentences(text: str) -> list:
    """The prose sentences of a Markdown text: no code block, table line or
    heading; a sentence ends at '.', '!' or '?' before a capital, a link or
    emphasis."""
    prose, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith(("    ", "|", "#", "<!--")):
            prose.append("")
            continue
        if re.match(r"\s*(?:[-*]|\d+\.) ", line):  # a list item starts a paragraph of its own
            prose.append("")
        prose.append(line)
    paragraphs = "\n".join(prose).split("\n\n")
    out = []
    for paragraph in paragraphs:
        flat = " ".join(paragraph.split())
        out += [one for one in re.split(r"(?:(?<=[.!?])|(?<=[.!?]\*\*))\s+(?=[A-Z*\[(])", flat) if one]
    return out


def comparative_problems(sentence: str) -> list:
    """What is wrong with a sentence that compares or explains: no linked
    comparison or claim, or wording its verdicts do not bear out."""
    linked = [_measured(table, kind, name)["verdict"] for table, kind, name in LINKED.findall(sentence)]
    problems = []
    plain = LINKED.sub("", sentence)
    said = [what for what, (pattern, _) in SAYS.items() if pattern.search(plain)]
    if CAUSE.search(plain) and not OPEN.search(sentence) and not linked:
        problems.append("gives a cause with no experiment linked: write it as an open question")
    if (said or RANKING.search(plain)) and not linked and not OPEN.search(sentence):
        problems.append("compares with no comparison or claim linked")
    for what in said:
        if linked and not any(verdict in SAYS[what][1] for verdict in linked):
            problems.append(f"says {what!r} where the linked verdicts are {linked}")
    return problems


@pytest.mark.parametrize("path", list(_documents()))
def test_a_comparative_sentence_links_a_comparison_it_agrees_with(path):
    text = SUMMARY.sub("", path.read_text())
    found = [(sentence, problems) for sentence in sentences(text) if (problems := comparative_problems(sentence))]
    assert not found, "\n\n".join(f"{problems}: {sentence}" for sentence, problems in found)


def test_a_planted_reversal_over_no_difference_is_refused():
    """Tai's two Tree-LSTMs on SICK differ by +0.0010, p = 0.61: not a reversal."""
    claim = _measured("tai-sick", "claim", "dependency-above-constituency")
    assert claim["verdict"] == "no difference detected"
    planted = (
        "Tai's ranking of the Tree-LSTMs is reversed here ([−0.0010](results/tai-sick.md "
        '"tai-sick claim dependency-above-constituency difference")).'
    )
    assert any("says 'reversed'" in problem for problem in comparative_problems(planted))
    unlinked = "Tai's ranking of the Tree-LSTMs is reversed here."
    assert comparative_problems(unlinked) == ["compares with no comparison or claim linked"]
    honest = (
        "No difference is detected between Tai's two Tree-LSTMs here ([−0.0010]"
        '(results/tai-sick.md "tai-sick claim dependency-above-constituency '
        'difference")).'
    )
    assert comparative_problems(honest) == []
    cause = "The gap is because of the vectors."
    assert comparative_problems(cause)[0].startswith("gives a cause")
