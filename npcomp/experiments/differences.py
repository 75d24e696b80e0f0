"""Differences a report measures, each with Welch's 95% confidence interval
and two-sided p (scipy): between two settings of a table of no paper
(``Comparison``), between two rows of a paper's table where the paper claims
one better than the other (``Claim``), between a row's runs here and on
other data (``Variant``), and between a row's mean and the paper's where
the paper prints its standard deviation over a stated number of runs
(``Table.paper_runs``).

Each setting's seeds are taken as independent samples of its test figure;
for a loss (``LOWER_IS_BETTER``) a claim's difference is turned round, so
that a positive difference always means the first row better.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from .paper_rows import LOWER_IS_BETTER, MIN_SEEDS, Table

MEASURED, NOT_YET = "measured", "not yet measured"
# a claim's verdicts: the interval of (first - second) above 0, below it, or holding it
HOLDS, REVERSED, NO_DIFFERENCE = "holds", "reversed", "no difference detected"
# a variant's verdicts: the interval of (there - here) above 0, below it, or holding it
HIGHER, LOWER = "higher there", "lower there"


def welch(first: list, second: list) -> dict:
    """The difference of the means of two samples (first minus second),
    Welch's 95% confidence interval of it and its two-sided p."""
    from scipy import stats as scipy_stats

    test = scipy_stats.ttest_ind(first, second, equal_var=False)
    low, high = test.confidence_interval(0.95)
    difference = sum(first) / len(first) - sum(second) / len(second)
    return {"difference": difference, "ci95": [float(low), float(high)], "p": float(test.pvalue)}


def welch_from_stats(mean: float, std: float, n: int, other_mean: float, other_std: float, other_n: int) -> dict:
    """``welch`` of two samples known by their means, sample standard
    deviations and sizes (a paper's printed figures): the
    Welch-Satterthwaite degrees of freedom, Student's t."""
    from scipy import stats as scipy_stats

    variances = (std**2 / n, other_std**2 / other_n)
    error = math.sqrt(sum(variances))
    freedom = sum(variances) ** 2 / (variances[0] ** 2 / (n - 1) + variances[1] ** 2 / (other_n - 1))
    difference = mean - other_mean
    half = float(scipy_stats.t.ppf(0.975, freedom)) * error
    p = float(2 * scipy_stats.t.sf(abs(difference) / error, freedom))
    return {"difference": difference, "ci95": [difference - half, difference + half], "p": p}


def against_paper_runs(paper: float, paper_std: float, paper_runs: int, ours: dict, metric: str) -> dict:
    """Our mean against the paper's over its ``paper_runs`` runs (``ours``:
    summary.describe of the metric): the difference ours minus the paper's,
    turned round for a loss, with Welch's interval and p."""
    test = welch_from_stats(ours["mean"], ours["std"], ours["n"], paper, paper_std, paper_runs)
    if metric in LOWER_IS_BETTER:
        low, high = test["ci95"]
        test = dict(test, difference=-test["difference"], ci95=[-high, -low])
    return dict(test, std=paper_std, n=paper_runs)


def _run_metrics(sweep_dir: Path, relative: str) -> dict:
    return json.loads((sweep_dir / relative / "metrics.json").read_text(encoding="utf-8"))


def _test_values(sweep_dir: Path, record: dict, metric: str) -> list:
    """The test figures of a setting's finished runs, in the order of its seeds."""
    return [_run_metrics(sweep_dir, run)["test"][metric] for run in record.get("runs", [])]


def comparison_records(table: Table, results: dict | None, sweep_dir: Path) -> list:
    """Each of the table's comparisons (``Comparison``): the difference of
    the two settings' mean test figures, Welch's 95% confidence interval of
    it and its two-sided p, once both settings are measured; the verdict
    says whether the interval lies above 0, below it, or holds it."""
    by_setting = {record["setting"]: record for record in (results or {}).get("settings", [])}
    metric = next(row.metric for row in table.rows if row.trained)
    out = []
    for comparison in table.comparisons:
        record = {
            "comparison": comparison.name,
            "label": comparison.label,
            "first": comparison.first,
            "second": comparison.second,
            "metric": metric,
        }
        values = [
            _test_values(sweep_dir, by_setting.get(name, {}), metric) for name in (comparison.first, comparison.second)
        ]
        record["n"] = [len(one) for one in values]
        if min(record["n"]) < MIN_SEEDS:
            out.append(dict(record, status=NOT_YET))
            continue
        test = welch(*values)
        low, high = test["ci95"]
        verdict = "first above" if low > 0 else "first below" if high < 0 else "within noise"
        out.append(dict(record, status=MEASURED, **test, verdict=verdict))
    return out


