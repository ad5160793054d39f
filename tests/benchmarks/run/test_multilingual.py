"""Shared multilingual tokenizers ([[multilingual]]): the temperature sample against an independent recount, the
config's checks, and a small run on real embedded text: one training serves every corpus, its merges are those
of the family trained directly on the sample, and the report says how the vocabulary divides between scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.report import write_report
from benchmarks.run.config import parse_config
from benchmarks.run.multilingual import MixtureSource, language_shares, sample_documents
from benchmarks.run.runner import run_experiment
from corpora import Document, load_corpus
from tests.errors import raises_code

CORPORA = ["embedded-kor", "embedded-eng"]
MULTI = {
    "name": "multi",
    "corpora": CORPORA,
    "max_train_chars": 30000,
    "metrics": ["bytes_per_token", "tokens_per_kchar"],
    "tokenizers": [{"kind": "byte-bpe", "vocab_sizes": [600]},
                   {"kind": "superbpe", "vocab_sizes": [600], "options": {"transition": 400}}],
    "multilingual": [{"kind": "byte-bpe", "alpha": [1, 0.3], "vocab_sizes": [400, 600]}],
    "bootstrap": {"resamples": 50},
    "report": {"vocab_size": 600},
}


@pytest.fixture(scope="module")
def corpora() -> dict:
    return {name: load_corpus(name) for name in CORPORA}


def test_language_shares_follow_size_to_the_alpha() -> None:
    sizes = [1000, 9000]
    assert language_shares(sizes, 1.0) == pytest.approx([0.1, 0.9])
    assert language_shares(sizes, 0.0) == pytest.approx([0.5, 0.5])
    half = [1000**0.5 / (1000**0.5 + 9000**0.5), 9000**0.5 / (1000**0.5 + 9000**0.5)]
    assert language_shares(sizes, 0.5) == pytest.approx(half)


def test_a_sample_repeats_a_small_corpus_from_its_first_document() -> None:
    documents = [Document(f"d{i}", "x" * length) for i, length in enumerate([3, 5, 2])]
    assert [d.id for d in sample_documents(documents, 4)] == ["d0", "d1"]  # the last document whole
    assert [d.id for d in sample_documents(documents, 12)] == ["d0", "d1", "d2", "d0"]
    assert sample_documents(documents, 0) == []


def test_each_corpus_gets_its_share_of_the_sample(corpora) -> None:
    ordered = tuple(corpora[name] for name in CORPORA)
    source = MixtureSource(ordered, 0.3, 40000, 30000)
    sizes = [_capped_size([len(d.text) for d in c.documents("train")], 30000) for c in ordered]
    chars = source.sampled_chars()
    longest = max(len(d.text) for c in ordered for d in c.documents("train"))
    for corpus, share in zip(ordered, language_shares(sizes, 0.3), strict=True):
        # the first documents up to the cap, repeated: within one document of the target
        assert 0 <= chars[corpus.spec.id] - share * 40000 < longest
    assert [d.text for d in source.documents("train")] == [t for c in CORPORA for t in source.texts_by_corpus()[c]]
    assert source.documents("test") == []
    # a different alpha is a different training text
    assert MixtureSource(ordered, 1.0, 40000, 30000).fingerprint != source.fingerprint


def _capped_size(lengths: list[int], cap: int) -> int:
    """Characters of the first documents up to ``cap`` (the last one whole), as ``max_train_chars`` caps a corpus."""
    total = 0
    for length in lengths:
        if total >= cap:
            break
        total += length
    return total


@pytest.mark.parametrize(("change", "code"), [
    ({"alpha": [-0.5]}, "out_of_range"),
    ({"alpha": []}, "too_short"),
    ({"corpora": ["embedded-kor"]}, "too_short"),
    ({"kind": "bpe-knockout"}, "table_rule"),
])  # fmt: skip
def test_a_bad_multilingual_table_is_refused_with_its_field(change: dict, code: str) -> None:
    raw = dict(MULTI, multilingual=[dict(MULTI["multilingual"][0], **change)])
    with raises_code(BenchmarkError, code):
        parse_config(raw, source="multi.toml")


def test_rows_are_named_by_alpha_and_need_distinct_labels() -> None:
    config = parse_config(MULTI, source="multi.toml")
    assert [row.label for row in config.trained_entries] == [
        "byte-bpe", "superbpe", "byte-bpe-multilingual-a1", "byte-bpe-multilingual-a0.3"]  # fmt: skip
    clash = dict(MULTI, tokenizers=[{"kind": "byte-bpe", "label": "byte-bpe-multilingual-a1", "vocab_sizes": [600]}])
    with raises_code(BenchmarkError, "table_rule"):
        parse_config(clash, source="multi.toml")
    with raises_code(BenchmarkError, "table_rule"):
        parse_config(dict(MULTI, train_chars=[1000, 2000]), source="multi.toml")


def test_one_shared_training_serves_every_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpora) -> None:
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    config = parse_config(MULTI, source="multi.toml")
    out = run_experiment(config, tmp_path / "run", progress=False, on_report=write_report)
    for label, alpha in (("byte-bpe-multilingual-a1", 1.0), ("byte-bpe-multilingual-a0.3", 0.3)):
        files = [(out / "tokenizers" / name / f"{label}-600.json").read_bytes() for name in CORPORA]
        assert files[0] == files[1]
        # independently: the family trained directly on the sample of the two corpora
        source = MixtureSource(tuple(corpora[name] for name in CORPORA), alpha, None, 30000)
        direct = bpe.train("byte-bpe", [d.text for d in source.documents("train")], 600)
        assert bpe.load(out / "tokenizers" / "embedded-kor" / f"{label}-600.json").to_dict() == direct.to_dict()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["multilingual"]["byte-bpe-multilingual-a0.3"]["alpha"] == 0.3
    assert set(manifest["multilingual"]["byte-bpe-multilingual-a1"]["characters"]) == set(CORPORA)
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Shared multilingual vocabularies" in report
    assert "| byte-bpe-multilingual-a0.3 | 0.3 |" in report.replace("  ", "").replace(" |", " |")
    # the findings, recomputed from results.csv and audit.csv
    results = pd.read_csv(out / "results.csv")
    tokens = results[(results["metric"] == "tokens_per_kchar") & (results["eval_set"] == "test")]
    per = tokens.pivot_table(index="language", columns="tokenizer", values="value")
    change = (per["superbpe"] / per["byte-bpe"] - 1).mean()
    assert f"`superbpe` uses {abs(change):.1%} {'fewer' if change < 0 else 'more'} tokens than `byte-bpe`" in report
    audit = pd.read_csv(out / "audit.csv").drop_duplicates("tokenizer").set_index("tokenizer")
    hangul = [audit.loc[f"byte-bpe-multilingual-a{alpha}", "script_hangul_share"] for alpha in ("1", "0.3")]
    assert f"Hangul {hangul[0]:.1%} → {hangul[1]:.1%}" in report
