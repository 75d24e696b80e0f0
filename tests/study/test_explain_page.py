"""The trees' HTML page (explain_page.render_page): self-contained, every
node drawn, text escaped; the same page in a real headless Chromium (the
DOM, the detail panel a click fills, a screenshot that is not blank); and
``npcomp predict --html`` writing it for a trained run."""

import html.parser
import io
import json
import math
import os
import re
import shutil
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import npcomp.data.datasets.synthetic
from npcomp.cli import main
from npcomp.study.explain_page import ANCHORS, class_colours, layout, render_page
from conftest import synthetic_of_size

CLASSES = ["very negative", "negative", "neutral", "positive", "very positive"]
NAN = float("nan")


def _node(id, children, word, position, span, label, predicted, probabilities, ordinal=False, loss=None):
    return {
        "id": id,
        "children": children,
        "word": word,
        "position": position,
        "span": span,
        "label": label,
        "predicted": predicted,
        "probabilities": probabilities,
        "probability": None if ordinal else probabilities[predicted],
        "loss": loss,
    }


def _binary_sentence() -> dict:
    """A constituency tree of 5 nodes over three words, one of them markup,
    with forward and backward terms undefined (NaN, null) at some nodes."""
    p = [0.05, 0.1, 0.2, 0.6, 0.05]
    q = [0.7, 0.1, 0.1, 0.05, 0.05]
    nodes = [
        _node(0, [], "not", 0, "not", 1, 1, [0.1, 0.6, 0.2, 0.05, 0.05], loss=0.51),
        _node(1, [], "<b>&", 1, "<b>&", None, 2, [0.1, 0.1, 0.7, 0.05, 0.05]),
        _node(2, [], '"good"', 2, '"good"', 3, 3, p, loss=0.51),
        _node(3, [1, 2], None, None, '<b>& "good"', 3, 4, [0.0, 0.0, 0.1, 0.4, 0.5], loss=0.92),
        _node(4, [0, 3], None, None, 'not <b>& "good"', 1, 0, q, loss=2.3),
    ]
    vector = [[0.1 * k + j for j in range(8)] for k in range(5)]
    forward = [
        {"symbol": "h", "equation": "15", "erratum": "", "values": vector},
        {
            "symbol": "f_l",
            "equation": "11",
            "erratum": "E1",
            "values": [None, None, None, [0.5, NAN, 0.25, 0.1], [0.2, 0.3, 0.4, 0.5]],
        },
    ]
    backward = [
        {"symbol": "eps_h", "equation": "reverses 15", "erratum": "", "values": vector},
        {
            "symbol": "delta_o",
            "equation": "reverses 15, 13",
            "erratum": "",
            "values": [[NAN] * 3, [NAN] * 3, [1e-5, -2.0, 3.5], [0.0, 1.0, 2.0], [[1.0, 2.0], [3.0, float("inf")]]],
        },
    ]
    return {"tokens": ["not", "<b>&", '"good"'], "nodes": nodes, "forward": forward, "backward": backward}


def _chain_sentence() -> dict:
    """A sequence model's chain (node t reads word t), with the ordinal
    head's P(label > k): no probability of the predicted class."""
    words = ["a", "slow", "film", "."]
    nodes = [
        _node(
            t,
            [t - 1] if t else [],
            word,
            t,
            " ".join(words[: t + 1]),
            2 if t == 3 else None,
            1,
            [0.8, 0.3, 0.1, 0.05],
            ordinal=True,
        )
        for t, word in enumerate(words)
    ]
    return {"tokens": words, "nodes": nodes}


def _dependency_sentence() -> dict:
    """A dependency tree: every node reads a word, the root's three children."""
    words = ["the", "film", "is", "good", "!"]
    probs = [0.1, 0.1, 0.2, 0.5, 0.1]
    nodes = [
        _node(0, [], "the", 0, "the", None, 2, probs),
        _node(1, [0], "film", 1, "the film", None, 2, probs),
        _node(2, [], "is", 2, "is", None, 2, probs),
        _node(3, [], "!", 4, "!", None, 3, probs),
        _node(4, [1, 2, 3], "good", 3, "the film is good !", 3, 3, probs),
    ]
    return {"tokens": words, "nodes": nodes}


