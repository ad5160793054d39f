"""Experiment configs: the shipped ones load, and every malformed field is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.errors import BenchmarkError
from benchmarks.run.config import load_config, parse_config
from benchmarks.run.pretrained import is_name

MINIMAL = {
    "name": "tiny",
    "corpora": ["embedded-kor"],
    "tokenizers": [{"kind": "char-bpe", "vocab_sizes": [800]}],
}


#: run identities, resumable runs and cached tokenizers hang on these: a change of the config code must not move them
SHIPPED_FINGERPRINTS = {"quick": "4ed2048787d96892", "paper": "69542e68f2e16d4c", "inference": "8a4275e8361e0bff"}


@pytest.mark.parametrize("name", ["quick", "paper", "inference"])
def test_shipped_config_fingerprints_are_unchanged(name: str) -> None:
    assert load_config(name).fingerprint() == SHIPPED_FINGERPRINTS[name]


def test_to_json_is_the_flat_identity_of_a_config() -> None:
    config = load_config("quick")
    data = config.to_json()
    assert list(data) == [
        "name", "description", "seed", "corpora", "tokenizers", "production", "max_train_chars", "metrics",
        "bootstrap_resamples", "confidence", "report_vocab_size",
    ]  # fmt: skip
    # optional metrics join the identity only when a config names them (the paper config does)
    assert load_config("paper").to_json()["extra_metrics"] == ("boundary_f1_in_vocab", "morphscore_upstream")
    assert data["tokenizers"][3] == {
        "kind": "char-bpe",
        "label": "char-bpe-greedy",
        "vocab_sizes": (4000,),
        "options": {"end_of_word": "separate", "encode_mode": "longest-prefix"},
    }
    assert (data["bootstrap_resamples"], data["confidence"], data["report_vocab_size"]) == (1000, 0.95, 4000)
    assert "source" not in data and config.source.endswith("quick.toml")


@pytest.mark.parametrize("name", ["quick", "paper"])
def test_shipped_configs_load(name: str) -> None:
    config = load_config(name)
    assert config.name == name
    assert {entry.kind for entry in config.tokenizers} == {"word", "char", "char-bpe", "byte-bpe", "spm-bpe",
                                                           "spm-unigram"}  # fmt: skip
    assert config.production == ("cl100k", "mistral-v1")
    assert config.fingerprint() == load_config(name).fingerprint()


def test_the_inference_config_loads() -> None:
    config = load_config("inference")
    modes = {entry.options.get("encode_mode", "merges") for entry in config.tokenizers if entry.kind == "char-bpe"}
    assert modes == {"merges", "longest-prefix", "longest-suffix", "longest-token", "fewest-tokens"}
    assert {entry.kind for entry in config.tokenizers} == {"char-bpe", "byte-bpe", "morfessor", "bpe-knockout"}
    assert [entry.label for entry in config.tokenizers if entry.samples] == ["char-bpe-dropout-0.1",
                                                                            "byte-bpe-dropout-0.1"]  # fmt: skip
    assert config.to_json()["seeds"] == (0, 1, 2, 3, 4)
    assert all(entry.corpora == ("ud-kor",) for entry in config.tokenizers
               if entry.options.get("normalizer") == "jamo" or entry.options.get("pretokenizer") == "morpheme")


def test_fingerprint_ignores_where_the_file_lives(tmp_path: Path) -> None:
    shipped = Path(load_config("quick").source)
    copy = tmp_path / "copy.toml"
    copy.write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_config(str(copy)).fingerprint() == load_config("quick").fingerprint()


def test_source_is_not_a_config_key() -> None:
    with pytest.raises(BenchmarkError, match="unknown key 'source'"):
        parse_config(dict(MINIMAL, source="elsewhere.toml"))


def test_defaults() -> None:
    config = parse_config(dict(MINIMAL))
    assert config.tokenizers[0].label == "char-bpe"
    assert config.tokenizers[0].row_type == "family"
    assert (config.seed, config.bootstrap_resamples, config.confidence, config.metrics) == (0, 1000, 0.95, None)
    assert config.report_vocab_size == 800
    assert (config.report.match, config.report.unk_threshold, config.extra_metrics) == ("requested", 0.1, ())


def test_extra_metrics_join_the_identity_only_when_set() -> None:
    plain = parse_config(dict(MINIMAL))
    assert "extra_metrics" not in plain.to_json()
    extra = parse_config(dict(MINIMAL, extra_metrics=["morphscore_upstream"]))
    assert extra.to_json()["extra_metrics"] == ("morphscore_upstream",)
    assert extra.fingerprint() != plain.fingerprint()
    # how the report draws its tables changes no result, so no run identity
    drawn = parse_config(dict(MINIMAL, report={"match": "reached", "unk_threshold": 0.2}))
    assert drawn.fingerprint() == plain.fingerprint()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"colour": "red"}, "unknown key 'colour'; allowed keys: name, description, seed, seeds, corpora, tokenizers"),
        ({"name": 3}, "name: must be a string, got 3"),
        ({"seed": True}, "seed: must be an integer >= 0, got True"),
        ({"corpora": []}, "corpora: must hold at least 1 entry, got []"),
        (
            {"tokenizers": [{"kind": "wordpiece", "vocab_sizes": [10]}]},
            "tokenizers[0].kind: must be 'word', 'char', 'char-bpe', 'byte-bpe', 'spm-bpe', 'spm-unigram', 'morfessor' "
            "or 'bpe-knockout', got 'word",
        ),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": [0]}]}, "vocab_sizes[0]: must be an integer >= 1, got 0"),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": [9, "1k"]}]}, "[1]: must be an integer >= 1, got '1k'"),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": []}]}, "tokenizers[0].vocab_sizes: must hold at least 1"),
        ({"tokenizers": [{"kind": "char", "sizes": [10]}]}, "tokenizers[0]: unknown key 'sizes'"),
        ({"tokenizers": [{"vocab_sizes": [10]}]}, "tokenizers[0]: missing required key 'kind'"),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": [9]}] * 2}, "label 'char' is used twice"),
        ({"tokenizers": [], "production": []}, "expected at least one tokenizer: [[tokenizers]] or [[pretrained]]"),
        ({"pretrained": [{"name": "cl100k"}], "production": ["cl100k"]}, "label 'cl100k' is used twice"),
        ({"pretrained": [{"path": "a.json", "label": "char-bpe"}]}, "label 'char-bpe' is used twice"),
        ({"pretrained": [{"label": "x"}]}, "pretrained[0]: give exactly one of 'name' (a tokenizer tokbench knows"),
        ({"pretrained": [{"name": "cl100k", "path": "a.json"}]}, "pretrained[0]: give exactly one of 'name'"),
        ({"pretrained": [{"name": "gpt5"}]}, "pretrained[0].name: must be 'cl100k', 'mistral-v1', "),
        ({"pretrained": [{"name": "cl100k", "pattern": "gpt2"}]},
         "'format', 'pattern' and 'normalizer' apply to a 'path'"),
        ({"pretrained": [{"path": "q.tiktoken", "pattern": "qwen", "normalizer": "NFC"}]},
         "pretrained[0].normalizer: must be 'none', 'jamo' or 'nfc', got 'NFC'"),
        ({"pretrained": [{"path": "a.model", "format": "sentencepiece", "normalizer": "nfc"}]},
         "'normalizer' applies to a tiktoken rank file only (format 'tiktoken'), not to format 'sentencepiece'"),
        ({"pretrained": [{"path": "a.json", "format": "hf", "pattern": "gpt2"}]},
         "'pattern' applies to a tiktoken rank file only (format 'tiktoken'), not to format 'hf'"),
        ({"pretrained": [{"path": "a.json", "format": "json"}]}, "pretrained[0].format: must be 'tokbench', 'hf', "),
        ({"pretrained": [{"path": ""}]}, "pretrained[0].path: must be a non-empty string, got ''"),
        ({"pretrained": [{"path": "a.json", "colour": "red"}]}, "pretrained[0]: unknown key 'colour'; allowed keys: "
                                                                 "name, path, label, format, pattern, normalizer"),
        ({"production": ["gpt5"]}, "production[0]: must be 'cl100k', 'mistral-v1', "),
        ({"metrics": ["bleu"]}, "metrics[0]: must be 'unk_token_rate', "),
        ({"bootstrap": {"confidence": 1.5}}, "bootstrap.confidence: must be a number in (0.5, 1), got 1.5"),
        ({"bootstrap": {"resamples": -1}}, "bootstrap.resamples: must be an integer >= 1, got -1"),
        ({"report": 4000}, "report: must be a table, got 4000"),
        ({"report": {"match": "nearest"}}, "report.match: must be 'requested' or 'reached', got 'nearest'"),
        ({"report": {"unk_threshold": 0}}, "report.unk_threshold: must be a number in (0, 1], got 0"),
        ({"extra_metrics": ["uzan"]}, "extra_metrics[0]: must be 'unk_token_rate', "),
        # a family's options are checked against its declaration (bpe.options) before any training
        (
            {"tokenizers": [{"kind": "char-bpe", "vocab_sizes": [800], "options": {"min_frequency": 0}}]},
            "tokenizers[0].options: min_frequency must be an integer >= 1, got 0",
        ),
        (
            {"tokenizers": [{"kind": "spm-bpe", "vocab_sizes": [800], "options": {"limit_alphabet": 50}}]},
            "tokenizers[0].options: spm-bpe does not take option(s): limit_alphabet",
        ),
        (
            {"tokenizers": [{"kind": "byte-bpe", "vocab_sizes": [800], "options": {"dropout": 0.1, "seed": -2}}]},
            "tokenizers[0].options: seed must be an integer >= 0, got -2",
        ),
    ],
)
def test_malformed_configs_name_the_field(change: dict, expected: str) -> None:
    with pytest.raises(BenchmarkError) as error:
        parse_config(dict(MINIMAL, **change), source="bad.toml")
    assert expected in str(error.value)
    assert str(error.value).startswith("bad.toml: ")


def test_pretrained_tables_and_production_names_are_one_list_of_rows() -> None:
    config = parse_config(dict(MINIMAL, production=["cl100k"], pretrained=[
        {"path": "tokenizers/gpt2.tiktoken", "pattern": "gpt2"},
        {"path": "exported/byte-bpe/tokenizer.json", "format": "hf"},
        {"name": "mistral-v3", "label": "Mistral v3"},
    ]))  # fmt: skip
    assert [(row.label, row.source, row.format, row.pattern, is_name(row)) for row in config.pretrained_rows] == [
        ("cl100k", "cl100k", None, None, True),
        ("gpt2", "tokenizers/gpt2.tiktoken", None, "gpt2", False),  # default label: the file name without suffix
        ("byte-bpe", "exported/byte-bpe/tokenizer.json", "hf", None, False),  # a tokenizer.json: its folder's name
        ("Mistral v3", "mistral-v3", None, None, True),
    ]
    # [[pretrained]] joins the identity only where it is used: configs without it keep their fingerprints
    assert config.to_json()["pretrained"][0] == {"path": "tokenizers/gpt2.tiktoken", "label": "gpt2", "pattern": "gpt2"}
    assert "pretrained" not in parse_config(dict(MINIMAL)).to_json()
    only_pretrained = parse_config({"name": "p", "corpora": ["embedded-kor"], "pretrained": [{"name": "bytes"}]})
    assert only_pretrained.tokenizers == () and only_pretrained.report_vocab_size == 1


def test_unreadable_or_unknown_config_files(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("name = [unclosed", encoding="utf-8")
    with pytest.raises(BenchmarkError, match="not valid TOML"):
        load_config(str(broken))
    with pytest.raises(BenchmarkError, match="no such config file"):
        load_config(str(tmp_path / "missing.toml"))
    with pytest.raises(BenchmarkError, match=r"one of: .*paper.*quick"):
        load_config("nonexistent")


def test_train_chars_axis() -> None:
    config = parse_config(dict(MINIMAL, train_chars=[10000, 50000]))
    assert config.train_chars == (10000, 50000)
    assert config.to_json()["train_chars"] == (10000, 50000)
    assert "train_chars" not in parse_config(dict(MINIMAL)).to_json()  # configs without it keep their identity
    for change, expected in [
        ({"train_chars": []}, "train_chars: must hold at least 1 entry"),
        ({"train_chars": [0]}, "train_chars[0]: must be an integer >= 1, got 0"),
        ({"train_chars": [5, 5]}, "train_chars: must not repeat an entry: 5 is given twice"),
        ({"train_chars": [5], "max_train_chars": 9}, "give max_train_chars or train_chars, not both"),
        ({"train_chars": [5], "tokenizers": [], "production": ["cl100k"]}, "applies to [[tokenizers]] rows"),
    ]:
        with pytest.raises(BenchmarkError) as error:
            parse_config(dict(MINIMAL, **change), source="bad.toml")
        assert expected in str(error.value)


def test_tokenizer_options_add_pretrained_rows_validated_as_the_files_own() -> None:
    """`tokbench run CONFIG --tokenizer ...`: a name or a file with its settings, one [[pretrained]] row each."""
    from benchmarks.run.config import load_config, tokenizer_option

    assert tokenizer_option("mistral-v1") == {"name": "mistral-v1"}
    assert tokenizer_option("tokenizers/x.tiktoken,pattern=gpt2,label=mine") == {
        "path": "tokenizers/x.tiktoken", "pattern": "gpt2", "label": "mine"}
    config = load_config("flores200", ["mistral-v1", "tokenizers/x.tiktoken,pattern=gpt2,label=mine"])
    labels = [row.label for row in config.pretrained_rows]
    assert labels[-2:] == ["mistral-v1", "mine"] and config.pretrained_rows[-1].pattern == "gpt2"
    assert config.fingerprint() != load_config("flores200").fingerprint()
    with pytest.raises(BenchmarkError, match="label 'gpt2' is used twice"):
        load_config("flores200", ["tokenizers/other.tiktoken,pattern=gpt2,label=gpt2"])
    with pytest.raises(BenchmarkError, match="expected NAME or PATH, then ,key=value settings"):
        tokenizer_option("x.json,colour=red")


def test_a_published_file_by_name_is_a_production_row_loaded_from_the_data_root(tmp_path) -> None:
    """`production = ["gpt2"]`: the data root's gpt2.tiktoken with the GPT-2 pattern, recorded as that file."""
    from benchmarks.run.config import parse_config
    from benchmarks.run.pretrained import resolve_pretrained
    from tests.conftest import DATA_ROOT_ABSENT, FULL_DATA_ROOT

    config = parse_config({"name": "n", "corpora": ["embedded-eng"], "production": ["gpt2", "cl100k"]})
    assert [row.source for row in config.pretrained_rows] == ["gpt2", "cl100k"]
    if FULL_DATA_ROOT is None:
        pytest.skip(DATA_ROOT_ABSENT)
    rows = resolve_pretrained(config.pretrained_rows, config.source, FULL_DATA_ROOT)
    assert rows["gpt2"].file == (FULL_DATA_ROOT / "tokenizers" / "gpt2.tiktoken").resolve()
    assert rows["gpt2"].load().encode("hello world") == [31373, 995]
    with pytest.raises(BenchmarkError, match=r"pretrained tokenizer 'gpt2'.*tokenizers/gpt2\.tiktoken: not found"):
        resolve_pretrained(config.pretrained_rows, config.source, tmp_path)
