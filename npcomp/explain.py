"""What ``npcomp explain`` and ``npcomp predict --html`` show of a tree:
its nodes with their predictions, and for explain every forward quantity
and backward error term of the cell, with the finite-difference check of
each named parameter's gradient.

The document these build is plain JSON-ready data (``--json`` prints it;
``explain_page.render_page`` draws it):

    {"model", "paper", "task", "classes": [class names],
     "sentences": [{"tokens", "nodes": [node record per tree node, children
                    before parents, root last], "forward": [term record],
                    "backward": [term record]}],
     "loss", "parameters": [parameter record], "tolerance"}

A node record: ``id`` (its index in the tree), ``children`` (ids),
``word`` (the token it reads or None), ``position`` (that token's index
in ``tokens``, None where it reads none), ``span`` (the words below it,
itself included), ``label`` (gold or None), ``predicted``,
``probabilities`` (the head's outputs: class probabilities, or the ordinal
head's P(label > k)), ``probability`` (the predicted class's, None for the
ordinal head) and, from explain, ``loss`` (its term of the objective, None
where unlabelled).
"""
from __future__ import annotations

import re
from importlib import resources

import numpy as np

from .formats import Tree


def _spans(tree: Tree) -> list:
    """Per node, the token positions below it (its own word included), in order."""
    below = [[] for _ in range(tree.n_nodes)]
    for node in range(tree.n_nodes):         # children before parents
        if tree.token_index[node] >= 0:
            below[node].append(int(tree.token_index[node]))
        parent = tree.parent[node]
        if parent >= 0:
            below[parent].extend(below[node])
    return [sorted(positions) for positions in below]


def node_records(tree: Tree, outputs: np.ndarray, predicted: np.ndarray,
                 softmax: bool = True) -> list:
    """One record per node of ``tree`` (module docstring) from the head's
    ``outputs`` (n, width) and ``predicted`` classes (n,), in tree order."""
    children = tree.children()
    records = []
    for node, positions in enumerate(_spans(tree)):
        token = int(tree.token_index[node])
        label = int(tree.label[node])
        choice = int(predicted[node])
        records.append({
            "id": node,
            "children": [int(kid) for kid in children[node]],
            "word": tree.tokens[token] if token >= 0 else None,
            "position": token if token >= 0 else None,
            "span": " ".join(tree.tokens[position] for position in positions),
            "label": label if label >= 0 else None,
            "predicted": choice,
            "probabilities": [round(float(p), 6) for p in outputs[node]],
            "probability": round(float(outputs[node, choice]), 6) if softmax else None,
        })
    return records


def explain(model, params, trees: list, vocab, entries: int | None = None,
            rng: np.random.Generator | None = None, supervision: str = "all") -> dict:
    """One forward and backward pass of ``model`` (a TreeModel) over
    ``trees`` in float64 with dropout off, and the finite-difference check
    of every named parameter.  Returns the document's ``sentences``,
    ``loss``, ``parameters`` and ``supervision`` (module docstring).

    A tree's labels are its own, kept where ``supervision`` supervises (only
    the root for a cell that classifies whole sequences); a tree with none
    there is labelled at its root with the model's own prediction, so the
    backward shows what would reinforce it.  ``entries``: at most this many
    entries of each parameter are checked, drawn by ``rng`` (None: all)."""
    from .finite_differences import parameter_checks
    from .forest import build_forest, node_words, supervised_labels
    params = params.astype(np.float64)
    if model.cell.labels_at_roots_only:
        supervision = "root"
    words = [node_words(tree, vocab.encode(tree.tokens)) for tree in trees]
    unlabelled = build_forest(trees, words)
    predicted = model.head.decode(model.outputs(params, unlabelled))
    labels = []
    for index, tree in enumerate(trees):
        kept = supervised_labels(tree, supervision).copy()
        if (kept < 0).all():
            root_row = np.flatnonzero((unlabelled.tree == index)
                                      & (unlabelled.origin == tree.root))[0]
            kept[tree.root] = predicted[root_row]
        labels.append(kept)
    forest = build_forest(trees, words, labels)
    trace: dict = {}
    loss, _ = model.loss_and_gradient(params, forest, params.zeros_like(), trace=trace)
    cache = trace["cell_cache"]
    forward = model.cell.forward_terms(forest, cache)
    backward = model.cell.backward_terms(forest, cache)
    outputs = model.outputs(params, forest)
    decoded = model.head.decode(outputs)
    softmax = model.head_name == "softmax"
    sentences = []
    for index, (tree, kept) in enumerate(zip(trees, labels)):
        rows = _tree_rows(forest, index)
        nodes = node_records(tree.with_labels(kept), outputs[rows], decoded[rows], softmax)
        for node, row in zip(nodes, rows):
            node["loss"] = _number(trace["node_loss"][row])
        sentences.append({"tokens": list(tree.tokens), "nodes": nodes,
                          "forward": [_term_record(term, rows) for term in forward],
                          "backward": [_term_record(term, rows) for term in backward]})
    checks = parameter_checks(model, params, forest, entries=entries, rng=rng)
    for check in checks:
        del check["unread_rows_error"]
    return {"sentences": sentences, "loss": float(loss), "parameters": checks,
            "supervision": supervision}


