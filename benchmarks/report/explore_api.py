"""What `tokbench explore` answers: a run's tokenizers, loaded once, applied to any text a page posts.

``RunExplorer(run_dir)`` reads the run as its report does (``benchmarks.report.load``: ``load_run`` and
``Run.tokenizers``): every trained row at the report vocabulary size (the size closest to it where a row was
not trained at it, as the report's explorer shows it), one tokenizer per corpus it was trained on, from
``RUN_DIR/tokenizers/``; and every pretrained row of the manifest (a production name, or a file whose digest
must be unchanged since the run).  A row that cannot be re-loaded is left out with a note.  Each tokenizer
gets a label, unique in the run: a pretrained row's label (``cl100k``), a trained row's ``corpus/label``
(``embedded-kor/byte-bpe``, as ``tokbench show --run`` names them), and its family and file format
(``benchmarks.report.explorer.tokenizer_facts``).

The answers are plain JSON data (the requests are JSON objects; ``docs/inspect.md``, "tokbench explore"):

``catalogue()``
    ``{"run", "tokenizers": [{"label", "row", "corpus", "kind", "family", "format", "vocab_size"}], "notes"}``
    (the server adds ``max_request_bytes``).
``encode({"text", "tokenizers"?})``
    every chosen tokenizer (default: all) on the text: ``{"characters", "bytes", "rows": [{"label", "family",
    "format", "ids", "pieces", "tokens", "characters", "bytes", "bytes_per_token"}]}``, ``pieces`` as the
    report's explorer gives them (``token_pieces``: id, hex, text, bytes, chars) and ``bytes_per_token``
    None for no token.
``diff({"text", "a", "b"})``
    tokenizers A and B compared on the text as ``tokbench diff`` compares them: ``boundaries`` (the running
    text's boundaries only one has, ``benchmarks.measure.segdiff.boundary_diff``), ``words`` (the words they
    segment differently, ``segmentation_diff`` over the text's lines) with the word-token and word-type
    counts and shares, and both rows as ``encode`` gives them.

A request that is not such an object, names an unknown tokenizer or holds no word to compare is a
``BenchmarkError`` with its code; the server answers it with HTTP 400.  Encoding is serialized (one request
at a time): a tokenizer is not promised to be safe to share between threads.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.errors import BenchmarkError
from benchmarks.measure.segdiff import boundary_diff, segmentation_diff
from benchmarks.report.cells import tokenizer_order
from benchmarks.report.explorer import token_pieces, tokenizer_facts
from benchmarks.report.load import load_run
from bpe.base import Encoding, Tokenizer


@dataclass(frozen=True)
class LoadedTokenizer:
    """One tokenizer of the run as the page lists it."""

    label: str  # unique in the run: the pretrained row's label, or ``corpus/label`` of a trained row
    row: str  # the row's label in the run's results
    corpus: str | None  # the corpus a trained row was trained on; None for a pretrained row
    kind: str  # the results' kind of the row
    tokenizer: Tokenizer

    def describe(self) -> dict[str, Any]:
        return {"label": self.label, "row": self.row, "corpus": self.corpus, "kind": self.kind,
                **tokenizer_facts(self.kind), "vocab_size": int(self.tokenizer.vocab_size)}  # fmt: skip


def run_tokenizer_list(run_dir: Path) -> tuple[list[LoadedTokenizer], list[str]]:
    """Every tokenizer of a run, loaded (module docstring), and the notes on rows left out.  Order: the
    pretrained rows, then each corpus (sorted) with its trained rows, rows in the report's order."""
    run = load_run(run_dir)
    loaded = run.tokenizers
    kinds = run.results.drop_duplicates("tokenizer").set_index("tokenizer")["kind"]
    order = tokenizer_order(run.results)
    rows = [LoadedTokenizer(label, label, None, str(kinds.get(label, "")), loaded.pretrained[label])
            for label in order if label in loaded.pretrained]  # fmt: skip
    for corpus in sorted({corpus for corpus, _ in loaded.trained}):
        for label in order:
            if (corpus, label) in loaded.trained:
                shown, tokenizer = loaded.trained[corpus, label]
                rows.append(LoadedTokenizer(f"{corpus}/{shown}", label, corpus, str(kinds.get(label, "")), tokenizer))
    return rows, list(loaded.notes)