def _document() -> dict:
    return {
        "model": "treelstm-nary",
        "paper": "Tai et al. 2015",
        "task": "sst5",
        "classes": CLASSES,
        "loss": 3.75,
        "tolerance": 1e-5,
        "parameters": [
            {
                "name": "W_i",
                "shape": [4, 4],
                "gradient_norm": 0.12,
                "finite_difference_error": 3e-9,
                "entries_checked": 16,
            },
            {
                "name": "U_f",
                "shape": [4, 8],
                "gradient_norm": 0.5,
                "finite_difference_error": 0.2,
                "entries_checked": 32,
            },
        ],
        "sentences": [_binary_sentence(), _chain_sentence(), _dependency_sentence()],
    }


NODES = (5, 4, 5)


def _node_elements(page: str) -> list:
    """(sentence, node) of every <g class="node"> in ``page``."""
    return [(int(s), int(n)) for n, s in re.findall(r'<g class="node" data-node="(\d+)" data-sentence="(\d+)"', page)]


def test_the_page_is_self_contained():
    page = render_page(_document())
    lowered = page.lower()
    for external in ("http://", "https://", "src=", "href=", "url(", "@import", "<link"):
        assert external not in lowered, external


def test_one_node_element_per_tree_node():
    page = render_page(_document())
    expected = [(s, n) for s, count in enumerate(NODES) for n in range(count)]
    assert sorted(_node_elements(page)) == expected
    assert page.count('id="detail"') == 1


def test_text_is_escaped():
    page = render_page(_document())
    assert "<b>&" not in page
    assert "&lt;b&gt;&amp;" in page  # the token, drawn as text
    assert '<text class="word" y="39">&lt;b&gt;&amp;</text>' in page


class _Words(html.parser.HTMLParser):
    """The texts of the page's <text class="word"> elements, unescaped."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.words, self._inside = [], False

    def handle_starttag(self, tag, attrs):
        self._inside = tag == "text" and ("class", "word") in attrs
        if self._inside:
            self.words.append("")

    def handle_endtag(self, tag):
        self._inside = False

    def handle_data(self, data):
        if self._inside:
            self.words[-1] += data


TOKENS = st.lists(
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=12),
    min_size=1,
    max_size=6,
)


@given(TOKENS)
def test_any_token_is_drawn_as_itself(tokens):
    """Whatever a token holds (markup, quotes, "</script>"), the page shows
    it as text and embeds it as data."""
    nodes = [
        _node(t, [t - 1] if t else [], word, t, " ".join(tokens[: t + 1]), None, 2, [0.2] * 5)
        for t, word in enumerate(tokens)
    ]
    page = render_page({"classes": CLASSES, "sentences": [{"tokens": tokens, "nodes": nodes}]})
    reader = _Words()
    reader.feed(page)
    assert reader.words == tokens
    embedded = re.search(r'id="document">(.*?)</script>', page, re.DOTALL).group(1)
    assert json.loads(embedded)["sentences"][0]["tokens"] == tokens


def test_the_page_files_are_filled_in_and_inlined():
    """The template (npcomp/study/page_files/page.html) has every place filled, the
    style sheet and the script inlined as they are in their files."""
    from npcomp.study.explain_page import page_file

    text = render_page(_document())
    assert "${" not in text and "$" not in page_file("page.html").replace("${", "")
    assert f"<style>\n{page_file('page.css')}</style>" in text
    assert f"<script>\n{page_file('page.js')}</script>" in text


def test_the_page_script_is_valid_javascript(tmp_path):
    """Node.js parses the script as it stands in its file and as the page
    inlines it (``node --check``: a syntax check, nothing run)."""
    import subprocess

    from npcomp.study.explain_page import page_file

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        message = "node not on PATH (Debian: apt-get install nodejs)"
        if os.environ.get("NPCOMP_REQUIRE_BROWSER"):  # CI installs it with the browser
            pytest.fail(message)
        pytest.skip(message)
    inlined = re.findall(r"<script>(.*?)</script>", render_page(_document()), re.S)
    assert inlined == ["\n" + page_file("page.js")]
    for name, text in (("page.js", page_file("page.js")), ("inlined.js", inlined[0])):
        (tmp_path / name).write_text(text)
        checked = subprocess.run([node, "--check", str(tmp_path / name)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
    (tmp_path / "broken.js").write_text(page_file("page.js").replace("})();", "})(;"))
    assert (
        subprocess.run([node, "--check", str(tmp_path / "broken.js")], capture_output=True).returncode != 0
    )  # the check can fail


def test_the_document_is_embedded_as_strict_json():
    page = render_page(_document())
    embedded = re.search(r'<script type="application/json" id="document">(.*?)</script>', page, re.DOTALL).group(1)
    assert "</" not in embedded and "<" not in embedded
    data = json.loads(embedded)  # strict: NaN is a string
    assert data["sentences"][0]["tokens"][1] == "<b>&"
    assert data["sentences"][0]["forward"][1]["values"][3][1] == "NaN"
    assert data["sentences"][0]["backward"][1]["values"][4][1][1] == "Infinity"


def test_a_document_without_terms_or_classes():
    """predict's document: no terms, no loss; class names made up from the nodes."""
    document = {"sentences": [_dependency_sentence()]}
    page = render_page(document)
    assert len(_node_elements(page)) == 5 and "class 3" in page
    assert "No sentences" in render_page({"sentences": []})


