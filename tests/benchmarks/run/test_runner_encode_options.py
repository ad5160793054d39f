"""The runner with encode-time options and morpheme-supervised rows, on embedded Korean text and the
data root in use: rows that differ only in how a vocabulary encodes train it once, rows that sample
are the mean over the run's seeds, and bpe-knockout trains only on gold its metrics do not score."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.files import tokenizer_cache_dir, trained_tokenizer_path
from benchmarks.measure.metrics import MetricResult
from benchmarks.report import inference_groups, write_report
from benchmarks.run import runner
from benchmarks.run.config import parse_config
from benchmarks.run.evaluate import seed_mean_row
from benchmarks.run.grid import training_references
from benchmarks.run.runner import run_experiment
from benchmarks.run.units import Unit
from corpora import load_corpus
from tests.conftest import SAMPLE_DATA_ROOT
from tests.errors import raises_code

SEEDS = [0, 1, 2]
MODES = {
    "char-bpe": {},
    "char-bpe-prefix": {"encode_mode": "longest-prefix"},
    "char-bpe-fewest": {"encode_mode": "fewest-tokens"},
    "char-bpe-dropout": {"dropout": 0.2},
}
CONFIG = {
    "name": "encode-options",
    "corpora": ["embedded-kor"],
    "seeds": SEEDS,
    "tokenizers": [
        {"kind": "char-bpe", "label": label, "vocab_sizes": [900], "options": {"end_of_word": "separate", **options}}
        for label, options in MODES.items()
    ],
    "metrics": ["tokens_per_kchar", "bytes_per_token", "fertility_isolated", "boundary_f1"],
    "bootstrap": {"resamples": 200},
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], Path]:
    """The run (two worker processes), the labels evaluated over seeds, and its tokenizer cache."""
    cache = tmp_path_factory.mktemp("cache")
    over_seeds: list[str] = []
    original = runner.evaluate_over_seeds

    def spy(unit, *args, **kwargs):
        over_seeds.append(unit.tokenizer)
        return original(unit, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKBENCH_CACHE", str(cache))
        patch.setattr(runner, "evaluate_over_seeds", spy)
        config = parse_config(CONFIG, source="encode-options.toml")
        out = run_experiment(config, tmp_path_factory.mktemp("runs") / "run", jobs=1, progress=False)
    return out, over_seeds, cache


def results(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "results.csv", keep_default_na=False, na_values=[""])


def unit_of(kind: str, options: dict[str, Any], row_type: str = "family") -> Unit:
    return Unit("embedded-kor", "kor_Hang", kind, kind, row_type, 400, tuple(sorted(options.items())))


def test_options_split_into_training_and_encode_time() -> None:
    unit = unit_of("char-bpe", {"end_of_word": "separate", "encode_mode": "merges", "dropout": 0.1,
                                "normalizer": "jamo"})  # fmt: skip
    assert unit.training_options == {"end_of_word": "separate", "normalizer": "jamo"}
    assert unit.encode_time_options == {"dropout": 0.1, "encode_mode": "merges"}
    # the unit carries its options validated by the family's model (defaults filled in)
    assert unit.settings is not None and unit.settings.dropout == 0.1 and unit.settings.seed == 0
    assert unit.settings.pretokenizer == "unicode"
    knockout = unit_of("bpe-knockout", {"base": "byte-bpe"})
    assert (knockout.training_options, knockout.encode_time_options) == ({"base": "byte-bpe"}, {})
    assert unit_of("cl100k", {}, "production").settings is None


def test_rows_differing_only_in_encoding_share_one_training(run, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    run_dir, _, cache = run
    monkeypatch.setenv("TOKBENCH_CACHE", str(cache))
    cached = [path for path in tokenizer_cache_dir().glob("*.json") if not path.name.endswith(".meta.json")]
    assert len(cached) == 1  # four rows, one vocabulary
    saved = {label: bpe.load(trained_tokenizer_path(run_dir, "embedded-kor", label, 900)) for label in MODES}
    assert len({tuple(tokenizer.vocab) for tokenizer in saved.values()}) == 1
    assert saved["char-bpe-fewest"].options.encode_mode == "fewest-tokens"
    assert saved["char-bpe-dropout"].options.dropout == 0.2
    # the inference methods give different segmentations of the same text, fewest-tokens the fewest
    table = results(run_dir)
    per_kchar = table[(table["metric"] == "tokens_per_kchar") & (table["eval_set"] == "test")].set_index("tokenizer")
    assert per_kchar.loc["char-bpe-fewest", "value"] <= per_kchar.loc["char-bpe", "value"]
    assert per_kchar.loc["char-bpe-prefix", "value"] != per_kchar.loc["char-bpe", "value"]
    # with two workers as well: the rows of one vocabulary run in one worker, the vocabulary trained once
    config = parse_config(dict(CONFIG, tokenizers=CONFIG["tokenizers"][:3]), source="encode-options.toml")
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    run_experiment(config, tmp_path / "jobs", jobs=2, progress=False)
    assert len(list((tmp_path / "cache").glob("**/*.meta.json"))) == 1


def test_sampling_rows_are_the_mean_over_seeds(run) -> None:
    run_dir, over_seeds, _ = run
    assert over_seeds == ["char-bpe-dropout"]  # deterministic rows never loop over seeds
    dropout = bpe.load(trained_tokenizer_path(run_dir, "embedded-kor", "char-bpe-dropout", 900))
    corpus = load_corpus("embedded-kor")
    texts = [document.text for document in corpus.documents("test")]
    per_seed = []
    for seed in SEEDS:
        sampled = dropout.with_encode_options(seed=seed)
        per_seed.append(1000 * sum(len(sampled.encode(text)) for text in texts) / sum(map(len, texts)))
    assert len(set(per_seed)) == len(SEEDS)  # each seed samples another segmentation
    table = results(run_dir)
    row = table[(table["tokenizer"] == "char-bpe-dropout") & (table["metric"] == "tokens_per_kchar")
                & (table["eval_set"] == "test")].iloc[0]  # fmt: skip
    assert row["value"] == pytest.approx(np.mean(per_seed), rel=1e-12)
    assert row["ci_low"] < row["value"] < row["ci_high"]
    assert row["n"] == len(texts)
    f1 = table[(table["tokenizer"] == "char-bpe-dropout") & (table["metric"] == "boundary_f1")]
    assert not f1.empty and (f1["ci_low"] < f1["value"]).all()


def test_a_metric_whose_items_depend_on_the_segmentation_gets_the_mean_without_interval() -> None:
    """MorphScore excludes words kept as one token, so two seeds score different words: no pairing."""
    settings = {"confidence": 0.95, "n_resamples": 100, "seed": 0}
    seeds = [MetricResult("morphscore", 0.5, 4, np.array([1.0, 0, 1, 0]), np.ones(4)),
             MetricResult("morphscore", 0.6, 5, np.array([1.0, 1, 0, 1, 0]), np.ones(5))]  # fmt: skip
    row = seed_mean_row(seeds, "reference", "morphscore", settings)
    assert (row.value, row.n) == (pytest.approx(0.55), 4) and math.isnan(row.ci_low) and math.isnan(row.ci_high)
    ratios = [MetricResult("bytes_per_token", 2.0, 3, np.array([2.0, 4, 6]), np.array([1.0, 2, 3])),
              MetricResult("bytes_per_token", 3.0, 3, np.array([3.0, 6, 9]), np.array([1.0, 2, 3]))]  # fmt: skip
    row = seed_mean_row(ratios, "test", "", settings)
    assert row.value == 2.5 and row.ci_low < 2.5 < row.ci_high


def test_the_report_compares_the_inference_methods(run) -> None:
    run_dir, _, _ = run
    groups = inference_groups(results(run_dir))
    assert len(groups) == 1
    (_, group), = groups
    assert set(group["method"]) == {"merges", "longest-prefix", "fewest-tokens", "merges + dropout 0.2"}
    text = write_report(run_dir).read_text(encoding="utf-8")
    assert "## Inference methods on one vocabulary" in text
    assert "aligns best" in text


def test_the_seeds_are_part_of_the_run_identity_only_when_a_row_samples() -> None:
    sampling = parse_config(CONFIG)
    assert sampling.to_json()["seeds"] == tuple(SEEDS)
    deterministic = parse_config(dict(CONFIG, tokenizers=CONFIG["tokenizers"][:3]))
    assert "seeds" not in deterministic.to_json()
    assert parse_config({key: value for key, value in CONFIG.items() if key != "seeds"}).seeds == (0, 1, 2, 3, 4)


def test_a_sampling_row_takes_its_seeds_from_the_run() -> None:
    entry = {"kind": "byte-bpe", "vocab_sizes": [300], "options": {"dropout": 0.1, "seed": 4}}
    with raises_code(BenchmarkError, "table_rule", field="tokenizers[0]", value="seed"):
        parse_config({"name": "x", "corpora": ["embedded-kor"], "tokenizers": [entry]})
    with raises_code(BenchmarkError, "invalid", field="seeds", value=[1, 1]):
        parse_config({"name": "x", "corpora": ["embedded-kor"], "seeds": [1, 1], "tokenizers": [entry]})


#: Turkish text with the Morpho Challenge gold as its only (evaluated) reference, from the sample data root
TURKISH_GOLD_ONLY = """
id = "tur-gold"
language = "tur_Latn"
license = "CC BY-SA 4.0 (UD Turkish-BOUN)"
description = "UD Turkish-BOUN dev (train) and test, Morpho Challenge 2010 gold"
provenance = "the sample data root of the tests"

