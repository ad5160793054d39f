"""The page `tokbench explore` serves: a text box, a choice of the run's tokenizers, every chosen tokenizer's
pieces, and two tokenizers compared.

One self-contained HTML document (inline style and hand-written script; no external asset, no CDN) that
talks to the server it came from: ``GET api/tokenizers`` once, then ``POST api/encode`` and ``POST api/diff``
with JSON bodies as the text or the choice changes (``benchmarks.report.explore_api`` answers them).  No
tokenizer runs in the browser.

Element hooks for tests and pages (``data-role``): ``input`` (the textarea), ``tokenizers`` (a ``select
multiple``, one option per tokenizer, value = its label), ``all`` and ``none`` (buttons), ``status``
(``data-state``: ``loading``, ``ready``, ``error``), ``totals``, ``rows`` (one ``tr[data-tokenizer]`` per
chosen tokenizer, with ``data-family``, ``data-format``, ``data-tokens``), ``piece`` (``data-id``,
``data-start``, ``data-end``; its id also shown below it as ``.tbe-id``), ``diff-a``, ``diff-b``,
``diff-summary``, ``diff-rows`` (rows ``[data-side=a|b]`` holding ``mark[data-offset]``, one per boundary
only that side has), ``diff-words`` (one row per differing word).
"""

from __future__ import annotations

from html import escape
from string import Template

from benchmarks.report.fonts import MONOSPACE, SANS_SERIF

#: milliseconds the page waits after the last keystroke before it asks the server again
TYPING_PAUSE_MS = 250
#: differing words listed in the comparison (the answer holds them all)
WORDS_SHOWN = 100


def explore_page(run_name: str) -> str:
    """The page for a run named ``run_name`` (shown in its title)."""
    title = f"tokbench explore: {run_name}"
    script = _SCRIPT.replace("TYPING_PAUSE_MS", str(TYPING_PAUSE_MS)).replace("WORDS_SHOWN", str(WORDS_SHOWN))
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'  # no favicon request
        f"<title>{escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n"
        '<div class="tbe-top"><div class="tbe-text">'
        '<label for="tbe-input">Text</label>'
        '<textarea id="tbe-input" data-role="input" rows="5" spellcheck="false" '
        'placeholder="Type or paste text: every chosen tokenizer splits it as you type"></textarea>'
        '<p class="tbe-totals" data-role="totals"></p>'
        '<p class="tbe-status" data-role="status" data-state="loading" aria-live="polite">Loading the tokenizers…</p>'
        "</div>"
        '<div class="tbe-choice"><label for="tbe-tokenizers">Tokenizers</label>'
        '<select id="tbe-tokenizers" data-role="tokenizers" multiple size="12"></select>'
        '<p><button type="button" data-role="all">all</button> <button type="button" data-role="none">none</button>'
        ' <span class="tbe-hint">Ctrl/⌘-click to choose several</span></p></div></div>\n'
        '<table class="tbe-rows"><thead><tr><th>tokenizer</th><th>counts</th><th>pieces (id below each)</th></tr>'
        '</thead><tbody data-role="rows"></tbody></table>\n'
        '<h2>Compare two tokenizers</h2>\n'
        '<p><label>A <select data-role="diff-a"></select></label> '
        '<label>B <select data-role="diff-b"></select></label></p>\n'
        '<p class="tbe-summary" data-role="diff-summary"></p>\n'
        '<table class="tbe-rows"><tbody data-role="diff-rows"></tbody></table>\n'
        '<table class="tbe-words"><thead><tr><th>count</th><th>word</th><th>A</th><th>B</th></tr></thead>'
        '<tbody data-role="diff-words"></tbody></table>\n'
        '<p class="tbe-legend">Each piece is the text it covers: ␣ a space, &lt;0xEB&gt; a byte of a character the '
        "piece covers only in part, ∅ a piece covering no text; hover a piece for its id and bytes. In the "
        "comparison, a red bar marks a boundary of the running text that only that tokenizer has, and the words "
        "are those the two split differently when each word is encoded alone, as <code>tokbench diff</code> "
        "compares them.</p>\n"
        f"<script>{script}</script>\n</body>\n</html>\n"
    )