def _tree_rows(forest, index: int) -> np.ndarray:
    """The forest rows of tree ``index``, in the tree's own node order."""
    nodes = np.flatnonzero(forest.tree == index)
    rows = np.empty_like(nodes)
    rows[forest.origin[nodes]] = nodes
    return rows


def _number(value: float):
    """A float for JSON, None for NaN."""
    return None if np.isnan(value) else float(value)


def _term_record(term, rows: np.ndarray) -> dict:
    """A Term's values at ``rows`` as JSON-ready lists, None where undefined."""
    values = []
    for row in rows:
        value = np.asarray(term.values[row], dtype=np.float64)
        values.append(None if np.isnan(value).all() else
                      np.where(np.isnan(value), None, value).tolist())
    return {"symbol": term.symbol, "equation": term.equation, "erratum": term.erratum,
            "values": values}


def describe(config: dict, model) -> dict:
    """The document's head: the model, its paper, task, classes and sizes."""
    from .cells import registry
    from .figures import class_names
    classes = class_names(config["task"], model.n_classes)
    return {"model": config["model"], "paper": registry.model(config["model"]).paper,
            "task": config["task"], "classes": classes, "dim": config["dim"],
            "embedding_dim": config["embedding_dim"], "head": model.head_name}


def errata(document: dict) -> dict:
    """Where each erratum id the document's terms cite is written: Tai et
    al.'s and the shared readings (E1, S2, ...) in docs/EQUATIONS.md section
    11, every other in the cell's own page, docs/cells/MODULE.md; the path of
    the copy installed with the package (``npcomp/errata_pages/``), which a
    wheel carries too."""
    from .cells import registry
    pages = resources.files("npcomp") / "errata_pages"
    page = str(pages / "cells" / f"{registry.model(document['model']).module}.md")
    cited = sorted({term["erratum"] for sentence in document["sentences"]
                    for term in sentence["forward"] + sentence["backward"] if term["erratum"]})
    shared = re.compile(r"[ES]\d+$")
    return {erratum: str(pages / "EQUATIONS.md") if shared.match(erratum) else page
            for erratum in cited}


def checked(document: dict, tolerance: float) -> dict:
    """The document with ``tolerance`` and ``passed`` (every parameter's
    finite-difference error within it)."""
    worst = max(check["finite_difference_error"] for check in document["parameters"])
    return {**document, "tolerance": tolerance, "passed": bool(worst <= tolerance)}


