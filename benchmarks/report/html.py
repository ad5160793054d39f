"""report.html: the report's blocks (``benchmarks.report.document``) as one self-contained page.

The same blocks as report.md, so the page holds the same tables, cells, notes, plots and findings.  Its
style and script are inline and the plots are inlined SVG: the file opens from ``file://`` with no
network.  What the page adds to the Markdown:

* a navigation list of the sections (and their subsections);
* sortable tables: clicking a column header sorts the rows by the cell's number (``data-value``, the value
  itself, never parsed from the text with its interval), a second click reverses; cells without a
  value (``–``) always go last; a column without numbers sorts by its text;
* a filter by language, by tokenizer family and by file format that applies to every table: columns and rows
  carry ``data-language`` / ``data-family`` / ``data-format`` (a table about one language carries it on the
  table); a row's family and format come from its results' kind (``benchmarks.report.explorer.tokenizer_facts``:
  a family is who made a tokenizer and how, a format how it is stored), and the family and format filters
  also apply to the token explorer's rows;
* the markers (†, ‡, §) explained on hover (``title``: the note of that table that defines them);
* best cells highlighted where report.md bolds them (``<strong>`` in a cell with class ``best``);
* the splits section as the token explorer (``benchmarks.report.explorer``) when the section carries its
  payload, with the Markdown's tables folded below it.

Deterministic: the same blocks and plot files give the same bytes.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from pathlib import Path
from string import Template

from benchmarks.report.document import (
    PLOTS_DIR,
    TABLES_DIR,
    Block,
    BulletList,
    Code,
    Details,
    Emph,
    Figure,
    Heading,
    Inline,
    LineBreak,
    Link,
    Notes,
    Paragraph,
    Quote,
    SimpleTable,
    SkippedFigure,
    Splits,
    Strong,
    TableBlock,
    Verbatim,
    plain_text,
    text,
)
from benchmarks.report.explorer import tokenizer_facts
from benchmarks.report.fonts import MONOSPACE, SANS_SERIF
from benchmarks.report.formats import MISSING, cell_texts
from benchmarks.report.tables import BASELINE_MARK, INCLUDES_ZERO_MARK, REACHED_MARK, UNK_MARK, Table

#: what a marker means when a table has no note for it (the reading guide's words)
MARKER_HELP = {
    REACHED_MARK: "the vocabulary size the tokenizer reached, when it differs from the size requested",
    UNK_MARK: "not ranked: too many of its tokens are <unk>",
    BASELINE_MARK: "not ranked: a baseline on boundary metrics",
    INCLUDES_ZERO_MARK: "the confidence interval includes 0",
}


def esc(value: str) -> str:
    return html.escape(value, quote=True)


def inline_html(inline: Inline) -> str:
    if isinstance(inline, str):
        return esc(inline)
    if isinstance(inline, Verbatim):
        return esc(inline.text)
    if isinstance(inline, Code):
        return f"<code>{esc(inline.text)}</code>"
    if isinstance(inline, Emph):
        return f"<em>{inline_html(inline.content)}</em>"
    if isinstance(inline, Strong):
        return f"<strong>{inline_html(inline.content)}</strong>"
    if isinstance(inline, Link):
        return f'<a href="{esc(inline.href)}">{inline_html(inline.content)}</a>'
    if isinstance(inline, LineBreak):
        return "<br>"
    return "".join(inline_html(part) for part in inline)


def _number(value: float | None) -> str:
    """A ``data-value`` attribute ("" for no value: sorted last)."""
    if value is None or not math.isfinite(value):
        return ""
    return repr(float(value))


class Page:
    """The page being written: heading ids (unique, from the text) and the navigation they make."""

    def __init__(self, plots_dir: Path) -> None:
        self.plots_dir = plots_dir
        self.ids: dict[str, int] = {}
        self.navigation: list[tuple[int, str, str]] = []  # (level, id, text)

    def heading_id(self, value: str) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-") or "section"
        count = self.ids.get(slug, 0)
        self.ids[slug] = count + 1
        return slug if count == 0 else f"{slug}-{count + 1}"

    def block(self, block: Block) -> str:
        if isinstance(block, Heading):
            label = plain_text(block.content)
            anchor = self.heading_id(label)
            if block.level in (2, 3):
                self.navigation.append((block.level, anchor, label))
            return f'<h{block.level} id="{anchor}">{inline_html(block.content)}</h{block.level}>'
        if isinstance(block, Paragraph):
            return f"<p>{inline_html(block.content)}</p>"
        if isinstance(block, Quote):
            return f'<blockquote class="warning">{inline_html(block.content)}</blockquote>'
        if isinstance(block, BulletList):
            return "<ul>" + "".join(f"<li>{inline_html(item)}</li>" for item in block.items) + "</ul>"
        if isinstance(block, Notes):
            lines = [f'<p class="note"><em>Note: {inline_html(note)}</em></p>' for note in block.notes]
            lines += [f'<p class="links">{inline_html(block.trailer)}</p>'] if block.trailer is not None else []
            return "\n".join(lines)
        if isinstance(block, TableBlock):
            return table_block(block.table)
        if isinstance(block, SimpleTable):
            return simple_table(block)
        if isinstance(block, Figure):
            return self.figure(block)
        if isinstance(block, SkippedFigure):
            return (f'<p class="skipped"><em>Plot skipped ({esc(block.caption)}): '
                    f"{inline_html(text(block.reason))}.</em></p>")  # fmt: skip
        if isinstance(block, Details):
            inner = "\n".join(self.block(child) for child in block.blocks)
            return f"<details><summary>{esc(block.summary)}</summary>\n{inner}\n</details>"
        if isinstance(block, Splits):
            return self.splits(block)
        raise TypeError(f"internal error: not a report block: {block!r}")

    def figure(self, block: Figure) -> str:
        path = self.plots_dir / f"{block.stem}.svg"
        svg = path.read_text(encoding="utf-8")
        svg = svg[svg.index("<svg"):]  # drop the XML declaration and doctype: the SVG is inline
        links = " · ".join(f'<a href="{PLOTS_DIR}/{block.stem}.{kind}">{kind.upper()}</a>' for kind in block.formats)
        findings = f'<p class="findings">{esc(" ".join(block.sentences))}</p>' if block.sentences else ""
        return (f'<figure class="plot" id="plot-{esc(block.stem)}">{svg}<figcaption><em>{esc(block.caption)}.</em>'
                f"{' ' + links if links else ''}</figcaption>{findings}</figure>")  # fmt: skip

    def splits(self, block: Splits) -> str:
        parts = []
        if block.explorer is not None:
            from benchmarks.report.explorer import explorer_html

            parts.append(explorer_html(block.explorer))
        tables = []
        for heading, examples in block.groups:
            tables.append(f"<h4>{inline_html(heading)}</h4>")
            for example in examples:
                tables.append(f"<p><strong>{esc(example.where)}</strong>: {esc(example.text)}"
                              f"{' …' if example.cut else ''}</p>")  # fmt: skip
                rows = [[row.label, str(row.count), Code(row.pieces)] for row in example.rows]
                values = [[None, float(row.count), None] for row in example.rows]
                facts = [{"language": example.language, "family": row.family} for row in example.rows]
                tables.append(simple_table(SimpleTable(["tokenizer", "tokens", "pieces"], rows, "lrl", values, facts)))
        notes = [f'<p class="note"><em>Note: {esc(note)}</em></p>' for note in block.notes]
        if block.explorer is not None:
            parts.append("<details><summary>the same as tables</summary>\n" + "\n".join(tables) + "\n</details>")
        else:
            parts += tables
        return "\n".join(parts + notes)


def _marker_titles(table: Table) -> dict[str, str]:
    """Each marker's explanation: the note of the table that starts with it, else ``MARKER_HELP``."""
    titles = dict(MARKER_HELP)
    for note in table.notes:
        for marker in titles:
            if note.startswith(marker):
                titles[marker] = note.replace("`", "")
    return titles