_STYLE = Template("""
body { font-family: $sans; font-size: 14px; margin: 1em 2em; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 1.5em; border-bottom: 1px solid #ddd; }
.tbe-top { display: flex; gap: 2em; align-items: flex-start; flex-wrap: wrap; }
.tbe-text { flex: 1 1 30em; } .tbe-choice { flex: 0 1 22em; }
.tbe-top label { display: block; font-weight: 600; margin-bottom: 0.3em; }
textarea { width: 100%; box-sizing: border-box; font-family: $sans; font-size: 16px; padding: 0.4em; }
select[multiple] { width: 100%; font-family: $sans; }
.tbe-hint { color: #666; font-size: 12px; }
.tbe-status { color: #555; font-size: 12px; } .tbe-status[data-state="error"] { color: #b00; font-weight: 600; }
.tbe-totals { font-variant-numeric: tabular-nums; }
table.tbe-rows, table.tbe-words { border-collapse: collapse; margin: 0.5em 0; }
.tbe-rows th, .tbe-rows td, .tbe-words th, .tbe-words td { padding: 0.3em 0.5em; vertical-align: top; text-align: left;
  border-bottom: 1px solid #eee; }
.tbe-rows th .tbe-facts { display: block; font-weight: normal; color: #666; font-size: 12px; }
.tbe-counts { white-space: pre; font-variant-numeric: tabular-nums; font-size: 12px; color: #333; }
.tbe-pieces { line-height: 1.4; }
.tbe-piece { display: inline-block; vertical-align: top; text-align: center; border-radius: 3px; margin: 1px;
  padding: 0 0.25em; font-family: $mono; white-space: pre; cursor: default; border: 1px solid rgba(0, 0, 0, 0.15); }
.tbe-piece .tbe-id { display: block; font-size: 10px; color: #555; }
.tbe-c0 { background: #dbeafe; } .tbe-c1 { background: #fde2c8; } .tbe-c2 { background: #d9f2d9; }
.tbe-c3 { background: #f6d5ec; } .tbe-c4 { background: #fff3b0; } .tbe-c5 { background: #e2dcf7; }
.tbe-piece:hover, .tbe-piece:focus { outline: 2px solid #c90; }
mark.tbe-cut { display: inline-block; width: 3px; height: 2.4em; vertical-align: top; background: #d22;
  margin: 1px 1px; padding: 0; }
.tbe-words td:nth-child(3), .tbe-words td:nth-child(4) { font-family: $mono; }
.tbe-legend { color: #555; font-size: 12px; max-width: 60em; }
code { font-family: $mono; background: #f2f2f2; padding: 0 0.2em; }
""").substitute(sans=SANS_SERIF, mono=MONOSPACE)

