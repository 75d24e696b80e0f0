"""What ``npcomp explain`` and ``npcomp predict --html`` show of a tree:
its nodes with their predictions, and for explain every forward quantity
and backward error term of the cell, with the finite-difference check of
each named parameter's gradient.

The document these build is plain JSON-ready data (``--json`` prints it;
``explain_page.render_page`` draws it):

    {"model", "paper", "task", "classes": [class names],
     "sentences": [{"tokens", "nodes": [node record per tree node, children
                    before parents, root last], "forward": [term record],
                    "backward": [term record], "parts": [parts record]}],
     "loss", "parameters": [parameter record], "tolerance", "warnings": [str],
     "errata": {id: {"where", "text"}}, "state_checks": [state record] (with
     ``check_states``), "floored": [[sentence, node] whose loss is at its
     floor], "passed", and "unchecked" (why a failed check says nothing of
     the backward: a loss at its floor)}

A term record: ``symbol``, ``equation``, ``erratum`` (the ids that apply in
the sentence, comma-separated), ``node_errata`` (per node, where they differ
from node to node), ``values`` (per node, None where undefined).  A parts
record: ``symbol`` (an error term), ``parts`` (each ``label``, ``equation``,
``values`` per node, ``zero``: per node why it is exactly 0, or ""), and
``unread`` (per node why nothing reads the term, or "").  A state record:
``sentence``, ``node``, ``term``, ``state``, ``error``, ``analytic`` and
``numeric`` (the term's values and finite differences, ``coordinates``).

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

import numpy as np

from npcomp.data.readers.formats import Tree
from .state_checks import MAX_NODES
from npcomp.training.thread_pools import pinned_thread_pools


def _spans(tree: Tree) -> list:
    """Per node, the token positions below it (its own word included), in order."""
    below = [[] for _ in range(tree.n_nodes)]
    for node in range(tree.n_nodes):  # children before parents
        if tree.token_index[node] >= 0:
            below[node].append(int(tree.token_index[node]))
        parent = tree.parent[node]
        if parent >= 0:
            below[parent].extend(below[node])
    return [sorted(positions) for positions in below]


def node_records(tree: Tree, outputs: np.ndarray, predicted: np.ndarray, softmax: bool = True) -> list:
    """One record per node of ``tree`` (module docstring) from the head's
    ``outputs`` (n, width) and ``predicted`` classes (n,), in tree order."""
    children = tree.children()
    records = []
    for node, positions in enumerate(_spans(tree)):
        token = int(tree.token_index[node])
        label = int(tree.label[node])
        choice = int(predicted[node])
        records.append(
            {
                "id": node,
                "children": [int(kid) for kid in children[node]],
                "word": tree.tokens[token] if token >= 0 else None,
                "position": token if token >= 0 else None,
                "span": " ".join(tree.tokens[position] for position in positions),
                "label": label if label >= 0 else None,
                "predicted": choice,
                "probabilities": [round(float(p), 6) for p in outputs[node]],
                "probability": round(float(outputs[node, choice]), 6) if softmax else None,
            }
        )
    return records


@pinned_thread_pools()
def explain(
    model,
    params,
    trees: list,
    vocab,
    entries: int | None = None,
    rng: np.random.Generator | None = None,
    supervision: str = "all",
    check_states: bool = False,
    max_nodes: int | None = MAX_NODES,
    progress: bool = False,
    check_local: bool = False,
) -> dict:
    """One forward and backward pass of ``model`` (a TreeModel) over
    ``trees`` in float64 with dropout off, and the finite-difference check
    of every named parameter.  Returns the document's ``sentences``,
    ``loss``, ``parameters``, ``warnings`` and ``supervision`` (module
    docstring); with ``check_states`` also ``state_checks``, every node's
    error terms against finite differences in its states
    (``state_checks.py``); with ``check_local`` also ``local_checks``, each
    node's backward checked on its own (``local_checks.py``).

    A tree's labels are its own, kept where ``supervision`` supervises (only
    the root for a cell that classifies whole sequences); a tree with none
    there is labelled at its root with the model's own prediction, so the
    backward shows what would reinforce it.  ``entries``: at most this many
    entries of each parameter (and of each node's state) are checked, drawn
    by ``rng`` (None: all).  The state checks refuse (ConfigError) a forest
    of more than ``max_nodes`` nodes (None: any) before anything is
    checked; ``progress``: the checks' progress bars, with the time left,
    on standard error (once they last a moment).

    A node whose label the model gives a probability below the smallest
    float64 has its loss held at the floor -log(tiny) = 708.4 (heads.py):
    J is flat there, and no finite difference can check the backward,
    which gives the gradient of the loss unheld.  ``floored`` lists those
    nodes (sentence, node), and ``checked`` then says why the check fails."""
    from .findings import sum_errors, sum_mismatches
    from .state_checks import check_size

    params = params.astype(np.float64)
    if model.cell.labels_at_roots_only:
        supervision = "root"
    forest, labels = _labelled_forest(model, params, trees, vocab, supervision)
    if check_states or check_local:  # a forest too large is refused before any check runs
        check_size(model, params, forest, entries, max_nodes)
    loss, grads, trace, parts = _forward_backward(model, params, forest)
    sentences = _sentences(model, params, trees, labels, forest, trace, parts)
    # first: a cell the local checks cannot check is refused before any other work
    local = _local_checks(model, params, forest, progress) if check_local else None
    checks = _parameter_checks(model, params, forest, entries, rng, progress)
    for sentence in sentences:
        sum_errors(sentence)
    rows = {row for check in checks for row, _ in check.get("row_errors", [])}
    document = {
        "sentences": sentences,
        "loss": float(loss),
        "parameters": checks,
        "supervision": supervision,
        "floored": _floored(forest, trace["node_loss"]),
        "warnings": unexercised_blocks(model, forest, grads) + unused_parts(parts),
        "vocabulary_rows": {str(row): vocab.words[row] for row in sorted(rows)},
    }
    document["parts_mismatches"] = sum_mismatches(document)
    if local is not None:
        document["local_checks"] = local
    if check_states:
        document["state_checks"] = _state_checks(model, params, forest, entries, rng, max_nodes, progress)
    return document


def _forward_backward(model, params, forest) -> tuple:
    """(loss, grads, trace, parts): the pass explain shows, its trace (the
    cell's cache, each node's loss, dJ/dh) and the error terms' parts."""
    trace: dict = {}
    grads = params.zeros_like()
    loss, _ = model.loss_and_gradient(params, forest, grads, trace=trace)
    parts = model.cell.term_parts(params.prefixed("cell"), forest, trace["cell_cache"], trace["d_h"])
    return loss, grads, trace, parts


def _parameter_checks(model, params, forest, entries, rng, progress: bool) -> list:
    """Every named parameter's gradient against finite differences
    (``finite_differences.parameter_checks``), as the document records it."""
    from .finite_differences import parameter_checks

    checks = parameter_checks(model, params, forest, entries=entries, rng=rng, progress=progress)
    for check in checks:
        del check["unread_rows_error"]
    return checks


def _local_checks(model, params, forest, progress: bool) -> list:
    """Each node's backward checked on its own (``local_checks.py``), as the
    document records it."""
    from .local_checks import check_local, local_record

    return [local_record(check) for check in check_local(model, params, forest, progress=progress)]


def _state_checks(model, params, forest, entries, rng, max_nodes, progress: bool) -> list:
    """Every node's error terms against finite differences in its states
    (``state_checks.py``), as the document records them."""
    from .state_checks import check_states

    return [
        _state_record(check)
        for check in check_states(
            model, params, forest, entries=entries, rng=rng, max_nodes=max_nodes, progress=progress
        )
    ]


def _sentences(model, params, trees: list, labels: list, forest, trace: dict, parts: list) -> list:
    """The document's sentence records (module docstring) of the pass that
    left ``trace``: nodes, forward and backward terms, parts."""
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
        sentences.append(
            {
                "tokens": list(tree.tokens),
                "nodes": nodes,
                "forward": [_term_record(term, rows) for term in forward],
                "backward": [_term_record(term, rows) for term in backward],
                "parts": [_parts_record(term, rows) for term in parts],
            }
        )
    return sentences


def _labelled_forest(model, params, trees: list, vocab, supervision: str) -> tuple:
    """(forest, labels per tree): each tree's own labels where ``supervision``
    keeps them; a tree with none there labelled at its root with the model's
    own prediction."""
    from npcomp.forest import build_forest, node_words, supervised_labels

    words = [node_words(tree, vocab.encode(tree.tokens)) for tree in trees]
    unlabelled = build_forest(trees, words)
    predicted = model.head.decode(model.outputs(params, unlabelled))
    labels = []
    for index, tree in enumerate(trees):
        kept = supervised_labels(tree, supervision).copy()
        if (kept < 0).all():
            root_row = np.flatnonzero((unlabelled.tree == index) & (unlabelled.origin == tree.root))[0]
            kept[tree.root] = predicted[root_row]
        labels.append(kept)
    return build_forest(trees, words, labels), labels


# the loss of a node whose label's probability is below the smallest float64:
# heads.py holds -log p there (SoftmaxClassifier.loss)
LOSS_FLOOR = float(-np.log(np.finfo(np.float64).tiny))


def _floored(forest, node_loss: np.ndarray) -> list:
    """[[sentence, node]] of the forest's nodes whose loss is at its floor."""
    return [[int(forest.tree[row]), int(forest.origin[row])] for row in np.flatnonzero(node_loss == LOSS_FLOOR)]


def unexercised_blocks(model, forest, grads) -> list:
    """A warning naming the parameters and gate sub-blocks whose gradient is
    exactly 0 on this forest (the embedding on the rows it reads): their
    finite-difference check compares 0 with 0 and sees no bug."""
    idle = [
        block.name
        for block in model.layout.blocks
        if block.name != "embedding" and block.size and not grads[block.name].any()
    ]
    rows = np.unique(forest.word[forest.word >= 0])
    if rows.size and not grads["embedding"][rows].any():
        idle.append("embedding")
    for sub_name, (block_name, index) in model.cell.report_slices().items():
        if not grads[f"cell.{block_name}"][index].any():
            idle.append(f"cell.{sub_name}")
    if not idle:
        return []
    return [
        f"this tree leaves {', '.join(idle)} unexercised: their gradient is exactly 0 "
        "here, so the check above compares 0 with 0 for them and cannot see a bug"
    ]


def unused_parts(term_parts: list) -> list:
    """One warning per error term with parts that this tree never puts to
    use: wherever such a part is defined, it is 0 for a reason of the tree's
    (``Part.zero``: a leaf's c^L = 0, ...) or nothing reads the term there
    (an S-LSTM leaf's eps_c).  A bug in such a part passes the parameter
    check; the warning says why each is idle.  A part that is 0 where the
    tree gives no reason for it is not the tree's doing (a backward that
    drops it makes it so): no warning blames the tree for it."""
    warnings = []
    for term in term_parts:
        idle, why = [], []
        for part in term.parts:
            values = np.asarray(part.values, dtype=np.float64).reshape(part.values.shape[0], -1)
            defined = ~np.isnan(values).all(axis=1)
            unread = np.full(values.shape[0], "", dtype=object) if term.unread is None else term.unread
            structural = np.asarray(part.zero) != ""
            if not defined.any() or (defined & (unread == "") & ~structural).any():
                continue
            idle.append(part.label)
            why += [reason for reason in part.zero[defined & (unread == "")] if reason]
            why += [reason for reason in unread[defined] if reason]
        if idle:
            reasons = "; ".join(dict.fromkeys(why))
            warnings.append(
                f"this tree leaves {term.symbol}'s parts {', '.join(idle)} unused "
                f"({reasons}): a bug in them passes the parameter check; "
                f"--check-states checks every node's {term.symbol}, and a tree "
                "where they reach a node that reads them exercises them"
            )
    return warnings


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
    """A Term's values at ``rows`` as JSON-ready lists, None where undefined;
    the errata that apply at these rows (per node where they differ)."""
    record = {
        "symbol": term.symbol,
        "equation": term.equation,
        "erratum": term.erratum,
        "values": _rows(term.values, rows),
    }
    if term.node_errata is not None:
        per_node = [str(term.node_errata[row]) for row in rows]
        record["node_errata"] = per_node
        record["erratum"] = ", ".join(
            dict.fromkeys(erratum for ids in per_node for erratum in ids.split(", ") if erratum)
        )
    return record


def _rows(values: np.ndarray, rows: np.ndarray) -> list:
    """``values`` at ``rows`` as JSON-ready lists, None where undefined."""
    out = []
    for row in rows:
        value = np.asarray(values[row], dtype=np.float64)
        out.append(None if np.isnan(value).all() else np.where(np.isnan(value), None, value).tolist())
    return out


def _parts_record(term, rows: np.ndarray) -> dict:
    """A TermParts at ``rows`` (module docstring)."""
    return {
        "symbol": term.symbol,
        "parts": [
            {
                "label": part.label,
                "equation": part.equation,
                "values": _rows(part.values, rows),
                "zero": [str(part.zero[row]) for row in rows],
            }
            for part in term.parts
        ],
        "unread": ["" if term.unread is None else str(term.unread[row]) for row in rows],
    }


def _state_record(check) -> dict:
    """A StateCheck with its node as numbered in its sentence."""
    return {
        "sentence": check.tree,
        "node": check.origin,
        "term": check.term,
        "state": check.state,
        "error": check.error,
        "analytic": check.analytic.tolist(),
        "numeric": check.numeric.tolist(),
        "coordinates": check.coordinates.tolist(),
    }


def describe(config: dict, model) -> dict:
    """The document's head: the model, its paper, task, classes and sizes."""
    from npcomp.cells import registry
    from npcomp.data.datasets.class_list import class_names

    classes = class_names(config["task"], model.n_classes, given=config.get("classes"), unnamed="class {}")
    return {
        "model": config["model"],
        "paper": registry.model(config["model"]).paper,
        "task": config["task"],
        "classes": classes,
        "dim": config["dim"],
        "embedding_dim": config["embedding_dim"],
        "head": model.head_name,
    }


def errata(document: dict) -> dict:
    """{id: {"where", "text"}} for each erratum id the document's terms cite:
    where it is written out (Tai et al.'s and the shared readings, E1, S2,
    ..., in docs/EQUATIONS.md section 11, every other in the cell's own page,
    docs/cells/MODULE.md), as the path of the copy installed with the package
    relative to the package's directory (``npcomp/study/errata_pages/...``,
    which a wheel carries too; no machine's path), and what it says, in a
    line (``errata.py``)."""
    from . import errata as written
    from npcomp.cells import registry

    module = registry.model(document["model"]).module
    cited = sorted(
        {
            erratum
            for sentence in document["sentences"]
            for term in sentence["forward"] + sentence["backward"]
            for erratum in term["erratum"].split(", ")
            if erratum
        }
    )
    return {
        erratum: {"where": written.installed_copy(written.page(module, erratum)), "text": written.text(module, erratum)}
        for erratum in cited
    }


def checked(document: dict, tolerance: float) -> dict:
    """The document with ``tolerance`` and ``passed``: every parameter's
    finite-difference error within it, every node's error terms where they
    were checked (states, local checks) and every term the sum of its parts;
    when it fails, ``verdict``: the first finding and its node
    (``findings.verdict``), which the page opens with and marks."""
    worst = max(check["finite_difference_error"] for check in document["parameters"])
    states = document.get("state_checks", []) + document.get("local_checks", [])
    agree = all(check["error"] <= tolerance for check in states)
    passed = bool(worst <= tolerance and agree and not document.get("parts_mismatches"))
    checked_document = {**document, "tolerance": tolerance, "passed": passed}
    if not passed and document.get("floored"):
        checked_document["unchecked"] = floor_note(document)
    if not passed and not document.get("floored"):
        from .findings import verdict

        checked_document["verdict"] = verdict(checked_document)
    return checked_document


def floor_note(document: dict) -> str:
    """Why a check that fails on a forest with a node at the loss floor
    says nothing of the backward."""
    sentence, node = document["floored"][0]
    several = len(document["sentences"]) > 1
    where = (f"sentence {sentence + 1} " if several else "") + f"node {node}"
    more = len(document["floored"]) - 1
    tiny = np.finfo(np.float64).tiny
    return (
        f"not a wrong gradient: the loss is at its floor at {where}"
        + (f" (and {more} more)" if more else "")
        + f": the model gives its label a probability below {tiny:.3g}, the smallest "
        f"float64, so its -log p is held at {LOSS_FLOOR:.1f}. J is flat there while the "
        "backward gives the gradient of the loss unheld, so finite differences cannot "
        "check this tree: label it with a class the model does not rule out, or leave it "
        "unlabelled (its root then takes the model's own prediction)"
    )