def test_palette():
    assert class_colours(5) == list(ANCHORS)
    assert class_colours(2) == [ANCHORS[0], ANCHORS[-1]]
    assert class_colours(3) == [ANCHORS[0], ANCHORS[2], ANCHORS[-1]]
    assert len(set(class_colours(7))) == 7


def test_layout_puts_words_in_order_and_parents_above():
    for sentence in _document()["sentences"]:
        place = layout(sentence)
        x, y = place["x"], place["y"]
        readers = sorted((node["position"], k) for k, node in enumerate(sentence["nodes"]) if node["word"] is not None)
        xs = [x[k] for _, k in readers]
        assert xs == sorted(xs) and len(set(xs)) == len(xs)
        for k, node in enumerate(sentence["nodes"]):
            for child in node["children"]:
                assert y[child] > y[k]
            assert 0 < x[k] < place["width"] and 0 < y[k] < place["height"]
    leaves = layout(_binary_sentence())["y"][:3]
    assert len(set(leaves)) == 1  # the words along the bottom


def test_layout_without_positions_takes_the_words_in_tree_order():
    sentence = _binary_sentence()
    for node in sentence["nodes"]:
        del node["position"]
    x = layout(sentence)["x"]
    assert x[0] < x[1] < x[2] and x[1] < x[3] < x[2]


# ---------------------------------------------------------------- in Chromium


def _browser_paths():
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return browser, driver


@pytest.fixture(scope="module")
def chromium():
    """A headless Chromium under selenium, quit at the end of the module."""
    browser, driver_path = _browser_paths()
    missing = [name for name, path in (("chromium", browser), ("chromedriver", driver_path)) if path is None]
    if missing:
        message = f"{' and '.join(missing)} not on PATH (Debian: apt-get install chromium chromium-driver)"
        if os.environ.get("NPCOMP_REQUIRE_BROWSER"):  # CI: a skip would hide the test
            pytest.fail(message)
        pytest.skip(message)
    from selenium import (
        webdriver,  # the test extra: its absence is an error, not a skip
    )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    yield driver
    driver.quit()


@pytest.fixture
def page_in_browser(chromium, tmp_path):
    path = tmp_path / "trees.html"
    path.write_text(render_page(_document()), encoding="utf-8")
    chromium.get(path.as_uri())
    return chromium