_SCRIPT = r"""
(function () {
  "use strict";
  function role(name) { return document.querySelector('[data-role="' + name + '"]'); }
  function make(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }
  var input = role("input"), choice = role("tokenizers"), status = role("status");
  var diffA = role("diff-a"), diffB = role("diff-b");
  var sent = 0, timer = null;

  function setStatus(state, text) { status.setAttribute("data-state", state); status.textContent = text; }
  function post(path, body) {
    return fetch(path, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)})
      .then(function (response) {
        return response.json().then(function (data) {
          if (!response.ok) { throw new Error(data.error || ("HTTP " + response.status)); }
          return data;
        });
      });
  }
  function chosen() {
    return Array.prototype.filter.call(choice.options, function (o) { return o.selected; })
      .map(function (o) { return o.value; });
  }
  function number(value, digits) {
    return value === null ? "\u2013" : value.toLocaleString("en-US", {maximumFractionDigits: digits});
  }
  function spacedHex(hex) { return hex ? hex.match(/../g).join(" ").toUpperCase() : "(none)"; }

  function piecesCell(row, cuts) {
    var cell = make("td", "tbe-pieces"), marked = {};
    function mark(offset) {
      if (!cuts || !cuts.hasOwnProperty(offset) || marked[offset]) { return; }
      marked[offset] = true;
      var node = make("mark", "tbe-cut");
      node.setAttribute("data-offset", String(offset));
      node.title = "boundary only " + row.label + " has (byte " + offset + ")";
      cell.appendChild(node);
    }
    row.pieces.forEach(function (piece, index) {
      var node = make("span", "tbe-piece tbe-c" + (index % 6));
      node.appendChild(document.createTextNode(piece.text));
      node.appendChild(make("span", "tbe-id", String(piece.id)));
      node.setAttribute("data-role", "piece");
      node.setAttribute("data-id", String(piece.id));
      node.setAttribute("data-start", String(piece.bytes[0]));
      node.setAttribute("data-end", String(piece.bytes[1]));
      node.setAttribute("tabindex", "0");
      node.title = row.label + ": id " + piece.id + " \u00b7 bytes " + spacedHex(piece.hex) + " \u00b7 characters " +
        piece.chars[0] + "\u2013" + piece.chars[1];
      if (piece.bytes[1] > piece.bytes[0]) { mark(piece.bytes[0]); }
      cell.appendChild(node);
      if (piece.bytes[1] > piece.bytes[0]) { mark(piece.bytes[1]); }
    });
    return cell;
  }
  function tableRow(row, cuts, side) {
    var tr = make("tr");
    tr.setAttribute("data-tokenizer", row.label);
    tr.setAttribute("data-family", row.family);
    tr.setAttribute("data-format", row.format);
    tr.setAttribute("data-tokens", String(row.tokens));
    if (side) { tr.setAttribute("data-side", side); }
    var head = make("th", "", (side ? side.toUpperCase() + ": " : "") + row.label);
    head.appendChild(make("span", "tbe-facts", [row.family, row.format].filter(Boolean).join(" \u00b7 ")));
    tr.appendChild(head);
    tr.appendChild(make("td", "tbe-counts", number(row.tokens, 0) + " tokens\n" + number(row.characters, 0) +
      " chars \u00b7 " + number(row.bytes, 0) + " bytes\n" + number(row.bytes_per_token, 2) + " bytes/token"));
    tr.appendChild(piecesCell(row, cuts));
    return tr;
  }
  function asSet(offsets) {
    var set = {};
    offsets.forEach(function (offset) { set[offset] = true; });
    return set;
  }

  function renderDiff(data) {
    var body = role("diff-rows"), words = role("diff-words"), summary = role("diff-summary");
    body.textContent = "";
    words.textContent = "";
    if (data === null) { return; }
    body.appendChild(tableRow(data.rows[0], asSet(data.boundaries.only_a), "a"));
    body.appendChild(tableRow(data.rows[1], asSet(data.boundaries.only_b), "b"));
    var a = data.boundaries.only_a.length, b = data.boundaries.only_b.length;
    summary.textContent = "A (" + data.a + "): " + data.rows[0].tokens + " tokens \u00b7 B (" + data.b + "): " +
      data.rows[1].tokens + " tokens \u00b7 " + (a + b) + " boundaries differ (" + a + " only in A, " + b +
      " only in B) \u00b7 words split differently: " + data.differing_tokens + " of " + data.word_tokens +
      " word tokens (" + (100 * data.token_share).toFixed(1) + "%), " + data.differing_types + " of " +
      data.word_types + " word types (" + (100 * data.type_share).toFixed(1) + "%)";
    data.words.slice(0, WORDS_SHOWN).forEach(function (word) {
      var tr = make("tr");
      tr.appendChild(make("td", "", String(word.count)));
      tr.appendChild(make("td", "", word.word));
      tr.appendChild(make("td", "", word.pieces_a.join("\u2502")));
      tr.appendChild(make("td", "", word.pieces_b.join("\u2502")));
      words.appendChild(tr);
    });
  }
  function fillDiffChoices() {
    var labels = chosen();
    [diffA, diffB].forEach(function (select, index) {
      var keep = select.value;
      select.textContent = "";
      labels.forEach(function (label) {
        var node = make("option", "", label);
        node.value = label;
        select.appendChild(node);
      });
      if (labels.indexOf(keep) >= 0) { select.value = keep; }
      else if (labels.length > index) { select.value = labels[index]; }
    });
  }

  function refresh() {
    var text = input.value, labels = chosen(), number_sent = ++sent;
    if (!labels.length) {
      role("rows").textContent = "";
      renderDiff(null);
      role("diff-summary").textContent = "";
      setStatus("ready", "Choose at least one tokenizer.");
      return;
    }
    setStatus("loading", "Encoding\u2026");
    post("api/encode", {text: text, tokenizers: labels}).then(function (data) {
      if (number_sent !== sent) { return; }  // a later request supersedes this answer
      role("totals").textContent = number(data.characters, 0) + " characters \u00b7 " + number(data.bytes, 0) +
        " UTF-8 bytes";
      var rows = role("rows");
      rows.textContent = "";
      data.rows.forEach(function (row) { rows.appendChild(tableRow(row, null, "")); });
      var a = diffA.value, b = diffB.value;
      if (!text.trim() || !a || !b || a === b) {
        renderDiff(null);
        role("diff-summary").textContent = !text.trim() ? "Type some text to compare two tokenizers." :
          "Choose two different tokenizers.";
        setStatus("ready", "Ready.");
        return null;
      }
      return post("api/diff", {text: text, a: a, b: b}).then(function (diff) {
        if (number_sent !== sent) { return; }
        renderDiff(diff);
        setStatus("ready", "Ready.");
      });
    }).catch(function (error) {
      if (number_sent === sent) { setStatus("error", "Error: " + error.message); }
    });
  }
  function soon() {
    if (timer !== null) { clearTimeout(timer); }
    timer = setTimeout(function () { timer = null; refresh(); }, TYPING_PAUSE_MS);
  }
  function selectAll(on) {
    Array.prototype.forEach.call(choice.options, function (o) { o.selected = on; });
    fillDiffChoices();
    refresh();
  }

  fetch("api/tokenizers").then(function (response) { return response.json(); }).then(function (data) {
    data.tokenizers.forEach(function (tokenizer) {
      var node = make("option", "", tokenizer.label + "  (" + [tokenizer.family, tokenizer.format]
        .filter(Boolean).join(", ") + ")");
      node.value = tokenizer.label;
      node.selected = true;
      choice.appendChild(node);
    });
    fillDiffChoices();
    input.addEventListener("input", soon);
    choice.addEventListener("change", function () { fillDiffChoices(); refresh(); });
    diffA.addEventListener("change", refresh);
    diffB.addEventListener("change", refresh);
    role("all").addEventListener("click", function () { selectAll(true); });
    role("none").addEventListener("click", function () { selectAll(false); });
    refresh();
  }).catch(function (error) { setStatus("error", "Error: cannot list the tokenizers (" + error.message + ")"); });
})();
"""
