"""Glue between a trained tokenizer, a corpus and the metric functions.

``evaluate_tokenizer`` encodes a corpus's evaluation roles once and turns every
applicable metric into tidy rows (value, bootstrap CI, n).  It also returns the
per-document token counts that cross-unit metrics need: ``tokens_vs_char``
(against the run's char-level tokenizer) and ``parity_vs_eng`` (against the
same tokenizer row on the English corpus), which ``cross_unit_rows`` computes
once every unit is done, and the paired tests of ``paired_rows``.

Which words a word-level metric sees: the gold UD FORM words of a document
when the corpus has them (Rust et al. 2021), otherwise its whitespace-separated
words.  Each word is encoded alone in its mid-sentence form
(``Tokenizer.encode_word``: after a space, or with sentencepiece's dummy prefix).
Morphology metrics run over the words of each morpheme reference, each word
encoded that way; their rows carry ``eval_set = "reference"`` and
the reference name.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from benchmarks import metrics
from benchmarks.stats import metric_interval, paired_test
from bpe.base import Encoding, Tokenizer

#: metric families applied to each evaluation role
TEXT_METRICS = ("bytes_per_token", "chars_per_token", "tokens_per_kchar", "fertility_running",
                "continued_word_share_running", "single_token_word_share_running")
WORD_METRICS = ("fertility_isolated", "continued_word_share", "single_token_word_share")
REFERENCE_ROLE = "reference"
CHAR_KIND = "char"
ENGLISH = "eng_Latn"
#: the token-count statistic paired tests compare: tokens per 1,000 characters
PAIRED_METRIC = "tokens_per_kchar"


@dataclass
class UnitOutcome:
    rows: list[dict[str, Any]] = field(default_factory=list)
    costs: dict[str, float] = field(default_factory=dict)
    # role -> {"ids": document ids, "tokens": token count per document, "chars": characters per document}
    counts: dict[str, dict[str, list]] = field(default_factory=dict)


def _row(result: metrics.MetricResult, eval_set: str, settings: dict[str, Any], reference: str = "") -> dict:
    interval = metric_interval(result, **settings)
    return {
        "eval_set": eval_set,
        "reference": reference,
        "metric": result.name,
        "value": float(result.value),
        "ci_low": float("nan") if interval is None else float(interval.low),
        "ci_high": float("nan") if interval is None else float(interval.high),
        "n": int(result.n),
    }


def bootstrap_settings(config: Any) -> dict[str, Any]:
    return {"confidence": config.confidence, "n_resamples": config.bootstrap_resamples, "seed": config.seed}


class _WordCache:
    """Encodes each distinct word once (words recur across sentences and references)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.cache: dict[str, Encoding] = {}

    def __call__(self, word: str) -> Encoding:
        encoding = self.cache.get(word)
        if encoding is None:
            encoding = self.cache[word] = self.tokenizer.encode_word(word)
        return encoding


def evaluate_tokenizer(tokenizer: Tokenizer, corpus: Any, roles: tuple[str, ...], config: Any,
                       is_word_family: bool = False) -> UnitOutcome:  # fmt: skip
    settings = bootstrap_settings(config)
    outcome = UnitOutcome()
    encode_word = _WordCache(tokenizer)
    unk_id = tokenizer.unk_id
    vocab_size = tokenizer.vocab_size
    nan = float("nan")
    outcome.rows.append({"eval_set": "train", "reference": "", "metric": "vocab_size_reached",
                         "value": float(vocab_size), "ci_low": nan, "ci_high": nan, "n": 1})  # fmt: skip
    for role in roles:
        documents = corpus.documents(role)
        if not documents:
            continue
        texts = [document.text for document in documents]
        start = time.perf_counter()
        encodings = [tokenizer.encode_with_spans(text) for text in texts]
        seconds = time.perf_counter() - start
        if role == roles[0]:
            total_bytes = sum(len(text.encode("utf-8")) for text in texts)
            outcome.costs["encode_mb_per_s"] = total_bytes / 1e6 / seconds if seconds > 0 else float("nan")
        word_encodings = [[encode_word(w) for w in (d.words if d.words is not None else d.text.split())]
                          for d in documents]  # fmt: skip
        results = [getattr(metrics, name)(texts, encodings) for name in TEXT_METRICS]
        results += [getattr(metrics, name)(word_encodings) for name in WORD_METRICS]
        results += [metrics.unk_token_rate(encodings, unk_id), metrics.unk_word_rate(word_encodings, unk_id)]
        if is_word_family:
            results += [metrics.oov_token_rate(encodings, unk_id), metrics.oov_type_rate(texts, encodings, unk_id)]
        results += [metrics.renyi_efficiency(encodings, vocab_size), metrics.vocab_utilisation(encodings, vocab_size)]
        outcome.rows += [_row(result, role, settings) for result in results]
        outcome.counts[role] = {
            "ids": [document.id for document in documents],
            "tokens": [len(encoding) for encoding in encodings],
            "chars": [len(text) for text in texts],
        }
    for name, reference in sorted(corpus.references().items()):
        analyses = reference.analyses
        word_encodings = {word: encode_word(word) for word in analyses}
        if reference.kind == "morphscore":
            score = metrics.morphscore(analyses, word_encodings)
            excluded = score.details["excluded_single_token"]
            results = [score, metrics.MetricResult("morphscore_excluded", float(excluded), score.details["items"])]
        else:
            results = list(metrics.boundary_metrics(analyses, word_encodings).values())
        outcome.rows += [_row(result, REFERENCE_ROLE, settings, reference=name) for result in results]
    return outcome