[[sources]]
kind = "path"
role = "train"
format = "conllu"
files = "ud/tr/tr_boun-ud-dev.conllu"

[[sources]]
kind = "path"
role = "test"
format = "conllu"
files = "ud/tr/tr_boun-ud-test.conllu"

[[references]]
name = "morphochallenge2010"
reader = "morphochallenge2010"
files = "morph/tur/morphochallenge2010_goldstd_combined.segmentation.tur"
"""


def test_knockout_trains_only_on_gold_no_metric_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the shipped sample data root: its gold files have the same layout and splits as the full one."""
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    russian = load_corpus("ud-rus", data_dir=SAMPLE_DATA_ROOT)
    words = training_references(russian)
    scored = {word for reference in russian.references().values() for word in reference.analyses}
    gold = russian.training_references()["tikhonov-train"].analyses
    assert gold and not set(words) & scored and set(words) <= set(gold)
    # the sample's one training word, наибольший, is also in the valid file the metrics score: left out
    assert "наибольший" in gold and "наибольший" in scored and "наибольший" not in words
    assert "tikhonov-train" not in russian.references()  # never scored
    # Turkish gold exists only as the file the metrics score: the row is refused before any training
    spec = tmp_path / "tur-gold.toml"
    spec.write_text(TURKISH_GOLD_ONLY, encoding="utf-8")
    knockout = {"kind": "bpe-knockout", "vocab_sizes": [300], "options": {"base": "byte-bpe"}}
    config = parse_config({"name": "x", "corpora": [str(spec)], "tokenizers": [knockout]}, source="x.toml")
    with raises_code(BenchmarkError, "no_training_references", field="tokenizers[0]", value="tur-gold"):
        run_experiment(config, tmp_path / "refused", data_dir=SAMPLE_DATA_ROOT, progress=False)
    assert not (tmp_path / "refused").exists()
    # restricted to corpora that have such a split, the same entry is accepted
    restricted = dict(knockout, corpora=["ud-rus"])
    config = parse_config({"name": "x", "corpora": [str(spec), "ud-rus"], "tokenizers": [restricted]}, source="x.toml")
    from benchmarks.run.grid import plan_units

    turkish = load_corpus(spec, data_dir=SAMPLE_DATA_ROOT)
    corpora = {corpus.spec.id: corpus for corpus in (turkish, russian)}
    assert [unit.corpus for unit in plan_units(config, corpora, {})] == ["ud-rus"]
    unknown = dict(knockout, corpora=["ud-kor"])
    config = parse_config({"name": "x", "corpora": ["ud-rus"], "tokenizers": [unknown]}, source="x.toml")
    with raises_code(BenchmarkError, "unknown_corpus", field="tokenizers[0].corpora", value="ud-kor"):
        run_experiment(config, tmp_path / "unknown", data_dir=SAMPLE_DATA_ROOT, progress=False)