def claim_records(table: Table, results: dict | None, out: Path, other_results=None) -> list:
    """Each of the paper's claims (``Claim``) tested on our runs: the
    difference of the two rows' mean test figures at their paper settings
    (first minus second; for a loss second minus first), Welch's interval
    and p, and whether the claim *holds* (the interval above 0), is
    *reversed* (below 0) or shows *no difference detected*; the paper's two
    figures beside.  ``other_results(table name)``: another report's
    results, for a row measured there."""
    rows = {row.name: row for row in table.rows}
    own = {record["setting"]: record for record in (results or {}).get("settings", [])}
    records = []
    for claim in table.claims:
        first, second = rows[claim.first], rows[claim.second]
        metric = first.metric
        record = {
            "claim": claim.name,
            "text": claim.claim,
            "source": claim.source,
            "first": claim.first,
            "second": claim.second,
            "metric": metric,
            "paper": [first.paper.get(metric), second.paper.get(metric)],
        }
        values = [_row_values(row, table, own, out, other_results) for row in (first, second)]
        record["n"] = [len(one) for one in values]
        if min(record["n"]) < MIN_SEEDS:
            records.append(dict(record, status=NOT_YET))
            continue
        test = welch(*(values if metric not in LOWER_IS_BETTER else values[::-1]))
        low, high = test["ci95"]
        verdict = HOLDS if low > 0 else REVERSED if high < 0 else NO_DIFFERENCE
        records.append(dict(record, status=MEASURED, **test, verdict=verdict))
    return records


def _row_values(row, table: Table, own: dict, out: Path, other_results) -> list:
    """The test figures of a row's paper setting: this table's runs, or for a
    row measured by another report (``same_as``), that report's."""
    if not row.same_as:
        return _test_values(Path(out) / table.name, own.get(row.name, {}), row.metric)
    other, setting = row.same_as.split("/")
    found = (other_results(other) if other_results else None) or {}
    record = {one["setting"]: one for one in found.get("settings", [])}.get(setting, {})
    return _test_values(Path(out) / other, record, row.metric)


def variant_records(table: Table, results: dict | None, out: Path, load_results) -> list:
    """Each of the table's variants (``Variant``) whose sweep is there
    (OUT/DIRECTORY/TABLE/ with a plan): per trained row, its paper setting's
    test figures there against here (the difference there minus here, so a
    positive one means a higher figure on the other data; for a loss the
    figures as they are, the verdict saying higher or lower), Welch's 95%
    interval and p, and each side's mean, std and n.  ``load_results(sweep
    directory)``: that sweep's results record (``report.committed_results``)."""
    here = {record["setting"]: record for record in (results or {}).get("settings", [])}
    out = Path(out)
    records = []
    for variant in table.variants:
        sweep = out / variant.directory / table.name
        found = load_results(sweep) if (sweep / "plan.json").is_file() else None
        if found is None:
            continue
        there = {record["setting"]: record for record in found.get("settings", [])}
        rows = []
        for row in table.rows:
            if not row.trained or row.same_as:
                continue
            values = [
                _test_values(sweep, there.get(row.name, {}), row.metric),
                _test_values(out / table.name, here.get(row.name, {}), row.metric),
            ]
            entry = {"row": row.name, "label": row.label, "metric": row.metric, "n": [len(one) for one in values]}
            if min(entry["n"]) < MIN_SEEDS:
                rows.append(dict(entry, status=NOT_YET))
                continue
            test = welch(*values)
            low, high = test["ci95"]
            means = [statistics.fmean(one) for one in values]
            stds = [statistics.stdev(one) for one in values]
            rows.append(
                dict(
                    entry,
                    status=MEASURED,
                    means=means,
                    stds=stds,
                    **test,
                    verdict=HIGHER if low > 0 else LOWER if high < 0 else NO_DIFFERENCE,
                )
            )
        records.append(
            {
                "variant": variant.name,
                "label": variant.label,
                "note": variant.note,
                "directory": variant.directory,
                "rows": rows,
            }
        )
    return records
