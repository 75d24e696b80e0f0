"""The local checks told: the terminal's lines and the page's summary line,
read from explain's JSON document (its ``local_checks`` records,
``local_checks.local_record``), so the terminal, the page and gradcheck's
planted-bug runs say the same thing from the same data."""

from __future__ import annotations


def first_failing_record(document: dict) -> dict | None:
    """The document's first failing local check (parents first), or None."""
    tolerance = document["tolerance"]
    return next((check for check in document.get("local_checks", []) if not check["error"] <= tolerance), None)


def local_summary(document: dict) -> str:
    """The one line the terminal and the page open the local checks with."""
    checks = document.get("local_checks", [])
    tolerance = document["tolerance"]
    first = first_failing_record(document)
    if first is None:
        return (
            f"every node's local checks pass ({len(checks)} quantities, each within "
            f"{tolerance:g} of finite differences of its node's own equations)"
        )
    several = len(document["sentences"]) > 1
    span = document["sentences"][first["sentence"]]["nodes"][first["node"]]["span"]
    where = (f"sentence {first['sentence'] + 1} " if several else "") + f'node {first["node"]} "{span}"'
    count = sum(not check["error"] <= tolerance for check in checks)
    return (
        f"first failing local check: {where}, {first['quantity']} ({first['equation']}): "
        f"rel. error {first['error']:.2e}; {count} of {len(checks)} local checks fail"
    )


def local_lines(document: dict) -> list:
    """The terminal's lines for the local checks: per node, parents first,
    each quantity's relative error; then the first failure with its vectors."""
    tolerance = document["tolerance"]
    heading = (
        "local checks (each node's backward against finite differences of its own "
        "equations, the error from above held fixed; parents first):"
    )
    lines = ["", heading]
    rows: dict = {}
    for check in document["local_checks"]:
        rows.setdefault((check["sentence"], check["node"]), []).append(check)
    several = len(document["sentences"]) > 1
    for (sentence, node), found in rows.items():
        span = document["sentences"][sentence]["nodes"][node]["span"]
        where = (f"sentence {sentence + 1} " if several else "") + f'node {node} "{span}"'
        errors = "  ".join(
            (f"{check['term']}" if check["child"] is None else f"{check['term']}->{check['child']}")
            + f" {check['error']:.1e}"
            for check in found
        )
        flag = "  FAILS" if any(not check["error"] <= tolerance for check in found) else ""
        lines.append(f"  {where:<32}{errors}{flag}")
    lines.append(local_summary(document))
    first = first_failing_record(document)
    if first is not None:
        lines += [
            f"  {'the backward':<26}" + _numbers(first["analytic"]),
            f"  {'finite differences':<26}" + _numbers(first["numeric"]),
        ]
    return lines


def _numbers(values: list) -> str:
    return "[" + ", ".join(f"{value + 0.0:.4g}" for value in values) + "]"