def format_explanation(document: dict, node: int | None = None, values: int = 3) -> str:
    """The terminal's view: per sentence the forward node by node, children
    first, then the backward, parents first, each quantity's norm and its
    ``values`` leading values (every value for ``node``); then the
    parameters' check."""
    sizes = (f"d = {document['dim']}, word vectors {document['embedding_dim']}, "
             f"{document['head']} head over {len(document['classes'])} classes; float64, "
             f"dropout off; loss J = {document['loss']:.6g}")
    lines = [f"{document['model']}: {document['paper']}", sizes]
    for number, sentence in enumerate(document["sentences"], start=1):
        nodes = sentence["nodes"]
        lines += ["", f"sentence {number}: {' '.join(sentence['tokens'])}"]
        shown = range(len(nodes)) if node is None else [_node_index(node, nodes)]
        lines += ["", "forward (children before parents)"]
        for index in shown:
            lines.append(_node_heading(nodes[index], document["classes"]))
            lines += _term_lines(sentence["forward"], index,
                                 None if node is not None else values)
        lines += ["", "backward (parents first)"]
        for index in reversed(list(shown)):
            loss = nodes[index]["loss"]
            where = f"node {index} \"{nodes[index]['span']}\""
            lines.append(where + ("" if loss is None else f"  loss {loss:.6g}"))
            lines += _term_lines(sentence["backward"], index,
                                 None if node is not None else values)
    lines += ["", f"parameters (finite differences on {_entries_text(document)}):",
              f"  {'name':<22}{'shape':<14}{'|gradient|':>12}{'rel. error':>12}{'entries':>9}"]
    for check in document["parameters"]:
        shape = "x".join(str(size) for size in check["shape"])
        lines.append(f"  {check['name']:<22}{shape:<14}{check['gradient_norm']:>12.4g}"
                     f"{check['finite_difference_error']:>12.2e}{check['entries_checked']:>9}")
    worst = max(check["finite_difference_error"] for check in document["parameters"])
    verdict = "every parameter within" if document["passed"] else "ABOVE"
    lines.append(f"max relative error {worst:.2e}: {verdict} {document['tolerance']:g}")
    places: dict = {}
    for erratum, place in document.get("errata", {}).items():
        places.setdefault(place, []).append(erratum)
    if places:
        lines.append("errata in brackets: " + "; ".join(
            f"{', '.join(ids)} in {place}" for place, ids in places.items()))
    return "\n".join(lines)


def _node_index(node: int, nodes: list) -> int:
    if not 0 <= node < len(nodes):
        raise ValueError(f"--node {node}: the tree has nodes 0..{len(nodes) - 1}")
    return node


def _node_heading(record: dict, classes: list) -> str:
    kind = "leaf" if not record["children"] else "children " + ",".join(
        str(kid) for kid in record["children"])
    gold = "" if record["label"] is None else f"  gold {record['label']}"
    chance = "" if record["probability"] is None else f" (p {record['probability']:.3f})"
    return (f"node {record['id']} \"{record['span']}\"  {kind}{gold}  predicted "
            f"{record['predicted']} {classes[record['predicted']]}{chance}")


def _term_lines(terms: list, index: int, values: int | None) -> list:
    """One line per term defined at node ``index``: symbol, equation, norm,
    the leading ``values`` (all when None)."""
    lines = []
    for term in terms:
        value = term["values"][index]
        if value is None:
            continue
        flat = np.asarray(value, dtype=np.float64).ravel()
        defined = flat[~np.isnan(flat)]
        shown = defined if values is None else defined[:values]
        numbers = ", ".join(f"{number + 0.0:.4g}" for number in shown)   # no "-0"
        more = ", ..." if shown.size < defined.size else ""
        where = f"({term['equation']})" + (f" [{term['erratum']}]" if term["erratum"] else "")
        lines.append(f"    {term['symbol']:<12}{where:<24} norm {np.linalg.norm(defined):<10.4g}"
                     f"[{numbers}{more}]")
    return lines


def _entries_text(document: dict) -> str:
    entries = document.get("entries", "all")
    return "every entry" if entries == "all" else f"at most {entries} entries a parameter"
