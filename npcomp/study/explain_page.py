"""The page ``npcomp explain`` and ``npcomp predict --html`` write: one
self-contained HTML file (inline SVG, CSS and script, nothing fetched from
anywhere) drawing each sentence's tree of the document ``explain.py``
describes.  Its HTML template, style sheet and script are files of their own
(``npcomp/study/page_files/``), filled in and inlined here.

Each node is a disc in the colour of its predicted class (the SST's scale,
very negative red through neutral grey to very positive blue), with the
class number inside and the predicted class's probability below; a ring in
the gold label's colour surrounds a labelled node, and a black diamond
marks a node whose prediction differs from its gold label.  Words lie in
sentence order, each under the node that reads it; a node without a word
sits above the middle of its children, and every parent above its
children (a chain climbs one step a word).  Hovering over a node shows its
details in the side panel, clicking pins them: its span, word, gold and
predicted class, the head's probabilities, its loss and, for explain, each
forward quantity and backward error term at that node (symbol, equation,
erratum, norm, leading values and the whole vector on a toggle).

Plain Python (no NumPy import), as ``figures.py``: a document holding NumPy
arrays or scalars is read through their ``tolist()``.
"""

from __future__ import annotations

import functools
import html
import json
import math
import string
from importlib import resources
from pathlib import Path


# The SST's five-point scale, very negative .. very positive: a diverging
# red - grey - blue palette (ColorBrewer RdBu), legible to red-green
# colour-blind readers and in greyscale by lightness.
ANCHORS = ("#b2182b", "#ef8a62", "#bdbdbd", "#67a9cf", "#2166ac")

# pixels: a token's column, the disc, the gap between levels
MIN_COLUMN, CHAR_WIDTH, RADIUS = 46, 7.2, 12
ROW_GAP, TALL_ROW_GAP, TALL = 62, 46, 12
MARGIN = 24


class PageError(ValueError):
    """The page cannot be drawn or written; the message says why."""


def class_colours(n_classes: int) -> list:
    """One "#rrggbb" per class: the palette's ends for two classes, its five
    colours for five, evenly spaced along it for any other count."""
    if n_classes <= 1:
        return [ANCHORS[2]] * max(n_classes, 0)
    return [_along(k / (n_classes - 1)) for k in range(n_classes)]


def _along(t: float) -> str:
    """The palette's colour at ``t`` in [0, 1], linear between anchors."""
    scaled = t * (len(ANCHORS) - 1)
    low = min(int(scaled), len(ANCHORS) - 2)
    weight = scaled - low
    a, b = _rgb(ANCHORS[low]), _rgb(ANCHORS[low + 1])
    return "#" + "".join(f"{round(x + (y - x) * weight):02x}" for x, y in zip(a, b))


def _rgb(colour: str) -> tuple:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


def _ink(colour: str) -> str:
    """Text colour readable on ``colour``: white on the palette's dark ends."""
    r, g, b = _rgb(colour)
    return "#ffffff" if 0.299 * r + 0.587 * g + 0.114 * b < 150 else "#1a1a1a"


def _plain(value):
    """``value`` as strict JSON data: NumPy arrays and scalars as Python
    lists and numbers; NaN and infinities (undefined entries of a term) as
    the strings "NaN", "Infinity", "-Infinity", which JSON.parse reads and
    the page's script turns back into numbers."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return _plain(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def _script_json(data) -> str:
    """JSON safe inside a <script> element: no "<" (so no "</script>" or
    "<!--"), ">" or "&" outside escapes; JSON.parse reads it unchanged."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _document_class_names(document: dict) -> list:
    """The document's class names, else "class 0".."class C-1" for the
    classes its nodes name."""
    if document.get("classes"):
        return [str(name) for name in document["classes"]]
    count = 0
    for sentence in document.get("sentences") or []:
        for node in sentence.get("nodes") or []:
            for key in ("predicted", "label"):
                if isinstance(node.get(key), int):
                    count = max(count, node[key] + 1)
    return [f"class {k}" for k in range(count)]


# ---------------------------------------------------------------- layout


def _order(nodes: list) -> tuple:
    """(node indices children first, each child's subtree in order: a
    post-order from the roots, whatever order ``nodes`` are listed in;
    each node's children as indices into ``nodes``)."""
    if not nodes:
        return [], []
    index = {node["id"]: k for k, node in enumerate(nodes)}
    kids = [[index[c] for c in node.get("children") or [] if c in index] for node in nodes]
    has_parent = {child for row in kids for child in row}
    order, seen = [], set()
    for root in [k for k in range(len(nodes)) if k not in has_parent] or [len(nodes) - 1]:
        stack = [(root, False)]
        while stack:
            k, expanded = stack.pop()
            if expanded:
                order.append(k)
            elif k not in seen:
                seen.add(k)
                stack.append((k, True))
                stack.extend((child, False) for child in reversed(kids[k]))
    return order + [k for k in range(len(nodes)) if k not in seen], kids