def _field(request: Any, name: str, kind: type, where: str) -> Any:
    if not isinstance(request, Mapping):
        raise BenchmarkError(f"{where}: the request must be a JSON object, got {type(request).__name__}",
                             code="wrong_type", value=type(request).__name__)  # fmt: skip
    if name not in request:
        raise BenchmarkError(f"{where}: the request has no field {name!r}", code="missing_key", value=name,
                             field=name)  # fmt: skip
    value = request[name]
    if not isinstance(value, kind):
        raise BenchmarkError(f"{where}: field {name!r} must be a {kind.__name__}, got {type(value).__name__}",
                             code="wrong_type", value=type(value).__name__, field=name)  # fmt: skip
    return value


class RunExplorer:
    """A run's tokenizers and the answers of `tokbench explore` (module docstring)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        if not self.run_dir.is_dir():
            raise BenchmarkError(f"{run_dir}: no such run directory (expected a folder `tokbench run` wrote)",
                                 code="not_a_run_folder", value=run_dir)  # fmt: skip
        self.tokenizers, self.notes = run_tokenizer_list(self.run_dir)
        if not self.tokenizers:
            raise BenchmarkError(f"{run_dir}: no tokenizer of the run could be loaded ({'; '.join(self.notes)})",
                                 code="no_items", value=run_dir)  # fmt: skip
        self.by_label = {entry.label: entry for entry in self.tokenizers}
        self._lock = threading.Lock()

    def catalogue(self) -> dict[str, Any]:
        return {"run": str(self.run_dir), "tokenizers": [entry.describe() for entry in self.tokenizers],
                "notes": self.notes}  # fmt: skip

    def _chosen(self, label: Any, where: str) -> LoadedTokenizer:
        if not isinstance(label, str):
            raise BenchmarkError(f"{where}: a tokenizer is named by its label (a string), got {label!r}",
                                 code="wrong_type", value=label)  # fmt: skip
        if label not in self.by_label:
            raise BenchmarkError(f"{where}: no tokenizer {label!r} in this run; choose one of: "
                                 f"{', '.join(self.by_label)}", code="unknown_tokenizer", value=label)  # fmt: skip
        return self.by_label[label]

    def _row(self, text: str, entry: LoadedTokenizer) -> tuple[dict[str, Any], Encoding]:
        encoding = entry.tokenizer.encode_with_spans(text)
        size, tokens = len(text.encode("utf-8")), len(encoding)
        row = {"label": entry.label, **tokenizer_facts(entry.kind), "ids": [int(token) for token in encoding.ids],
               "pieces": token_pieces(text, encoding, entry.tokenizer.unk_id), "tokens": tokens,
               "characters": len(text), "bytes": size,
               "bytes_per_token": size / tokens if tokens else None}  # fmt: skip
        return row, encoding

    def encode(self, request: Any) -> dict[str, Any]:
        text = _field(request, "text", str, "encode")
        labels = request.get("tokenizers")
        if labels is None:
            chosen = self.tokenizers
        elif isinstance(labels, list):
            chosen = [self._chosen(label, "encode") for label in labels]
        else:
            raise BenchmarkError("encode: field 'tokenizers' must be a list of labels", code="wrong_type",
                                 value=type(labels).__name__, field="tokenizers")  # fmt: skip
        with self._lock:
            rows = [self._row(text, entry)[0] for entry in chosen]
        return {"characters": len(text), "bytes": len(text.encode("utf-8")), "rows": rows}

    def diff(self, request: Any) -> dict[str, Any]:
        text = _field(request, "text", str, "diff")
        a, b = self._chosen(request.get("a"), "diff (a)"), self._chosen(request.get("b"), "diff (b)")
        with self._lock:
            (row_a, encoding_a), (row_b, encoding_b) = self._row(text, a), self._row(text, b)
            boundaries = boundary_diff(text, encoding_a, encoding_b)
            words = segmentation_diff(text.splitlines(), a.tokenizer, b.tokenizer)
        return {
            "a": a.label,
            "b": b.label,
            "rows": [row_a, row_b],
            "boundaries": {"only_a": list(boundaries.only_a), "only_b": list(boundaries.only_b),
                           "chars_a": list(boundaries.chars_a), "chars_b": list(boundaries.chars_b)},
            "words": [{"word": word.word, "count": word.count, "pieces_a": list(word.pieces_a),
                       "pieces_b": list(word.pieces_b)} for word in words.words],
            "word_tokens": words.word_tokens,
            "word_types": words.word_types,
            "differing_tokens": words.differing_tokens,
            "differing_types": words.differing_types,
            "token_share": words.token_share,
            "type_share": words.type_share,
        }  # fmt: skip
