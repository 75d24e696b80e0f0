"""The terminal's view of an explanation (``npcomp explain`` without
``--json`` or ``--html``): the document ``explain.explain`` builds, sentence
by sentence, the forward node by node, children first, then the backward,
parents first, each quantity's norm and leading values; the error terms as
sums of their parts; the parameters' check and the per-node checks.
"""

from __future__ import annotations

import numpy as np


def format_explanation(document: dict, node: int | None = None, values: int = 3, parts: bool = False) -> str:
    """The terminal's view: per sentence the forward node by node, children
    first, then the backward, parents first, each quantity's norm and its
    ``values`` leading values (every value for ``node``); with ``parts``,
    eps_h, eps_c (and their kin) at each node shown as the sum of their
    parts; then the parameters' check, the per-node state checks (when
    run), the warnings and the errata cited."""
    from .findings import after_states, sum_lines

    sizes = (
        f"d = {document['dim']}, word vectors {document['embedding_dim']}, "
        f"{document['head']} head over {len(document['classes'])} classes; float64, "
        f"dropout off; loss J = {document['loss']:.6g}"
    )
    lines = [f"{document['model']}: {document['paper']}", sizes]
    for number, sentence in enumerate(document["sentences"], start=1):
        nodes = sentence["nodes"]
        lines += ["", f"sentence {number}: {' '.join(sentence['tokens'])}"]
        shown = range(len(nodes)) if node is None else [_node_index(node, nodes)]
        every = None if node is not None else values
        lines += ["", "forward (children before parents)"]
        for index in shown:
            lines.append(_node_heading(nodes[index], document["classes"]))
            lines += _term_lines(sentence["forward"], index, every)
        lines += ["", "backward (parents first)"]
        for index in reversed(list(shown)):
            loss = nodes[index]["loss"]
            where = f'node {index} "{nodes[index]["span"]}"'
            lines.append(where + ("" if loss is None else f"  loss {loss:.6g}"))
            lines += _term_lines(sentence["backward"], index, every)
        if parts:
            lines += ["", "error terms as the sums of their parts (parents first)"]
            for index in reversed(list(shown)):
                lines.append(f'node {index} "{nodes[index]["span"]}"')
                lines += _parts_lines(sentence, index, every)
    lines += [
        "",
        f"parameters (finite differences on {_entries_text(document)}):",
        f"  {'name':<22}{'shape':<14}{'|gradient|':>12}{'rel. error':>12}{'entries':>9}",
    ]
    for check in document["parameters"]:
        shape = "x".join(str(size) for size in check["shape"])
        lines.append(
            f"  {check['name']:<22}{shape:<14}{check['gradient_norm']:>12.4g}"
            f"{check['finite_difference_error']:>12.2e}{check['entries_checked']:>9}"
        )
    worst = max(check["finite_difference_error"] for check in document["parameters"])
    verdict = "every parameter within" if worst <= document["tolerance"] else "ABOVE"
    lines.append(
        f"max relative error {worst:.2e}: {verdict} {document['tolerance']:g}"
        + (" (the loss at its floor: see below)" if "unchecked" in document and worst > document["tolerance"] else "")
    )
    if "local_checks" in document:
        from .local_check_text import local_lines

        lines += local_lines(document)
    if "state_checks" in document:
        lines += _state_lines(document)
    if "unchecked" in document:
        lines.append(document["unchecked"])
    lines += sum_lines(document) + after_states(document)
    lines += [f"warning: {warning}" for warning in document.get("warnings", [])]
    cited = document.get("errata", {})
    if cited:
        lines.append("errata in brackets:")
        lines += [f"  [{erratum}] {entry['text']} ({entry['where']})" for erratum, entry in cited.items()]
    return "\n".join(lines)


def _parts_lines(sentence: dict, index: int, values: int | None) -> list:
    """Each error term with parts at node ``index``: its value (marked where
    it is not their sum), then each part with the equation it reverses, its
    value or why it is 0."""
    from .findings import SUM_TOLERANCE

    lines = []
    totals = {term["symbol"]: term for term in sentence["backward"]}
    for term in sentence.get("parts", []):
        total = totals[term["symbol"]]["values"][index]
        if total is None:
            continue
        count = len(term["parts"])
        error = term.get("sum_error", [None] * (index + 1))[index]
        summed = (
            f"= the sum of {count} parts" if error is None or error <= SUM_TOLERANCE else f"!= its {count} parts' sum"
        )
        lines.append(_value_line(f"  {term['symbol']:<10}", summed, total, values, 34))
        if summed.startswith("!="):
            lines.append(
                f"      (NOT the sum of its parts: rel. difference {error:.1e}; the "
                "backward adds them up wrongly at this node)"
            )
        unread = term["unread"][index]
        if unread:
            lines.append(f"      (nothing reads {term['symbol']} here: {unread})")
        for part in term["parts"]:
            label = f"    {part['label']:<30}"
            why = part["zero"][index]
            if why:
                lines.append(f"{label}({part['equation']})  0: {why}")
            else:
                lines.append(_value_line(label, f"({part['equation']})", part["values"][index], values, 38))
    return lines