def layout(sentence: dict) -> dict:
    """Where each node of ``sentence`` is drawn: {"x", "y" (lists, one per
    node in list order), "width", "height", "row_gap"} in pixels.

    A node reading a word sits in that word's column (its ``position``;
    without positions, words take columns in the tree's post-order, exact
    for constituency trees and chains); any other node above the middle of
    its children.  Its level is its height (leaves 0), drawn top down from
    the root's."""
    nodes = sentence.get("nodes") or []
    tokens = [str(token) for token in sentence.get("tokens") or []]
    order, kids = _order(nodes)
    position = _positions(nodes, order)
    for column in position.values():
        tokens += [""] * (column + 1 - len(tokens))
    widths = [max(MIN_COLUMN, CHAR_WIDTH * len(token) + 12) for token in tokens]
    centres, left = [], MARGIN
    for width in widths:
        centres.append(left + width / 2)
        left += width
    height = [0] * len(nodes)
    x = [MARGIN + MIN_COLUMN / 2] * len(nodes)
    for k in order:
        if kids[k]:
            height[k] = 1 + max(height[child] for child in kids[k])
        if k in position:
            x[k] = centres[position[k]]
        elif kids[k]:
            xs = [x[child] for child in kids[k]]
            x[k] = (min(xs) + max(xs)) / 2
    top = max(height, default=0)
    gap = ROW_GAP if top <= TALL else TALL_ROW_GAP
    y = [MARGIN + RADIUS + 6 + (top - h) * gap for h in height]
    return {"x": x, "y": y, "row_gap": gap, "width": left + MARGIN, "height": MARGIN + RADIUS + 6 + top * gap + 48}


def _positions(nodes: list, order: list) -> dict:
    """{node index: its word's column} for the nodes reading a word."""
    given = {k: node.get("position") for k, node in enumerate(nodes) if node.get("word") is not None}
    if given and all(isinstance(column, int) and column >= 0 for column in given.values()):
        return given
    readers = [k for k in order if k in given]
    return {k: column for column, k in enumerate(readers)}


# ---------------------------------------------------------------- drawing


def _nth(items: list, k, otherwise=None):
    """``items[k]`` for a class number ``k`` in range, else ``otherwise``
    (by default ``k`` itself, as text)."""
    if isinstance(k, int) and 0 <= k < len(items):
        return items[k]
    return str(k) if otherwise is None else otherwise


def _number(value):
    """``value`` as a float, None where it is none (or not a number)."""
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _node_svg(node: dict, sentence_index: int, x: float, y: float, classes: list, colours: list) -> str:
    """One node's <g class="node">: disc, class number, probability, gold
    ring and mismatch mark, its word."""
    predicted, gold = node.get("predicted"), node.get("label")
    fill = _nth(colours, predicted, "#ffffff")
    probability = _number(node.get("probability"))
    tip = f"{node.get('span') or ''} \N{EM DASH} predicted {_nth(classes, predicted)}"
    if node.get("culprit"):
        tip = "the first failing check: " + tip
    if probability is not None:
        tip += f" (p = {probability:.2f})"
    if isinstance(gold, int):
        tip += f"; gold {_nth(classes, gold)}"
    parts = [
        (
            f'<g class="node" data-node="{_attr(node.get("id"))}" '
            f'data-sentence="{sentence_index}" transform="translate({x:.1f},{y:.1f})" '
            f'tabindex="0" role="button" aria-label="{_attr(tip)}">'
        ),
        f"<title>{_text(tip)}</title>",
    ]
    if isinstance(gold, int):
        parts.append(f'<circle class="gold" r="{RADIUS + 4}" stroke="{_nth(colours, gold, "#000000")}"/>')
    if node.get("culprit"):  # the verdict's node: a dashed red ring
        parts.append(f'<circle class="culprit" r="{RADIUS + 8}"/>')
    parts.append(f'<circle class="disc" r="{RADIUS}" fill="{fill}"/>')
    parts.append(f'<text class="cls" dy="0.35em" fill="{_ink(fill)}">{_text(predicted)}</text>')
    if isinstance(gold, int) and gold != predicted:
        parts.append('<path class="miss" d="M13 -19 l5 5 l-5 5 l-5 -5 z"/>')
    below = RADIUS + 13
    if probability is not None:
        parts.append(f'<text class="p" y="{below}">{probability:.2f}</text>')
        below += 14
    if node.get("word") is not None:
        parts.append(f'<text class="word" y="{below}">{_text(node["word"])}</text>')
    parts.append("</g>")
    return "".join(parts)


