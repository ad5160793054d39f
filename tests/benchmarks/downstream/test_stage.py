"""A run with a [downstream] table end to end on embedded package text: bpb rows with CIs, the model files,
the paired tests, the correlations equal to scipy's on the run's own numbers, the report's sections, the
cache, and config validation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from benchmarks.downstream import stage
from benchmarks.errors import BenchmarkError
from benchmarks.run.config import parse_config
from tests.errors import raises_code

TINY = {
    "name": "tiny-downstream",
    "corpora": ["embedded-tur", "embedded-eng"],
    "production": ["cl100k"],
    "metrics": ["bytes_per_token", "fertility_running", "renyi_efficiency", "unk_token_rate"],
    "tokenizers": [
        {"kind": "char", "vocab_sizes": [2000]},
        {"kind": "char-bpe", "vocab_sizes": [600], "options": {"end_of_word": "separate"}},
        {"kind": "byte-bpe", "vocab_sizes": [600, 1200]},
        {"kind": "word", "vocab_sizes": [600]},
    ],
    "downstream": {"vocab_sizes": [600, 1200, 2000], "seeds": [0, 1, 2], "train_bytes": 12_000, "context_bytes": 96,
                   "epochs": 1, "batch_size": 4, "layers": 1, "width": 16, "heads": 2, "max_eval_items": 40},
    "bootstrap": {"resamples": 200},
    "report": {"vocab_size": 600},
}  # fmt: skip


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return Path("missing-torch")
    from benchmarks.report import write_report
    from benchmarks.run.runner import run_experiment

    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKBENCH_CACHE", str(cache))
        run = run_experiment(parse_config(TINY, source="tiny.toml"), tmp_path_factory.mktemp("runs") / "tiny",
                             jobs=1, progress=False, device="cpu")  # fmt: skip
        write_report(run, jobs=1)
    return run


def read(run_dir: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(run_dir / name, keep_default_na=False, na_values=[""])


def test_every_row_gets_bpb_with_an_interval_over_documents_and_seeds(run_dir: Path, needs_torch: None) -> None:
    results = read(run_dir, "results.csv")
    bpb = results[results["metric"] == "bpb"]
    rows = {(row.corpus, row.tokenizer, None if pd.isna(row.vocab_size) else int(row.vocab_size))
            for row in bpb.itertuples()}  # fmt: skip
    expected = {(corpus, label, size) for corpus in ("embedded-tur", "embedded-eng") for label, size in
                [("char", 2000), ("char-bpe", 600), ("byte-bpe", 600), ("byte-bpe", 1200), ("word", 600),
                 ("cl100k", None)]}  # fmt: skip
    assert rows == expected
    assert set(bpb["eval_set"]) == {"test"}  # the embedded corpora have no parallel eval set
    assert (bpb["ci_low"] <= bpb["value"]).all() and (bpb["value"] <= bpb["ci_high"]).all()
    models = read(run_dir, stage.DOWNSTREAM_FILE)
    assert len(models) == len(expected) * 3  # three seeds
    for row in bpb.itertuples():
        of_row = models[(models["corpus"] == row.corpus) & (models["tokenizer"] == row.tokenizer)
                        & (models["vocab_size"].fillna(-1) == (-1 if pd.isna(row.vocab_size) else row.vocab_size))]
        assert row.value == pytest.approx((of_row["bits"] / of_row["bytes"]).mean())
    # the word row emits <unk>: charged 8 bits a byte, so its BPB is at least the charge's share
    word = models[models["tokenizer"] == "word"]
    assert (word["unk_bytes"] > 0).all()
    assert (word["bits"] >= 8 * word["unk_bytes"]).all()


def test_every_model_of_a_language_sees_the_same_bytes_and_steps(run_dir: Path, needs_torch: None) -> None:
    models = read(run_dir, stage.DOWNSTREAM_FILE)
    for _, rows in models.groupby("corpus"):
        assert rows["train_bytes"].nunique() == 1
        assert rows["bytes"].nunique() == 1  # the same held-out documents
        assert rows["non_embedding_parameters"].nunique() == 1  # the same body
        # the same steps: training tokens / context are the same count of sequences
        assert (rows["train_tokens"] / rows["context_tokens"]).nunique() == 1


def test_the_correlations_are_scipys_on_the_runs_own_numbers(run_dir: Path, needs_torch: None) -> None:
    results = pd.read_csv(run_dir / "results.csv", keep_default_na=False, na_values={"value": [""]})
    validity = pd.read_csv(run_dir / stage.VALIDITY_FILE, keep_default_na=False, na_values={"value": [""]})
    assert set(validity["language"]) == {"eng_Latn", "tur_Latn", "pooled"}
    checked = 0
    for row in validity[validity["language"] != "pooled"].itertuples():
        language = results[results["language"] == row.language]
        metric = language[(language["metric"] == row.metric) & (language["eval_set"] == row.eval_set)
                          & (language["reference"] == row.reference) & (language["partner"] == "")]
        target = language[(language["metric"] == "bpb") & (language["eval_set"] == row.bpb_eval_set)]
        joined = metric.merge(target, on=["tokenizer", "vocab_size"], suffixes=("", "_bpb"))
        expected = (stats.spearmanr if row.method == "spearman" else stats.kendalltau)(joined["value"],
                                                                                        joined["value_bpb"])
        assert row.n == len(joined)
        assert row.value == pytest.approx(expected.statistic, nan_ok=True)
        checked += 1
    assert checked >= 2 * 2 * 3  # both methods, both languages, three metrics at least


def test_paired_tests_cover_every_two_rows_with_holm(run_dir: Path, needs_torch: None) -> None:
    paired = read(run_dir, stage.PAIRED_FILE)
    assert len(paired) == 2 * (6 * 5 // 2)  # two corpora, six rows each
    assert (paired["p_value_holm"] >= paired["p_value"]).all()
    assert np.allclose(paired["difference"], paired["bpb_a"] - paired["bpb_b"])


def test_the_report_has_bpb_its_setup_and_the_validity_tables(run_dir: Path, needs_torch: None) -> None:
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Language modelling (bits per byte)" in report
    assert "Toy scale:" in report
    assert "Which metric predicts bits per byte" in report
    for slug in ("bpb", "bpb-validity-spearman", "bpb-validity-kendall"):
        assert (run_dir / "tables" / f"{slug}.tex").is_file()
        assert (run_dir / "tables" / f"{slug}.csv").is_file()
    assert (run_dir / "plots" / "bpb-vs-metrics.png").is_file()
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert 'data-slug="bpb-validity-spearman"' in html


def test_a_second_run_reads_every_model_from_the_cache(run_dir: Path, tmp_path: Path, needs_torch: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from benchmarks.run.runner import run_experiment

    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["downstream"]["seeds"] == [0, 1, 2]
    monkeypatch.setattr(stage, "_train_one", lambda *args: pytest.fail("a cached model was trained again"))
    cache = next(path for path in (run_dir.parent.parent).iterdir() if path.name.startswith("cache"))
    monkeypatch.setenv("TOKBENCH_CACHE", str(cache))
    again = run_experiment(parse_config(TINY, source="tiny.toml"), tmp_path / "again", jobs=1, progress=False,
                           device="cpu")  # fmt: skip
    for name in ("results.csv", stage.DOWNSTREAM_FILE, stage.PAIRED_FILE, stage.VALIDITY_FILE):
        assert (again / name).read_bytes() == (run_dir / name).read_bytes()


@pytest.mark.parametrize(("change", "code", "field", "value"), [
    ({"downstream": {"vocab_sizes": [999]}}, "table_rule", "", 999),
    ({"extra_metrics": ["bpb"]}, "table_rule", "", "bpb"),
    ({"downstream": {"width": 30, "heads": 4}}, "table_rule", "downstream", 4),
    ({"downstream": {"eval_sets": ["train"]}}, "not_allowed", "downstream.eval_sets[0]", "train"),
])  # fmt: skip
def test_bad_downstream_tables_are_refused_naming_the_key(change: dict, code: str, field: str, value: object) -> None:
    with raises_code(BenchmarkError, code, field=field, value=value):
        parse_config({**TINY, **change}, source="bad.toml")


def test_a_missing_torch_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stage, "_version", lambda package: None)
    with raises_code(BenchmarkError, "missing_package") as caught:
        stage.check_available()
    assert "pip install -e '.[downstream]'" in str(caught.value)  # the command that installs it


def test_a_corpus_without_training_text_is_refused_before_the_run_folder(tmp_path: Path, needs_torch, capsys) -> None:
    from benchmarks.cli import main

    lines = [f"Sentence number {n} of the held-out text." for n in range(40)]
    (tmp_path / "test.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "kit.toml").write_text('id = "kit"\nlanguage = "eng_Latn"\nlicense = "CC0"\ndescription = "kit"\n'
                                       '[[sources]]\nkind = "path"\nrole = "test"\nformat = "text"\n'
                                       'files = "test.txt"\n', encoding="utf-8")  # fmt: skip
    (tmp_path / "cfg.toml").write_text('name = "kit"\ncorpora = ["kit.toml"]\nproduction = ["bytes"]\n'
                                       '[downstream]\nseeds = [0]\n', encoding="utf-8")  # fmt: skip
    argv = ["run", str(tmp_path / "cfg.toml"), "--out", str(tmp_path / "out"), "--data-dir", str(tmp_path),
            "--quiet", "--jobs", "1"]  # fmt: skip
    assert main(argv) == 2
    assert "[downstream]: corpus 'kit' has no training text" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