def _disc(driver, sentence: int, node: int):
    """The disc of a node: where a reader clicks it."""
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, f'g.node[data-sentence="{sentence}"][data-node="{node}"] circle.disc')


def _texts(driver, sentence: int, node: int) -> list:
    """The texts a node shows, each drawn with a size (not hidden)."""
    return driver.execute_script(
        "var g = document.querySelector(arguments[0]);"
        "return Array.from(g.querySelectorAll('text')).filter(function (t) {"
        "  var box = t.getBBox(); return box.width > 0 && box.height > 0;"
        "}).map(function (t) { return t.textContent; });",
        f'g.node[data-sentence="{sentence}"][data-node="{node}"]',
    )


def _severe(driver) -> list:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def test_the_browser_draws_every_node(page_in_browser):
    from selenium.webdriver.common.by import By

    driver = page_in_browser
    nodes = driver.find_elements(By.CSS_SELECTOR, "g.node")
    assert len(nodes) == sum(NODES)
    assert all(node.is_displayed() for node in nodes)
    # class, probability, word; with the ordinal head the class alone
    assert _texts(driver, 0, 1) == ["2", "0.70", "<b>&"]
    assert _texts(driver, 0, 4) == ["0", "0.70"]
    assert _texts(driver, 1, 2) == ["1", "film"]
    assert _texts(driver, 2, 4) == ["3", "0.50", "good"]
    assert _severe(driver) == []


def test_a_click_fills_the_detail_panel(page_in_browser):
    from selenium.webdriver.common.by import By

    driver = page_in_browser
    _disc(driver, 0, 3).click()
    detail = driver.find_element(By.ID, "detail")
    assert detail.find_element(By.CSS_SELECTOR, "dd.span").text == '<b>& "good"'
    assert "positive (3)" in detail.find_element(By.CSS_SELECTOR, "dd.gold").text
    assert "very positive (4), p = 0.5" in detail.text
    symbols = [row.get_attribute("data-symbol") for row in detail.find_elements(By.CSS_SELECTOR, "[data-symbol]")]
    assert symbols == ["h", "f_l", "eps_h", "delta_o"]
    text = detail.text
    assert "\u03b5" in text and "\u03b4" in text and "E1" in text and "reverses 15, 13" in text
    assert "1 of 4 undefined" in text  # f_l's NaN entry
    # the full vector is behind a toggle
    h_row = detail.find_element(By.CSS_SELECTOR, '[data-symbol="h"]')
    full = h_row.find_element(By.TAG_NAME, "pre")
    assert not full.is_displayed()
    h_row.find_element(By.TAG_NAME, "summary").click()
    assert full.is_displayed() and len(full.text.split()) == 8
    # at a leaf, f_l is undefined
    _disc(driver, 0, 0).click()
    assert driver.find_element(By.CSS_SELECTOR, "#detail dd.span").text == "not"
    f_row = driver.find_element(By.CSS_SELECTOR, '#detail [data-symbol="f_l"]')
    assert "not defined at this node" in f_row.text
    assert _severe(driver) == []