def _tree_svg(sentence: dict, sentence_index: int, classes: list, colours: list) -> str:
    """The sentence's tree as inline SVG: edges under the nodes."""
    nodes = sentence.get("nodes") or []
    place = layout(sentence)
    x, y = place["x"], place["y"]
    index = {node["id"]: k for k, node in enumerate(nodes)}
    edges = [
        f'<path d="M{x[k]:.1f} {y[k]:.1f}L{x[index[c]]:.1f} {y[index[c]]:.1f}"/>'
        for k, node in enumerate(nodes)
        for c in node.get("children") or []
        if c in index
    ]
    drawn = [_node_svg(node, sentence_index, x[k], y[k], classes, colours) for k, node in enumerate(nodes)]
    width, height = math.ceil(place["width"]), math.ceil(place["height"])
    return (
        f'<svg class="tree" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="group" '
        f'aria-label="tree of sentence {sentence_index + 1}">'
        f'<g class="edges">{"".join(edges)}</g>{"".join(drawn)}</svg>'
    )


def _sentence_section(sentence: dict, index: int, classes: list, colours: list) -> str:
    tokens = " ".join(str(token) for token in sentence.get("tokens") or [])
    nodes = sentence.get("nodes") or []
    summary = ""
    if nodes:
        root = nodes[-1]
        summary = f"root: {_nth(classes, root.get('predicted'))}"
        probability = _number(root.get("probability"))
        if probability is not None:
            summary += f" ({probability:.2f})"
        if isinstance(root.get("label"), int):
            summary += f", gold {_nth(classes, root['label'])}"
    made = f' <span class="muted">tree: {_text(sentence["tree_from"])}</span>' if sentence.get("tree_from") else ""
    return (
        f'<section class="sentence" id="sentence-{index}">'
        f'<h2><span class="num">{index + 1}</span> {_text(tokens)}</h2>'
        f'<p class="muted">{len(nodes)} nodes, {_text(summary)}{made}</p>'
        f'<div class="scroll">{_tree_svg(sentence, index, classes, colours)}</div>'
        "</section>"
    )


def _legend(classes: list, colours: list, ordinal: bool) -> str:
    items = "".join(
        f'<li><span class="swatch" style="background:{colour}">'
        f'<span style="color:{_ink(colour)}">{k}</span></span>{_text(name)}</li>'
        for k, (name, colour) in enumerate(zip(classes, colours))
    )
    shown = "the predicted class (probability below" + ("; none with the ordinal head)" if ordinal else ")")
    return (
        f'<div class="legend"><ul>{items}</ul><p class="muted">Disc: {shown}. Ring: '
        f'the gold label. <span class="diamond"></span> prediction differs from gold. '
        "Hover over a node for its details; click to keep them.</p></div>"
    )


def _parameters(document: dict) -> str:
    """The finite-difference check of each parameter's gradient, as a table."""
    rows = document.get("parameters") or []
    if not rows:
        return ""
    tolerance = _number(document.get("tolerance"))
    body = []
    for row in rows:
        error = _number(row.get("finite_difference_error"))
        failed = error is not None and tolerance is not None and not error <= tolerance
        shape = row.get("shape")
        shape = "\N{MULTIPLICATION SIGN}".join(str(n) for n in shape) if isinstance(shape, (list, tuple)) else shape
        body.append(
            f"<tr{' class=fail' if failed else ''}><td>{_text(row.get('name'))}</td>"
            f"<td>{_text(shape)}</td><td>{_fmt(row.get('gradient_norm'))}</td>"
            f"<td>{_fmt(row.get('finite_difference_error'))}</td>"
            f"<td>{_text(row.get('entries_checked'))}</td></tr>"
        )
    within = f" (tolerance {_fmt(tolerance)})" if tolerance is not None else ""
    return (
        '<details class="params" open><summary>Parameters: gradient and finite-'
        f"difference check{within}</summary><table><thead><tr><th>name</th><th>shape</th>"
        "<th>\N{DOUBLE VERTICAL LINE}gradient\N{DOUBLE VERTICAL LINE}</th>"
        "<th>finite-difference error</th><th>entries checked</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></details>"
    )


def _mark_culprit(data: dict) -> None:
    """In place: the verdict's node (explain's first failing check) flagged
    ``culprit``, so its disc gets the mark."""
    found = data.get("verdict") or {}
    sentence, node = found.get("sentence"), found.get("node")
    sentences = data.get("sentences") or []
    if isinstance(sentence, int) and 0 <= sentence < len(sentences):
        for record in sentences[sentence]["nodes"]:
            if record.get("id") == node:
                record["culprit"] = True