def _value_line(head: str, equation: str, value, values: int | None, width: int) -> str:
    """``head``, ``equation``, the norm and the leading ``values`` (all: None)."""
    flat = np.asarray(value, dtype=np.float64).ravel()
    defined = flat[~np.isnan(flat)]
    shown = defined if values is None else defined[:values]
    numbers = ", ".join(f"{number + 0.0:.4g}" for number in shown)  # no "-0"
    more = ", ..." if shown.size < defined.size else ""
    return f"{head}{equation:<{width}} norm {np.linalg.norm(defined):<10.4g}[{numbers}{more}]"


def _state_lines(document: dict) -> list:
    """The per-node state checks, parents first: each node's terms and their
    relative errors, then the first node and term that disagree."""
    tolerance = document["tolerance"]
    checks = document["state_checks"]
    lines = [
        "",
        "error terms against finite differences of J in each node's states "
        "(through the cell's own forward, parents first):",
    ]
    rows: dict = {}
    for check in checks:
        rows.setdefault((check["sentence"], check["node"]), []).append(check)
    several = len(document["sentences"]) > 1
    for (sentence, node), found in rows.items():
        span = document["sentences"][sentence]["nodes"][node]["span"]
        where = (f"sentence {sentence + 1} " if several else "") + f'node {node} "{span}"'
        errors = "  ".join(f"{check['term']} {check['error']:.1e}" for check in found)
        flag = "  DISAGREES" if any(check["error"] > tolerance for check in found) else ""
        lines.append(f"  {where:<32}{errors}{flag}")
    first = next((check for check in checks if check["error"] > tolerance), None)
    if first is None:
        lines.append(f"every node's error terms within {tolerance:g} of finite differences")
        return lines
    span = document["sentences"][first["sentence"]]["nodes"][first["node"]]["span"]
    count = sum(check["error"] > tolerance for check in checks)
    nodes = document["sentences"][first["sentence"]]["nodes"]
    parent = next((record["id"] for record in nodes if first["node"] in record["children"]), None)
    maker = (
        ""
        if parent is None
        else f"; made by node {parent}'s backward, which routes it (--check-local checks node {parent} on its own)"
    )
    lines += [
        f'first disagreement (parents first): node {first["node"]} "{span}", '
        f"{first['term']}: rel. error {first['error']:.2e} ({count} of {len(checks)} "
        f"node states disagree){maker}",
        f"  {first['term'] + ' (the backward)':<28}" + _numbers(first["analytic"]),
        f"  {'dJ/d' + first['state'] + ' (differences)':<28}" + _numbers(first["numeric"]),
    ]
    return lines


def _numbers(values: list) -> str:
    return "[" + ", ".join(f"{value + 0.0:.4g}" for value in values) + "]"


def _node_index(node: int, nodes: list) -> int:
    if not 0 <= node < len(nodes):
        raise ValueError(f"--node {node}: the tree has nodes 0..{len(nodes) - 1}")
    return node


def _node_heading(record: dict, classes: list) -> str:
    kind = "leaf" if not record["children"] else "children " + ",".join(str(kid) for kid in record["children"])
    gold = "" if record["label"] is None else f"  gold {record['label']}"
    chance = "" if record["probability"] is None else f" (p {record['probability']:.3f})"
    return (
        f'node {record["id"]} "{record["span"]}"  {kind}{gold}  predicted '
        f"{record['predicted']} {classes[record['predicted']]}{chance}"
    )


def _term_lines(terms: list, index: int, values: int | None) -> list:
    """One line per term defined at node ``index``: symbol, equation, norm,
    the leading ``values`` (all when None)."""
    lines = []
    for term in terms:
        value = term["values"][index]
        if value is None:
            continue
        erratum = term["node_errata"][index] if "node_errata" in term else term["erratum"]
        where = f"({term['equation']})" + (f" [{erratum}]" if erratum else "")
        lines.append(_value_line(f"    {term['symbol']:<12}", where, value, values, 24))
    return lines


def _entries_text(document: dict) -> str:
    entries = document.get("entries", "all")
    return "every entry" if entries == "all" else f"at most {entries} entries a parameter"