def test_the_ordinal_head_and_hovering(page_in_browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    driver = page_in_browser
    node = driver.find_element(By.CSS_SELECTOR, 'g.node[data-sentence="1"][data-node="3"]')
    ActionChains(driver).move_to_element(node).perform()
    detail = driver.find_element(By.ID, "detail")
    assert detail.find_element(By.CSS_SELECTOR, "dd.span").text == "a slow film ."
    assert "P(label > k)" in detail.text and ", p =" not in detail.text


def test_the_screenshot_is_not_blank(page_in_browser):
    image_module = pytest.importorskip("PIL.Image", reason="pillow (the plot extra) is absent")
    driver = page_in_browser
    png = driver.get_screenshot_as_png()
    image = image_module.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 20
    # the palette's discs are on screen: its darkest red appears
    red = tuple(int(ANCHORS[0][i : i + 2], 16) for i in (1, 3, 5))
    assert any(colour == red for _, colour in colours)


# ---------------------------------------------------------------- npcomp predict --html

SIZES = (40, 20, 20)


_small_splits = synthetic_of_size(SIZES)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A one-epoch N-ary Tree-LSTM on a small synthetic treebank."""
    run_dir = tmp_path_factory.mktemp("page") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", _small_splits)
        patch.setattr(sys, "stdout", io.StringIO())
        assert (
            main(
                [
                    "train",
                    "--task",
                    "synthetic",
                    "--model",
                    "treelstm-nary",
                    "--dim",
                    "4",
                    "--embedding-dim",
                    "4",
                    "--epochs",
                    "1",
                    "--quiet",
                    "--no-baseline",
                    "--out",
                    str(run_dir),
                ]
            )
            == 0
        )
    return run_dir


def test_predict_writes_the_page(tiny_run, tmp_path, capsys, monkeypatch):
    lines = "(3 (2 it) (3 (2 is) (3 good)))\n(1 (1 <b>&) (2 film))\n"
    page = tmp_path / "trees.html"
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    assert main(["predict", "--run", str(tiny_run), "--html", str(page)]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 2 and str(page) in captured.err
    text = page.read_text(encoding="utf-8")
    assert sorted(_node_elements(text)) == [(0, n) for n in range(5)] + [(1, n) for n in range(3)]
    assert "&lt;b&gt;&amp;" in text and "<b>&" not in text and "very positive" in text
    assert [p.name for p in tmp_path.iterdir()] == ["trees.html"]  # no temporary left
    data = json.loads(re.search(r'id="document">(.*?)</script>', text, re.DOTALL).group(1))
    root = data["sentences"][0]["nodes"][-1]
    assert root["label"] == 3 and root["span"] == "it is good"
    assert [node["position"] for node in data["sentences"][0]["nodes"]] == [0, 1, 2, None, None]
    assert math.isclose(sum(root["probabilities"]), 1.0, abs_tol=1e-4)

    # an existing page is refused, before any work, and left as it was
    monkeypatch.setattr(sys, "stdin", io.StringIO("(2 (2 a) (2 b))\n"))
    assert main(["predict", "--run", str(tiny_run), "--html", str(page)]) == 1
    captured = capsys.readouterr()
    assert "already exists" in captured.err and "--overwrite" in captured.err
    assert captured.out == "" and page.read_text(encoding="utf-8") == text
    monkeypatch.setattr(sys, "stdin", io.StringIO("(2 (2 a) (2 b))\n"))
    assert main(["predict", "--run", str(tiny_run), "--html", str(page), "--overwrite"]) == 0
    assert len(_node_elements(page.read_text(encoding="utf-8"))) == 3


def test_predict_overwrite_needs_html(tiny_run, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("good\n"))
    assert main(["predict", "--run", str(tiny_run), "--overwrite"]) == 2
    assert "--html" in capsys.readouterr().err


def test_predict_html_refuses_a_sick_run(tmp_path, capsys, monkeypatch):
    """Pairs have no page; said before stdin is read."""
    import npcomp.runfiles.model_files

    monkeypatch.setattr(npcomp.runfiles.model_files, "load_model", lambda run: (None, None, {"task": "sick"}, None))
    monkeypatch.setattr(sys, "stdin", io.StringIO("a\tb\n"))
    assert main(["predict", "--run", str(tmp_path), "--html", str(tmp_path / "p.html")]) == 2
    err = capsys.readouterr().err
    assert "--html" in err and "sick" in err and not (tmp_path / "p.html").exists()


# ---------------------------------------------------------------- explain's own page

README_TREE = "(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))"


@pytest.fixture(scope="module")
def slstm_page(tmp_path_factory):
    """npcomp explain's page of the S-LSTM on the README's tree, with the
    per-node state checks; and one of the tree whose every left child is a
    leaf (warned about)."""
    folder = tmp_path_factory.mktemp("slstm")
    pages = {}
    for name, tree in (("readme", README_TREE), ("leaves", "(3 (2 not) (3 (3 very) (4 good)))")):
        path = folder / f"{name}.html"
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "stdout", io.StringIO())
            assert main(["explain", "--model", "slstm", "--check-states", "--html", str(path), tree]) == 0
        pages[name] = path
    return pages


def _click(driver, page, node: int):
    from selenium.webdriver.common.by import By

    driver.get(page.as_uri())
    _disc(driver, 0, node).click()
    return driver.find_element(By.ID, "detail")


def test_symbols_are_set_as_the_paper_sets_them(chromium, slstm_page):
    """f^L is f with a superscript L (no caret); eps_h an epsilon with a
    subscript; no symbol or part label shows a caret, tilde or underscore."""
    from selenium.webdriver.common.by import By

    detail = _click(chromium, slstm_page["readme"], 6)
    f_left = detail.find_element(By.CSS_SELECTOR, '[data-symbol="f^L"] .sym')
    assert f_left.text.replace("\n", "") == "fL"
    assert f_left.find_element(By.TAG_NAME, "sup").text == "L"
    shown = [sym.text for sym in detail.find_elements(By.CSS_SELECTOR, ".sym, .part .label")]
    assert shown and not any(mark in text for text in shown for mark in "^~_")
    eps_h = detail.find_element(By.CSS_SELECTOR, '[data-symbol="eps_h"] .sym')
    assert eps_h.text.startswith("\u03b5") and eps_h.find_element(By.TAG_NAME, "sub").text == "h"
    assert _severe(chromium) == []


def test_each_erratum_shows_its_text(chromium, slstm_page):
    from selenium.webdriver.common.by import By

    detail = _click(chromium, slstm_page["readme"], 5)  # "very good", a right child
    row = detail.find_element(By.CSS_SELECTOR, '.backward [data-symbol="eps_c"]')
    badges = [badge.text for badge in row.find_elements(By.CSS_SELECTOR, ".erratum")]
    assert badges == ["Z1", "Z3"]
    texts = row.find_elements(By.CSS_SELECTOR, ".erratum-text")
    # the page cites the copy installed with the package (npcomp/study/errata_pages/)
    assert "Eq. (14) prints eps_{t+1}^h" in texts[0].text
    assert "errata_pages/cells/slstm.md" in texts[0].text
    assert "tanh' at c_t" in texts[1].text


def test_the_parts_of_a_term_are_drawn(chromium, slstm_page):
    """At the leaf "not": eps_c as ten parts, the zero ones with their
    reason (c^L = 0: leaf), nothing reading it; a bar per part that is not 0."""
    from selenium.webdriver.common.by import By

    detail = _click(chromium, slstm_page["readme"], 0)
    box = detail.find_element(By.CSS_SELECTOR, '[data-parts="eps_c"]')
    assert "= the sum of 10 parts" in box.text
    assert "nothing reads it here: leaf" in box.text
    parts = box.find_elements(By.CSS_SELECTOR, ".part")
    assert len(parts) == 10
    zero = [part.text for part in parts if "zero" in part.get_attribute("class")]
    assert any("0: c^L = 0: leaf" in text for text in zero)
    bars = box.find_elements(By.CSS_SELECTOR, ".part .fill")
    assert len(bars) == 10 - len(zero) and all(bar.size["width"] > 0 for bar in bars)
    assert _severe(chromium) == []


def test_the_state_checks_and_warnings_are_shown(chromium, slstm_page):
    from selenium.webdriver.common.by import By

    detail = _click(chromium, slstm_page["readme"], 2)
    states = detail.find_elements(By.CSS_SELECTOR, ".states .state")
    assert [state.get_attribute("data-term") for state in states] == ["eps_h", "eps_c"]
    assert not detail.find_elements(By.CSS_SELECTOR, ".state.fail")
    assert not chromium.find_elements(By.CSS_SELECTOR, ".warnings")
    chromium.get(slstm_page["leaves"].as_uri())
    warnings = chromium.find_element(By.CSS_SELECTOR, ".warnings").text
    assert "cell.W.ci.L" in warnings and "eps_c's parts" in warnings