def _verdict(document: dict) -> str:
    """The summary line at the top: the first failing check and where its
    node is marked, or that every check passes."""
    found = document.get("verdict")
    if not found:
        if document.get("passed"):
            return '<p class="verdict pass">Every check passes.</p>'
        return ""
    where = ""
    if isinstance(found.get("sentence"), int) and found.get("node") is not None:
        where = (
            f' <a href="#sentence-{found["sentence"]}">node {_text(found["node"])} of '
            f"sentence {found['sentence'] + 1}, ringed on its tree</a>"
        )
    line = str(found.get("line") or "")
    return f'<p class="verdict fail" role="alert">{_text(line[:1].upper() + line[1:])}{where}</p>'


def _warnings(document: dict) -> str:
    """What the tree leaves unexercised or unused, as explain warns."""
    warnings = document.get("warnings") or []
    if not warnings:
        return ""
    items = "".join(f"<li>{_text(warning)}</li>" for warning in warnings)
    return f'<ul class="warnings" aria-label="warnings">{items}</ul>'


def _header(document: dict) -> str:
    model = document.get("model")
    facts = []
    for key in ("model", "task", "paper"):
        if document.get(key) not in (None, ""):
            facts.append(f"<dt>{key}</dt><dd>{_text(document[key])}</dd>")
    if document.get("loss") is not None:
        facts.append(f"<dt>loss</dt><dd>{_fmt(document['loss'])}</dd>")
    if document.get("tolerance") is not None:
        facts.append(f"<dt>tolerance</dt><dd>{_fmt(document['tolerance'])}</dd>")
    title = f"npcomp: {model}" if model else "npcomp"
    return f'<header><h1>{_text(title)}</h1><dl class="facts">{"".join(facts)}</dl></header>'


def _fmt(value) -> str:
    number = _number(value)
    if number is None:
        return "\N{EM DASH}" if value is None else _text(value)
    if number != 0 and (abs(number) >= 1e4 or abs(number) < 1e-3):
        return f"{number:.3g}"
    return f"{number:.4g}"


def _text(value) -> str:
    return html.escape("" if value is None else str(value), quote=False)


def _attr(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def render_page(document: dict) -> str:
    """The whole page of ``document`` (explain.py's schema) as one HTML
    string, needing nothing but itself to show."""
    if not isinstance(document, dict) or not isinstance(document.get("sentences", []), list):
        raise PageError("the page draws a document: a dict whose 'sentences' is a list")
    data = _plain(document)
    classes = _document_class_names(data)
    colours = class_colours(len(classes))
    sentences = data.get("sentences") or []
    for number, sentence in enumerate(sentences, start=1):
        nodes = sentence.get("nodes") if isinstance(sentence, dict) else None
        if not isinstance(nodes, list) or not all(isinstance(n, dict) and "id" in n for n in nodes):
            raise PageError(f"sentence {number}: 'nodes' must be a list of node records with an 'id'")
    ordinal = any(node.get("probability") is None for sentence in sentences for node in sentence["nodes"])
    _mark_culprit(data)
    body = (
        "".join(_sentence_section(sentence, k, classes, colours) for k, sentence in enumerate(sentences))
        or '<p class="muted">No sentences.</p>'
    )
    palette = {"classes": classes, "colours": colours, "ink": [_ink(c) for c in colours]}
    return string.Template(page_file("page.html")).substitute(
        title=_text(data.get("model") or "npcomp"),
        style=page_file("page.css"),
        header=_header(data),
        verdict=_verdict(data),
        warnings=_warnings(data),
        legend=_legend(classes, colours, ordinal),
        parameters=_parameters(data),
        sentences=body,
        document=_script_json(data),
        palette=_script_json(palette),
        script=page_file("page.js"),
    )


@functools.lru_cache(maxsize=None)
def page_file(name: str) -> str:
    """The text of one of the page's files, package data in
    ``npcomp/study/page_files/``: its HTML template (``string.Template``), its
    style sheet and its script."""
    return (resources.files("npcomp.study") / "page_files" / name).read_text(encoding="utf-8")


def check_target(path: str | Path, overwrite: bool) -> Path:
    """``path`` if the page may be written there: PageError when it exists
    (unless ``overwrite``), is a directory, or its directory is missing,
    before any work is done."""
    path = Path(path)
    if path.is_dir():
        raise PageError(f"{path}: a directory, not a file for the page")
    if path.exists() and not overwrite:
        raise PageError(
            f"{path} already exists; nothing was written. Ways on: --overwrite replaces it, or another file name."
        )
    if not path.parent.is_dir():
        raise PageError(f"{path.parent}: no such directory for the page")
    return path


def write_page(text: str, path: str | Path, overwrite: bool = False) -> Path:
    """Write ``text`` to ``path`` as run files are written (``rundir``): a
    temporary file beside it, synced, then renamed, so a reader never sees
    half a page and a failed write leaves any earlier file as it was."""
    from npcomp.runfiles.rundir import write_atomically

    path = check_target(path, overwrite)
    write_atomically(path, lambda handle: handle.write(text.encode("utf-8")))
    return path