# --------------------------------------------------------------------------- cross-unit metrics


def _line_key(document_id: str) -> str:
    """The position part of a document id (``flores/tur_Latn.txt:17`` -> ``17``): parallel lines share it."""
    return document_id.rsplit(":", 1)[-1]


def _aligned(a: dict[str, list], b: dict[str, list], by_line: bool) -> tuple[np.ndarray, np.ndarray] | None:
    key = _line_key if by_line else (lambda x: x)
    index_b = {key(doc_id): i for i, doc_id in enumerate(b["ids"])}
    pairs = [(i, index_b[key(doc_id)]) for i, doc_id in enumerate(a["ids"]) if key(doc_id) in index_b]
    if not pairs:
        return None
    ia, ib = map(list, zip(*pairs, strict=True))
    return np.asarray(a["tokens"], dtype=float)[ia], np.asarray(b["tokens"], dtype=float)[ib]


def _ratio_row(unit: dict, name: str, eval_set: str, num: np.ndarray, den: np.ndarray, settings: dict) -> dict:
    return dict(unit, **_row(metrics.ratio_of_sums(name, num, den), eval_set, settings))


def cross_unit_rows(payloads: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
    """``tokens_vs_char`` per unit and ``parity_vs_eng`` per non-English unit."""
    settings = bootstrap_settings(config)
    rows: list[dict[str, Any]] = []
    by_identity = {(p["unit"]["corpus"], p["unit"]["tokenizer"], p["unit"]["vocab_size"]): p for p in payloads}
    # the char-level baseline of a corpus: the run's char tokenizer with the largest vocabulary
    char_units = {}
    for payload in payloads:
        unit = payload["unit"]
        if unit["kind"] == CHAR_KIND:
            best = char_units.get(unit["corpus"])
            if best is None or unit["vocab_size"] > best["unit"]["vocab_size"]:
                char_units[unit["corpus"]] = payload
    english = sorted({p["unit"]["corpus"] for p in payloads if p["unit"]["language"] == ENGLISH})
    for payload in payloads:
        unit = payload["unit"]
        baseline = char_units.get(unit["corpus"])
        if baseline is not None:
            for role, counts in payload["counts"].items():
                aligned = _aligned(counts, baseline["counts"].get(role, {"ids": []}), by_line=False)
                if aligned is not None:
                    rows.append(_ratio_row(unit, "tokens_vs_char", role, *aligned, settings))
        if unit["language"] == ENGLISH or not english or "eval" not in payload["counts"]:
            continue
        partner = by_identity.get((english[0], unit["tokenizer"], unit["vocab_size"]))
        if partner is None or "eval" not in partner["counts"]:
            continue
        aligned = _aligned(payload["counts"]["eval"], partner["counts"]["eval"], by_line=True)
        if aligned is not None:
            rows.append(_ratio_row(unit, "parity_vs_eng", "eval", *aligned, settings))
    return rows


def paired_rows(payloads: list[dict[str, Any]], config: Any) -> pd.DataFrame:
    """Paired tests of tokens per 1,000 characters between every two tokenizer rows of a corpus
    at the report vocab size (production rows included), on the same test documents."""
    settings = bootstrap_settings(config)
    columns = ["corpus", "eval_set", "metric", "tokenizer_a", "tokenizer_b", "vocab_size", "difference",
               "ci_low", "ci_high", "p_value", "n"]  # fmt: skip
    rows = []
    for corpus in sorted({p["unit"]["corpus"] for p in payloads}):
        chosen = [p for p in payloads if p["unit"]["corpus"] == corpus and "test" in p["counts"]
                  and p["unit"]["vocab_size"] in (None, config.report_vocab_size)]  # fmt: skip
        chosen.sort(key=lambda p: p["unit"]["tokenizer"])
        for a, b in combinations(chosen, 2):
            ca, cb = a["counts"]["test"], b["counts"]["test"]
            if ca["ids"] != cb["ids"]:
                continue
            chars = np.asarray(ca["chars"], dtype=float) / 1000
            comparison = paired_test((np.asarray(ca["tokens"], float), chars), (np.asarray(cb["tokens"], float), chars),
                                     **settings)  # fmt: skip
            rows.append([corpus, "test", PAIRED_METRIC, a["unit"]["tokenizer"], b["unit"]["tokenizer"],
                         config.report_vocab_size, comparison.difference, comparison.interval.low,
                         comparison.interval.high, comparison.p_value, comparison.n])  # fmt: skip
    return pd.DataFrame(rows, columns=columns)