def _with_marker_titles(value: str, titles: dict[str, str]) -> str:
    for marker, title in titles.items():
        value = value.replace(marker, f'<abbr class="marker" title="{esc(title)}">{marker}</abbr>')
    return value


#: a table of more rows than this, or of one row per language, gets a find box (the rows whose first cell holds
#: what is typed stay shown)
FIND_ROWS = 30


def table_block(table: Table) -> str:
    """A metric table: caption, the cells (value, interval, reached size, markers), notes, file links."""
    titles = _marker_titles(table)
    languages: dict[str, str] = {}
    if table.column_header == "language":
        firsts = table.cells.drop_duplicates("column").set_index("column")["language"]
        languages = {column: str(firsts[column]) for column in table.columns if column in firsts.index}
    table_language = ""
    if table.column_header != "language" and table.cells["language"].nunique() == 1:
        table_language = str(table.cells["language"].iloc[0])
    kinds = table.cells.drop_duplicates("tokenizer").set_index("tokenizer")["kind"]
    header = [f'<th scope="col">{esc(table.corner)}</th>']
    for column, label in zip(table.columns, table.column_labels, strict=True):
        language = languages.get(column, "")
        attribute = f' data-language="{esc(language)}"' if language else ""
        header.append(f'<th scope="col" class="num"{attribute}>{esc(label)}</th>')
    body = []
    rules = set(table.rules_before)
    for index, tokenizer in enumerate(table.tokenizers):
        cells = [f'<th scope="row">{esc(tokenizer)}</th>']
        for column in table.columns:
            cell = table.cell(tokenizer, column)
            value, interval, reached = cell_texts(cell, lambda v: f"<strong>{v}</strong>", esc)
            content = _with_marker_titles(value, titles)
            content += f' <span class="ci">{interval}</span>' if interval else ""
            content += f' <span class="reached">{_with_marker_titles(reached, titles)}</span>' if reached else ""
            number = None if cell is None else float(cell["value"])
            classes = ["num", *(["best"] if cell is not None and bool(cell["best"]) else [])]
            language = languages.get(column, "")
            attribute = f' data-language="{esc(language)}"' if language else ""
            cells.append(f'<td class="{" ".join(classes)}" data-value="{_number(number)}"{attribute}>{content}</td>')
        rule = ' class="rule"' if index in rules else ""
        facts = tokenizer_facts(str(kinds.get(tokenizer, "")))
        body.append(f'<tr{rule}{_fact_attributes(facts)} data-tokenizer="{esc(tokenizer)}">{"".join(cells)}</tr>')
    language_attribute = f' data-language="{esc(table_language)}"' if table_language else ""
    notes = "".join(f'<p class="note"><em>Note: {inline_html(text(note))}</em></p>' for note in table.notes)
    links = (f'<p class="links"><a href="{TABLES_DIR}/{table.slug}.tex">LaTeX</a> · '
             f'<a href="{TABLES_DIR}/{table.slug}.csv">CSV</a></p>')  # fmt: skip
    find = (f'<p class="find"><input type="search" class="table-find" placeholder="find a {esc(table.row_header)}" '
            f'aria-label="find a {esc(table.row_header)} in this table"></p>'
            if len(table.tokenizers) > FIND_ROWS or table.row_header == "language" else "")  # fmt: skip
    return (f'<div class="table-block"{language_attribute} data-slug="{esc(table.slug)}">'
            f"<p class=\"caption\"><em>{inline_html(text(table.caption))}</em></p>{find}"
            f'<div class="scroll"><table class="report-table">'
            f"<thead><tr>{''.join(header)}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            f"{notes}{links}</div>")  # fmt: skip


def simple_table(block: SimpleTable) -> str:
    numeric = ' class="num"'
    header = "".join(f'<th scope="col"{numeric if align == "r" else ""}>{inline_html(cell)}</th>'
                     for cell, align in zip(block.header, block.align, strict=True))  # fmt: skip
    body = []
    for index, row in enumerate(block.rows):
        values = block.values[index] if block.values is not None else [None] * len(row)
        cells = []
        for cell, value, align in zip(row, values, block.align, strict=True):
            attribute = f' data-value="{_number(value)}"' if value is not None or _is_missing(cell) else ""
            css = ' class="num"' if align == "r" else ""
            cells.append(f"<td{css}{attribute}>{inline_html(cell)}</td>")
        facts = dict(block.row_facts[index]) if block.row_facts is not None else {}
        if "family" in facts:  # a section gives the row's results' kind: its family and format for the filters
            facts.update(tokenizer_facts(facts["family"]))
        body.append(f"<tr{_fact_attributes(facts)}>{''.join(cells)}</tr>")
    return (f'<div class="scroll"><table class="report-table"><thead><tr>{header}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")  # fmt: skip


def _fact_attributes(facts: dict[str, str]) -> str:
    """A row's filter facts as ``data-*`` attributes, by name (an empty fact gets none)."""
    return "".join(f' data-{name}="{esc(value)}"' for name, value in sorted(facts.items()) if value)


def _is_missing(cell: Inline) -> bool:
    return isinstance(cell, str) and cell == MISSING


def to_html(blocks: Sequence[Block], plots_dir: Path) -> str:
    """report.html from the report's blocks and its drawn plots (``plots_dir``: where the SVG files are)."""
    page = Page(plots_dir)
    body = "\n".join(page.block(block) for block in blocks)
    title = next((plain_text(block.content) for block in blocks if isinstance(block, Heading)), "tokbench report")
    navigation = []
    for level, anchor, label in page.navigation:
        navigation.append(f'<li class="level-{level}"><a href="#{anchor}">{esc(label)}</a></li>')
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        '<nav id="navigation"><div id="filters"><p class="nav-title">Filter every table</p>'
        '<fieldset data-filter="language"><legend>language</legend></fieldset>'
        '<fieldset data-filter="family"><legend>tokenizer family</legend></fieldset>'
        '<fieldset data-filter="format"><legend>file format</legend></fieldset></div>'
        f'<p class="nav-title">Sections</p><ul>{"".join(navigation)}</ul></nav>\n'
        f'<main id="report">\n{body}\n</main>\n<script>{_SCRIPT}</script>\n</body>\n</html>\n'
    )


def page_table_count(page: str) -> int:
    """How many report tables a page holds (the explorer's own tables are not report tables)."""
    return page.count('<table class="report-table">')


__all__ = ["MARKER_HELP", "page_table_count", "to_html"]

_STYLE = Template("""
body { font-family: $sans; font-size: 14px; margin: 0; color: #222; }
nav#navigation { position: fixed; top: 0; left: 0; bottom: 0; width: 250px; overflow-y: auto; padding: 0.8em;
  background: #f6f7f9; border-right: 1px solid #ddd; box-sizing: border-box; font-size: 13px; }
nav ul { list-style: none; padding: 0; margin: 0 0 1em 0; }
nav li.level-3 { padding-left: 1em; font-size: 12px; }
nav li.level-2 { margin-top: 0.3em; font-weight: 600; }
nav a { color: #1a4f8b; text-decoration: none; }
.nav-title { font-weight: 700; margin: 0.2em 0 0.4em 0; }
nav fieldset { border: 1px solid #ccd; margin: 0 0 0.6em 0; padding: 0.3em 0.5em; }
nav fieldset label { display: inline-block; margin-right: 0.6em; white-space: nowrap; }
main#report { margin-left: 270px; padding: 1em 2em 4em 1em; max-width: 1400px; }
h1 { font-size: 24px; } h2 { font-size: 20px; border-bottom: 1px solid #ddd; margin-top: 2em; } h3 { font-size: 16px; }
.scroll { overflow-x: auto; }
table.report-table { border-collapse: collapse; margin: 0.5em 0; font-variant-numeric: tabular-nums; }
table.report-table th, table.report-table td { padding: 0.2em 0.6em; border-bottom: 1px solid #e4e4e4;
  text-align: left; vertical-align: top; }
table.report-table .num { text-align: right; }
table.report-table thead th { cursor: pointer; background: #eef1f5; position: sticky; top: 0; user-select: none; }
table.report-table thead th[data-sorted="ascending"]::after { content: " \\25B2"; font-size: 10px; }
table.report-table thead th[data-sorted="descending"]::after { content: " \\25BC"; font-size: 10px; }
table.report-table tr.rule > * { border-top: 2px solid #999; }
table.report-table td.best { background: #e3f4e1; }
table.report-table .ci { color: #666; font-size: 12px; white-space: nowrap; }
table.report-table .reached { color: #8a5a00; font-size: 12px; }
abbr.marker { text-decoration: underline dotted; cursor: help; }
.caption { margin-bottom: 0.2em; }
.note { margin: 0.1em 0; color: #444; font-size: 13px; }
.links { font-size: 12px; }
.filtered-out, .found-out { display: none !important; }
input.table-find { font-size: 13px; padding: 0.2em 0.4em; width: 18em; }
figure.plot { margin: 1em 0; } figure.plot svg { max-width: 100%; height: auto; }
.findings { background: #f7f7ef; border-left: 3px solid #c9b458; padding: 0.4em 0.7em; }
blockquote.warning { background: #fff4e0; border-left: 4px solid #e0a030; margin: 1em 0; padding: 0.5em 1em; }
code { font-family: $mono; background: #f2f2f2; padding: 0 0.2em; white-space: pre-wrap; }
""").substitute(sans=SANS_SERIF, mono=MONOSPACE)

_SCRIPT = r"""
(function () {
  "use strict";
  function number(cell) {
    var value = cell ? cell.getAttribute("data-value") : null;
    return value === null || value === "" ? null : parseFloat(value);
  }
  function sortTable(table, column, header) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var descending = header.getAttribute("data-sorted") === "ascending";
    var numeric = rows.some(function (row) {
      return row.cells[column] && row.cells[column].hasAttribute("data-value");
    });
    rows.sort(function (a, b) {
      var x = a.cells[column], y = b.cells[column];
      if (numeric) {
        var u = number(x), v = number(y);
        if (u === null || v === null) { return (u === null) - (v === null); }  // no value: last either way
        return descending ? v - u : u - v;
      }
      var s = x ? x.textContent : "", t = y ? y.textContent : "";
      return descending ? t.localeCompare(s) : s.localeCompare(t);
    });
    rows.forEach(function (row) { row.classList.remove("rule"); body.appendChild(row); });
    var headers = table.tHead.rows[0].cells;
    for (var i = 0; i < headers.length; i++) { headers[i].removeAttribute("data-sorted"); }
    header.setAttribute("data-sorted", descending ? "descending" : "ascending");
  }
  var tables = document.querySelectorAll("table.report-table");
  Array.prototype.forEach.call(tables, function (table) {
    if (!table.tHead) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
      header.title = "sort by this column";
      header.addEventListener("click", function () { sortTable(table, column, header); });
    });
  });

  Array.prototype.forEach.call(document.querySelectorAll("input.table-find"), function (input) {
    var table = input.closest(".table-block").querySelector("table");
    input.addEventListener("input", function () {
      var query = input.value.trim().toLowerCase();
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var name = row.cells[0].textContent.toLowerCase();
        row.classList.toggle("found-out", query !== "" && name.indexOf(query) < 0);
      });
    });
  });

  function values(attribute) {
    var seen = {};
    Array.prototype.forEach.call(document.querySelectorAll("main [" + attribute + "]"), function (node) {
      var value = node.getAttribute(attribute);
      if (value) { seen[value] = true; }
    });
    return Object.keys(seen).sort();
  }
  var FILTERS = ["language", "family", "format"];
  var hidden = {language: {}, family: {}, format: {}};
  function apply() {
    FILTERS.forEach(function (name) {
      var attribute = "data-" + name;
      Array.prototype.forEach.call(document.querySelectorAll("main [" + attribute + "]"), function (node) {
        if (name === "language" && node.closest(".tbx")) { return; }  // the explorer chooses its own language
        var off = hidden[name][node.getAttribute(attribute)] === true;
        node.classList.toggle("filtered-out-" + name, off);
        node.classList.toggle("filtered-out", FILTERS.some(function (other) {
          return node.classList.contains("filtered-out-" + other);
        }));
      });
    });
  }
  // the explorer redraws its rows when another sentence or tokenizer is chosen: filter the new rows too
  document.addEventListener("change", function (event) {
    if (event.target.closest && event.target.closest(".tbx")) { apply(); }
  });
  FILTERS.forEach(function (name) {
    var box = document.querySelector('#filters fieldset[data-filter="' + name + '"]');
    if (!box) { return; }
    values("data-" + name).forEach(function (value) {
      var label = document.createElement("label");
      var input = document.createElement("input");
      input.type = "checkbox";
      input.checked = true;
      input.value = value;
      input.setAttribute("data-filter-" + name, value);
      input.addEventListener("change", function () { hidden[name][value] = !input.checked; apply(); });
      label.appendChild(input);
      label.appendChild(document.createTextNode(" " + value));
      box.appendChild(label);
    });
  });
})();
"""
