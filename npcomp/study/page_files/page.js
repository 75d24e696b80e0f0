(function () {
  "use strict";
  var doc = JSON.parse(document.getElementById("document").textContent);
  var palette = JSON.parse(document.getElementById("palette").textContent);
  var panel = document.getElementById("detail");
  var hint = panel.innerHTML;
  var GREEK = {eps: "\u03b5", epsilon: "\u03b5", delta: "\u03b4", Delta: "\u0394",
    sigma: "\u03c3", alpha: "\u03b1", beta: "\u03b2", gamma: "\u03b3", lambda: "\u03bb",
    theta: "\u03b8", tau: "\u03c4", phi: "\u03c6", psi: "\u03c8", omega: "\u03c9",
    mu: "\u03bc"};
  var LEAD = 6;
  var pinned = null;
  var shown = null;  // the node in the panel: redrawn only when it changes, keeping toggles

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  // the page writes NaN and the infinities as strings: strict JSON has none
  function num(v) {
    if (v === null || v === undefined) { return null; }
    if (typeof v === "string") {
      return v === "Infinity" ? Infinity : v === "-Infinity" ? -Infinity : NaN;
    }
    return Number(v);
  }
  function fmt(v) {
    v = num(v);
    if (v === null) { return "\u2014"; }
    if (isNaN(v)) { return "NaN"; }
    if (!isFinite(v)) { return v > 0 ? "\u221e" : "\u2212\u221e"; }
    if (v === 0) { return "0"; }
    var a = Math.abs(v);
    return (a >= 1e4 || a < 1e-3) ? v.toExponential(2) : String(Number(v.toPrecision(4)));
  }
  function flatten(v, out) {
    if (Array.isArray(v)) { v.forEach(function (x) { flatten(x, out); }); }
    else { out.push(num(v)); }
    return out;
  }
  function shape(v) {
    var s = [];
    while (Array.isArray(v)) { s.push(v.length); v = v[0]; }
    return s;
  }
  function rows(v) {  // the whole value, one line per innermost vector
    if (!Array.isArray(v)) { return fmt(v); }
    if (!v.some(Array.isArray)) { return v.map(fmt).join("  "); }
    return v.map(rows).join("\n");
  }
  // a symbol or a part's label as the paper sets it: eps_h is epsilon with a
  // subscript h, delta_f_l delta with subscript f_l, f^L f with a superscript
  // L, h~ h with a tilde, s^ (a caret with nothing after it) s with a hat,
  // {..} groups; Greek letters by name
  var WORD = /^[A-Za-z]+/, RUN = /^[A-Za-z0-9,'~]+/;
  function group(text, i) {  // [content, next index] of the group at text[i]
    var close = {"{": "}", "[": "]"}[text[i]];
    if (close) {
      var end = text.indexOf(close, i);
      if (end < 0) { end = text.length; }
      return [text[i] === "[" ? text.slice(i, end + 1) : text.slice(i + 1, end), end + 1];
    }
    var run = RUN.exec(text.slice(i));
    return [run ? run[0] : "", i + (run ? run[0].length : 0)];
  }
  function render(text, into) {
    var buffer = "", i = 0;
    function flush() {
      if (buffer) { into.appendChild(document.createTextNode(buffer)); buffer = ""; }
    }
    while (i < text.length) {
      var c = text[i];
      if (c === "^" && (i + 1 === text.length || "_ ".indexOf(text[i + 1]) >= 0)) {
        buffer += "\u0302"; i += 1; continue;           // a hat on what precedes
      }
      if (c === "_" || c === "^") {
        var found = group(text, i + 1), content = found[0], next = found[1];
        if (c === "_") {   // a subscript carries its own sub- and superscripts
          while (next < text.length && "_^".indexOf(text[next]) >= 0 &&
                 next + 1 < text.length && text[next + 1] !== " ") {
            var more = group(text, next + 1);
            content += text[next] + (text[next + 1] === "{" ? "{" + more[0] + "}" : more[0]);
            next = more[1];
          }
        }
        flush();
        var script = el(c === "_" ? "sub" : "sup");
        render(content, script);
        into.appendChild(script);
        i = next;
        continue;
      }
      if (c === "~") { buffer += "\u0303"; i += 1; continue; }     // a tilde over it
      var word = (i === 0 || !/[A-Za-z]/.test(text[i - 1])) ? WORD.exec(text.slice(i)) : null;
      if (word) {
        buffer += GREEK[word[0]] || word[0];
        i += word[0].length;
        continue;
      }
      buffer += c;
      i += 1;
    }
    flush();
  }
  function symbol(text) {
    var span = el("span");
    render(String(text), span);
    return span;
  }
  function className(k) {
    if (k === null || k === undefined) { return "\u2014"; }
    var name = palette.classes[k];
    return (name === undefined ? "class " + k : name) + " (" + k + ")";
  }
  function pair(dl, term, value, cls) {
    dl.appendChild(el("dt", null, term));
    var dd = el("dd", cls, value);
    dl.appendChild(dd);
    return dd;
  }
  function findNode(sentence, id) {
    for (var k = 0; k < sentence.nodes.length; k++) {
      if (sentence.nodes[k].id === id) { return sentence.nodes[k]; }
    }
    return null;
  }

  function probabilities(node) {
    var box = el("div", "probs");
    var values = node.probabilities || [];
    var ordinal = node.probability === null || node.probability === undefined;
    box.appendChild(el("h4", null, ordinal ? "P(label > k)" : "Probabilities"));
    values.forEach(function (p, k) {
      var row = el("div", "bar" + (!ordinal && k === node.predicted ? " chosen" : ""));
      var dot = el("span", "swatch");
      dot.style.width = dot.style.height = "12px";
      dot.style.background = palette.colours[ordinal ? k + 1 : k] || "#fff";
      row.appendChild(dot);
      var track = el("div", "track"), fill = el("div", "fill");
      var x = num(p);
      fill.style.width = (isFinite(x) ? Math.max(0, Math.min(1, x)) * 100 : 0) + "%";
      fill.style.background = dot.style.background;
      track.appendChild(fill);
      row.appendChild(track);
      var label = ordinal ? "> " + k : (palette.classes[k] || "class " + k);
      if (!ordinal && k === node.label) { label += " \u2605"; }
      row.appendChild(el("span", null, label));
      row.appendChild(el("span", "val", fmt(p)));
      box.appendChild(row);
    });
    return box;
  }

  function termRow(term, index) {
    var row = el("div", "term");
    row.setAttribute("data-symbol", term.symbol);
    var head = el("div", "term-head");
    var sym = el("span", "sym");
    sym.title = term.symbol;
    sym.appendChild(symbol(term.symbol));
    head.appendChild(sym);
    if (term.equation) {
      var eq = String(term.equation);
      head.appendChild(el("span", "eq", /^[0-9(]/.test(eq) ? "eq. " + eq : eq));
    }
    var cited = term.node_errata ? term.node_errata[index] : term.erratum;
    var texts = [];
    String(cited || "").split(", ").forEach(function (id) {
      if (!id) { return; }
      var entry = (doc.errata || {})[id];
      var badge = el("span", "erratum", id);
      badge.title = entry ? entry.text + " (" + entry.where + ")" : "erratum " + id;
      head.appendChild(badge);
      if (entry && entry.text) { texts.push([id, entry]); }
    });
    row.appendChild(head);
    texts.forEach(function (pair) {
      var line = el("div", "erratum-text");
      line.appendChild(el("b", null, pair[0] + " "));
      line.appendChild(document.createTextNode(pair[1].text + " "));
      line.appendChild(el("span", "muted", pair[1].where));
      row.appendChild(line);
    });
    var value = (term.values || [])[index];
    var flat = value === undefined ? [] : flatten(value, []);
    var defined = flat.filter(function (x) { return x !== null && !isNaN(x); });
    if (!defined.length) {
      head.appendChild(el("span", "undef", "not defined at this node"));
      return row;
    }
    var squares = defined.reduce(function (s, x) { return s + x * x; }, 0);
    var norm = "\u2016\u00b7\u2016 = " + fmt(Math.sqrt(squares));
    if (defined.length < flat.length) {
      norm += " (" + (flat.length - defined.length) + " of " + flat.length + " undefined)";
    }
    var dims = shape(value);
    if (dims.length) { norm += "  [" + dims.join("\u00d7") + "]"; }
    head.appendChild(el("span", "norm", norm));
    row.appendChild(el("div", "lead",
      flat.slice(0, LEAD).map(fmt).join("  ") + (flat.length > LEAD ? "  \u2026" : "")));
    if (flat.length > LEAD) {
      var more = el("details");
      more.appendChild(el("summary", null, "all " + flat.length + " values"));
      more.appendChild(el("pre", null, rows(value)));
      row.appendChild(more);
    }
    return row;
  }

  function norm(value) {
    var flat = flatten(value, []).filter(function (x) { return x !== null && !isNaN(x); });
    return Math.sqrt(flat.reduce(function (s, x) { return s + x * x; }, 0));
  }
  // a term as the sum of its parts: one row each, a bar as long as its norm
  // (against the largest part's), or why it is 0
  function partsBox(term, index) {
    var box = el("div", "parts");
    box.setAttribute("data-parts", term.symbol);
    var rows = term.parts.filter(function (part) { return part.values[index] !== null; });
    var widest = rows.reduce(function (m, part) {
      return Math.max(m, norm(part.values[index]));
    }, 0) || 1;
    var head = el("div", "parts-head");
    head.appendChild(el("span", null, "= the sum of " + term.parts.length + " parts"));
    box.appendChild(head);
    if (term.unread && term.unread[index]) {
      box.appendChild(el("div", "unread", "nothing reads it here: " + term.unread[index]));
    }
    rows.forEach(function (part) {
      var row = el("div", "part");
      var label = el("span", "label");
      label.title = part.label;
      label.appendChild(symbol(part.label));
      row.appendChild(label);
      row.appendChild(el("span", "eq", part.equation));
      var why = part.zero[index];
      if (why) {
        row.classList.add("zero");
        row.appendChild(el("span", "why", "0: " + why));
      } else {
        var size = norm(part.values[index]);
        var track = el("span", "track"), fill = el("span", "fill");
        fill.style.width = (100 * size / widest) + "%";
        track.appendChild(fill);
        row.appendChild(track);
        row.appendChild(el("span", "val", fmt(size)));
      }
      box.appendChild(row);
    });
    return box;
  }

  function terms(title, list, index, parts) {
    var box = el("div", "terms " + title.toLowerCase());
    box.appendChild(el("h4", null, title));
    list.forEach(function (term) {
      var row = termRow(term, index);
      var split = (parts || []).filter(function (p) { return p.symbol === term.symbol; })[0];
      if (split && (term.values || [])[index] !== null) {
        row.appendChild(partsBox(split, index));
      }
      box.appendChild(row);
    });
    return box;
  }

  // the node's error terms against finite differences in its states, if checked
  function stateChecks(sentenceIndex, node) {
    var found = (doc.state_checks || []).filter(function (check) {
      return check.sentence === sentenceIndex && check.node === node.id;
    });
    if (!found.length) { return null; }
    var box = el("div", "states");
    box.appendChild(el("h4", null, "Against finite differences in the node's states"));
    found.forEach(function (check) {
      var bad = !(check.error <= doc.tolerance);
      var row = el("div", "state" + (bad ? " fail" : ""));
      row.setAttribute("data-term", check.term);
      row.appendChild(symbol(check.term));
      row.appendChild(el("span", "val", " rel. error " + fmt(check.error) +
                         (bad ? " \u2014 disagrees" : "")));
      box.appendChild(row);
      if (bad) { vectors(box, check.analytic, check.numeric); }
    });
    return box;
  }

  // the backward's values against the finite differences, one line each
  function vectors(box, analytic, numeric) {
    var numbers = function (values) { return "[" + (values || []).map(fmt).join(", ") + "]"; };
    box.appendChild(el("div", "vectors", "backward            " + numbers(analytic)));
    box.appendChild(el("div", "vectors", "finite differences  " + numbers(numeric)));
  }

  // the node's own backward checked with the error from above held fixed
  function localChecks(sentenceIndex, node) {
    var found = (doc.local_checks || []).filter(function (check) {
      return check.sentence === sentenceIndex && check.node === node.id;
    });
    if (!found.length) { return null; }
    var box = el("div", "locals");
    box.appendChild(el("h4", null, "Local checks: this node's backward, the error from " +
                       "above held fixed"));
    found.forEach(function (check) {
      var bad = !(check.error <= doc.tolerance);
      var row = el("div", "local" + (bad ? " fail" : ""));
      row.setAttribute("data-term", check.term);
      row.appendChild(el("span", null, check.child === null ? check.term + " (its own)" :
                         check.term + " to node " + check.child + " "));
      row.appendChild(el("span", "val", " rel. error " + fmt(check.error) +
                         (bad ? " \u2014 fails" : "")));
      box.appendChild(row);
      if (bad) {
        box.appendChild(el("div", "muted", check.quantity + " (" + check.equation + ")"));
        vectors(box, check.analytic, check.numeric);
      }
    });
    return box;
  }

  function show(where) {
    if (shown === where || (shown && where && shown[0] === where[0] && shown[1] === where[1])) {
      return;
    }
    shown = where;
    if (!where) { panel.innerHTML = hint; return; }
    var sentence = doc.sentences[where[0]];
    var node = sentence && findNode(sentence, where[1]);
    if (!node) { panel.innerHTML = hint; return; }
    var index = sentence.nodes.indexOf(node);
    panel.replaceChildren();
    panel.appendChild(el("h3", null, "Sentence " + (where[0] + 1) + ", node " + node.id));
    var dl = el("dl");
    pair(dl, "span", node.span, "span");
    pair(dl, "word", node.word === null || node.word === undefined ? "\u2014" : node.word, "word");
    pair(dl, "gold", node.label === null || node.label === undefined ? "unlabelled" :
      className(node.label), "gold");
    var predicted = className(node.predicted);
    if (node.probability !== null && node.probability !== undefined) {
      predicted += ", p = " + fmt(node.probability);
    }
    pair(dl, "predicted", predicted, "predicted");
    if ("loss" in node) {
      pair(dl, "loss", node.loss === null ? "\u2014 (unlabelled)" : fmt(node.loss), "loss");
    }
    var kids = node.children || [];
    pair(dl, "children", kids.length ? kids.join(", ") : "none (a leaf)", "children");
    panel.appendChild(dl);
    panel.appendChild(probabilities(node));
    if (sentence.forward && sentence.forward.length) {
      panel.appendChild(terms("Forward", sentence.forward, index));
    }
    if (sentence.backward && sentence.backward.length) {
      panel.appendChild(terms("Backward", sentence.backward, index, sentence.parts));
    }
    var locals = localChecks(where[0], node);
    if (locals) { panel.appendChild(locals); }
    var states = stateChecks(where[0], node);
    if (states) { panel.appendChild(states); }
  }

  function below(sentence, id) {  // the node's subtree, itself included
    var out = [id], node = findNode(sentence, id);
    (node ? node.children || [] : []).forEach(function (kid) {
      out = out.concat(below(sentence, kid));
    });
    return out;
  }
  function mark(where) {
    document.querySelectorAll("g.node.in-span, g.node.pinned").forEach(function (g) {
      g.classList.remove("in-span", "pinned");
    });
    if (!where) { return; }
    var svg = document.querySelector("#sentence-" + where[0] + " svg");
    below(doc.sentences[where[0]], where[1]).forEach(function (id) {
      var g = svg.querySelector('g.node[data-node="' + id + '"]');
      if (g) { g.classList.add("in-span"); }
    });
    var own = svg.querySelector('g.node[data-node="' + where[1] + '"]');
    if (own) { own.classList.add("pinned"); }
  }
  function locate(g) {
    return [Number(g.getAttribute("data-sentence")), Number(g.getAttribute("data-node"))];
  }
  function toggle(g) {
    var where = locate(g);
    var same = pinned && pinned[0] === where[0] && pinned[1] === where[1];
    pinned = same ? null : where;
    mark(pinned);
    show(pinned || where);
  }

  // the first failing check's node, pinned from the start: its panel shows the vectors
  if (doc.verdict && doc.verdict.node !== null && doc.verdict.node !== undefined &&
      doc.verdict.sentence !== null && doc.verdict.sentence !== undefined) {
    pinned = [doc.verdict.sentence, doc.verdict.node];
    mark(pinned);
    show(pinned);
  }

  document.querySelectorAll("g.node").forEach(function (g) {
    g.addEventListener("mouseenter", function () { show(locate(g)); });
    g.addEventListener("mouseleave", function () { show(pinned); });
    g.addEventListener("focus", function () { show(locate(g)); });
    g.addEventListener("click", function () { toggle(g); });
    g.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); toggle(g); }
    });
  });
})();
