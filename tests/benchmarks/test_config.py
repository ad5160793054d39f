"""Experiment configs: the shipped ones load, and every malformed field is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.config import load_config, parse_config
from benchmarks.errors import BenchmarkError

MINIMAL = {
    "name": "tiny",
    "corpora": ["embedded-kor"],
    "tokenizers": [{"kind": "char-bpe", "vocab_sizes": [800]}],
}


@pytest.mark.parametrize("name", ["quick", "paper"])
def test_shipped_configs_load(name: str) -> None:
    config = load_config(name)
    assert config.name == name
    assert {entry.kind for entry in config.tokenizers} == {"word", "char", "char-bpe", "byte-bpe", "spm-bpe",
                                                           "spm-unigram"}  # fmt: skip
    assert config.production == ("cl100k", "mistral-v1")
    assert config.fingerprint() == load_config(name).fingerprint()


def test_fingerprint_ignores_where_the_file_lives(tmp_path: Path) -> None:
    shipped = Path(load_config("quick").source)
    copy = tmp_path / "copy.toml"
    copy.write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_config(str(copy)).fingerprint() == load_config("quick").fingerprint()


def test_defaults() -> None:
    config = parse_config(dict(MINIMAL))
    assert config.tokenizers[0].label == "char-bpe"
    assert config.tokenizers[0].row_type == "family"
    assert (config.seed, config.bootstrap_resamples, config.confidence, config.metrics) == (0, 1000, 0.95, None)
    assert config.report_vocab_size == 800


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"name": 3}, "name: expected str"),
        ({"corpora": []}, "corpora: expected a non-empty list"),
        ({"tokenizers": [{"kind": "wordpiece", "vocab_sizes": [10]}]}, "unknown tokenizer kind 'wordpiece'"),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": [0]}]}, "vocab_sizes: expected a positive integer"),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": ["1k"]}]}, "expected a positive integer, got '1k'"),
        ({"tokenizers": [{"kind": "char", "sizes": [10]}]}, "tokenizers[0]: unknown key 'sizes'"),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": [9]}] * 2}, "label 'char' is used twice"),
        ({"production": ["gpt5"]}, "unknown production tokenizer 'gpt5'"),
        ({"metrics": ["bleu"]}, "unknown metric 'bleu'"),
        ({"bootstrap": {"confidence": 1.5}}, "bootstrap.confidence"),
        ({"bootstrap": {"resamples": -1}}, "bootstrap.resamples"),
    ],
)
def test_malformed_configs_name_the_field(change: dict, expected: str) -> None:
    with pytest.raises(BenchmarkError) as error:
        parse_config(dict(MINIMAL, **change), source="bad.toml")
    assert expected in str(error.value)
    assert str(error.value).startswith("bad.toml: ")


def test_unreadable_or_unknown_config_files(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("name = [unclosed", encoding="utf-8")
    with pytest.raises(BenchmarkError, match="not valid TOML"):
        load_config(str(broken))
    with pytest.raises(BenchmarkError, match="no such config file"):
        load_config(str(tmp_path / "missing.toml"))
    with pytest.raises(BenchmarkError, match=r"one of: .*paper.*quick"):
        load_config("nonexistent")
