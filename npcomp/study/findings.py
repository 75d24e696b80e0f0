"""What ``npcomp explain`` concludes beyond each check's own rows: whether
each error term is the sum of its parts, and where a failing parameter
check puts the error when every node's error terms agree.

Parts that check their sum.  ``Cell.term_parts`` recomputes each
contribution to eps_h, eps_c (and their kin) from the parameters and the
quantities they reverse, apart from the backward's own accumulation; the
backward's term at a node must equal their sum up to rounding.  A node and
term where it does not is where the backward adds its parts up wrongly (a
contribution dropped, misrouted, or read with the wrong operand): it is
marked there, and fails the explanation.  The comparison is of two float64
computations of one quantity, so the tolerance is rounding's, far below
finite differences' (``SUM_TOLERANCE``).

After the states.  When every node's error terms agree with finite
differences (``--check-states``, or every local check passes) and a
parameter's check fails, the error is after the terms: in a weight's
gradient (summed over the nodes from the deltas) or in the word vectors'
(the embedding rows, named by their words).
"""

from __future__ import annotations

import numpy as np

# the largest relative difference between a term and the sum of its parts
# that rounding explains (float64 sums of a few products: ~1e-15 each)
SUM_TOLERANCE = 1e-9


def _array(values) -> np.ndarray:
    """A record's per-node value (lists with None for NaN) as float64."""
    return np.array(
        [np.nan if value is None else value for value in np.ravel(np.asarray(values, dtype=object))], dtype=np.float64
    )


def sum_errors(sentence: dict) -> None:
    """In place: each parts record of ``sentence`` gets ``sum_error``, per
    node the relative difference between the backward's term and the sum
    of its parts (None where the term is undefined)."""
    totals = {term["symbol"]: term for term in sentence["backward"]}
    for record in sentence.get("parts", []):
        errors = []
        for node, total in enumerate(totals[record["symbol"]]["values"]):
            if total is None:
                errors.append(None)
                continue
            term = _array(total)
            summed = sum(
                _array(part["values"][node]) if part["values"][node] is not None else np.zeros_like(term)
                for part in record["parts"]
            )
            defined = ~np.isnan(term)
            scale = max(
                float(np.abs(term[defined]).max(initial=0.0)), float(np.abs(summed[defined]).max(initial=0.0)), 1e-12
            )
            difference = np.abs(np.nan_to_num(summed[defined]) - term[defined])
            errors.append(float(difference.max(initial=0.0)) / scale)
        record["sum_error"] = errors


def sum_mismatches(document: dict) -> list:
    """[{"sentence", "node", "term", "parts", "error"}] where a term is not
    the sum of its parts, parents first (by depth, then left to right), in
    each sentence's order of terms."""
    found = []
    for index, sentence in enumerate(document["sentences"]):
        count = len(sentence["nodes"])
        for node in _parents_first(sentence["nodes"]):
            for record in sentence.get("parts", []):
                error = record.get("sum_error", [None] * count)[node]
                if error is not None and error > SUM_TOLERANCE:
                    found.append(
                        {
                            "sentence": index,
                            "node": node,
                            "term": record["symbol"],
                            "parts": len(record["parts"]),
                            "error": error,
                        }
                    )
    return found


def _parents_first(nodes: list) -> list:
    """The node ids of a sentence's records by depth from the root, then id."""
    depth = [0] * len(nodes)
    for record in reversed(nodes):  # parents after their children
        for child in record["children"]:
            depth[child] = depth[record["id"]] + 1
    return sorted(range(len(nodes)), key=lambda node: (depth[node], node))


def sum_lines(document: dict) -> list:
    """The verdict on the parts' sums: the first mismatch and how many, or
    nothing when every term is its parts' sum."""
    mismatches = document.get("parts_mismatches", [])
    if not mismatches:
        return []
    first = mismatches[0]
    span = document["sentences"][first["sentence"]]["nodes"][first["node"]]["span"]
    several = len(document["sentences"]) > 1
    where = (f"sentence {first['sentence'] + 1} " if several else "") + f'node {first["node"]} "{span}"'
    line = (
        f"parts: at {where} {first['term']} is not the sum of its {first['parts']} parts "
        f"(rel. difference {first['error']:.1e}): the backward adds them up wrongly there "
        f"({len(mismatches)} node term(s) in all; --parts shows them)"
    )
    return [line]


def after_states(document: dict) -> list:
    """Where a failing parameter check puts the error: after the states when
    every node's error terms agree (as ``python -m gradcheck`` says), with
    the word rows of the embedding gradient that disagree."""
    tolerance = document["tolerance"]
    failing = [check for check in document["parameters"] if not check["finite_difference_error"] <= tolerance]
    if not failing or document.get("floored"):
        return []
    lines = []
    checked = document.get("state_checks", []) + document.get("local_checks", [])
    if checked and all(check["error"] <= tolerance for check in checked):
        names = ", ".join(check["name"] for check in failing)
        lines.append(
            f"every node's error terms agree, yet {names} do not: the error is in "
            "the weight or word-vector gradients (after the states: a weight's "
            "gradient summed from the deltas, or the word vectors')"
        )
    elif not checked:
        lines.append(
            "--check-local (or --check-states) says whether the error is in the "
            "error terms or after them, in the weight or word-vector gradients"
        )
    words = document.get("vocabulary_rows", {})
    for check in failing:
        rows = [(row, error) for row, error in check.get("row_errors", []) if not error <= tolerance]
        if rows:
            named = ", ".join(f'"{words.get(str(row), row)}" (row {row}) {error:.1e}' for row, error in rows)
            lines.append(f"the embedding gradient disagrees at the word rows {named}")
    return lines


def verdict(document: dict) -> dict | None:
    """The one finding the page opens with and marks on its tree:
    {"line", "sentence", "node"} of the first failing local check, else the
    first node state that disagrees, else the first term not the sum of its
    parts; a failing parameter check alone gives its line (node None);
    None when everything passes."""
    from .local_check_text import first_failing_record, local_summary

    tolerance = document["tolerance"]
    first = first_failing_record(document)
    if first is not None:
        return {
            "line": local_summary(document),
            "sentence": first["sentence"],
            "node": first["node"],
            "child": first["child"],
            "kind": "local",
        }
    state = next((check for check in document.get("state_checks", []) if not check["error"] <= tolerance), None)
    if state is not None:
        span = document["sentences"][state["sentence"]]["nodes"][state["node"]]["span"]
        return {
            "line": f"first disagreement (parents first): node {state['node']} "
            f'"{span}", {state["term"]}: rel. error {state["error"]:.2e} '
            "(--check-local names the node whose backward makes it)",
            "sentence": state["sentence"],
            "node": state["node"],
            "child": None,
            "kind": "state",
        }
    mismatches = document.get("parts_mismatches", [])
    if mismatches:
        return {
            "line": sum_lines(document)[0],
            "sentence": mismatches[0]["sentence"],
            "node": mismatches[0]["node"],
            "child": None,
            "kind": "parts",
        }
    lines = after_states(document)
    if lines:
        return {"line": " ".join(lines), "sentence": None, "node": None, "child": None, "kind": "parameters"}
    return None
