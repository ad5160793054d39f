"""Experiment configs: the shipped ones load, and every malformed field is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.errors import BenchmarkError
from benchmarks.run.config import load_config, parse_config
from benchmarks.run.pretrained import is_name
from tests.errors import raises_code

MINIMAL = {
    "name": "tiny",
    "corpora": ["embedded-kor"],
    "tokenizers": [{"kind": "char-bpe", "vocab_sizes": [800]}],
}


#: run identities, resumable runs and cached tokenizers hang on these: a change of the config code must not move them
SHIPPED_FINGERPRINTS = {"quick": "4acafd4216b9138d", "paper": "69542e68f2e16d4c", "inference": "8a4275e8361e0bff",
                        "research2025": "1c6b433f18ffb4ba"}


@pytest.mark.parametrize("name", list(SHIPPED_FINGERPRINTS))
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
    kinds = {"word", "char", "char-bpe", "byte-bpe", "spm-bpe", "spm-unigram"}
    # the quick report also has rows of the 2025 families
    kinds |= {"superbpe", "wordpiece", "unigram"} if name == "quick" else set()
    assert {entry.kind for entry in config.tokenizers} == kinds
    assert config.production == ("cl100k", "mistral-v1")
    assert config.fingerprint() == load_config(name).fingerprint()


def test_the_research2025_config_has_every_2025_family_and_shared_rows() -> None:
    config = load_config("research2025")
    kinds = {entry.kind for entry in config.trained_entries}
    assert {"superbpe", "wordpiece", "unigram", "parity-bpe"} <= kinds
    assert [row.label for row in config.trained_entries if config.mixture_of(row.label) is not None] == [
        "byte-bpe-multilingual-a1", "byte-bpe-multilingual-a0.5", "byte-bpe-multilingual-a0.3", "parity-bpe-a1"]
    assert "parity_vs_eng_held_out" in config.extra_metrics


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
    with raises_code(BenchmarkError, "unknown_key", value="source"):
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
    ("change", "code", "field", "value"),
    [
        ({"colour": "red"}, "unknown_key", "", "colour"),
        ({"name": 3}, "wrong_type", "name", 3),
        ({"seed": True}, "wrong_type", "seed", True),
        ({"corpora": []}, "too_short", "corpora", []),
        ({"tokenizers": [{"kind": "bert", "vocab_sizes": [10]}]}, "not_allowed", "tokenizers[0].kind", "bert"),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": [0]}]}, "out_of_range", "tokenizers[0].vocab_sizes[0]", 0),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": [9, "1k"]}]}, "wrong_type", "tokenizers[0].vocab_sizes[1]",
         "1k"),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": []}]}, "too_short", "tokenizers[0].vocab_sizes", []),
        ({"tokenizers": [{"kind": "char", "sizes": [10]}]}, "unknown_key", "tokenizers[0]", "sizes"),
        ({"tokenizers": [{"vocab_sizes": [10]}]}, "missing_key", "tokenizers[0]", "kind"),
        ({"tokenizers": [{"kind": "char", "vocab_sizes": [9]}] * 2}, "table_rule", "", "char"),
        ({"tokenizers": [], "production": []}, "table_rule", "", "tokenizers"),
        ({"pretrained": [{"name": "cl100k"}], "production": ["cl100k"]}, "table_rule", "", "cl100k"),
        ({"pretrained": [{"path": "a.json", "label": "char-bpe"}]}, "table_rule", "", "char-bpe"),
        ({"pretrained": [{"label": "x"}]}, "table_rule", "pretrained[0]", "name"),
        ({"pretrained": [{"name": "cl100k", "path": "a.json"}]}, "table_rule", "pretrained[0]", "name"),
        ({"pretrained": [{"name": "gpt5"}]}, "not_allowed", "pretrained[0].name", "gpt5"),
        ({"pretrained": [{"name": "cl100k", "pattern": "gpt2"}]}, "table_rule", "pretrained[0]", "cl100k"),
        ({"pretrained": [{"path": "q.tiktoken", "pattern": "qwen", "normalizer": "NFC"}]}, "not_allowed",
         "pretrained[0].normalizer", "NFC"),
        ({"pretrained": [{"path": "a.model", "format": "sentencepiece", "normalizer": "nfc"}]}, "table_rule",
         "pretrained[0]", "normalizer"),
        ({"pretrained": [{"path": "a.json", "format": "hf", "pattern": "gpt2"}]}, "table_rule", "pretrained[0]",
         "pattern"),
        ({"pretrained": [{"path": "a.json", "format": "json"}]}, "not_allowed", "pretrained[0].format", "json"),
        ({"pretrained": [{"path": ""}]}, "invalid", "pretrained[0].path", ""),
        ({"pretrained": [{"path": "a.json", "colour": "red"}]}, "unknown_key", "pretrained[0]", "colour"),
        ({"production": ["gpt5"]}, "not_allowed", "production[0]", "gpt5"),
        ({"metrics": ["bleu"]}, "not_allowed", "metrics[0]", "bleu"),
        ({"bootstrap": {"confidence": 1.5}}, "out_of_range", "bootstrap.confidence", 1.5),
        ({"bootstrap": {"resamples": -1}}, "out_of_range", "bootstrap.resamples", -1),
        ({"report": 4000}, "wrong_type", "report", 4000),
        ({"report": {"match": "nearest"}}, "not_allowed", "report.match", "nearest"),
        ({"report": {"unk_threshold": 0}}, "out_of_range", "report.unk_threshold", 0),
        ({"extra_metrics": ["uzan"]}, "not_allowed", "extra_metrics[0]", "uzan"),
        # a family's options are checked against its declaration (bpe.options) before any training: its code
        ({"tokenizers": [{"kind": "char-bpe", "vocab_sizes": [800], "options": {"min_frequency": 0}}]},
         "out_of_range", "tokenizers[0].options", 0),
        ({"tokenizers": [{"kind": "spm-bpe", "vocab_sizes": [800], "options": {"limit_alphabet": 50}}]},
         "unknown_option", "tokenizers[0].options", "limit_alphabet"),
        ({"tokenizers": [{"kind": "byte-bpe", "vocab_sizes": [800], "options": {"dropout": 0.1, "seed": -2}}]},
         "out_of_range", "tokenizers[0].options", -2),
    ],
)  # fmt: skip
def test_malformed_configs_name_the_field(change: dict, code: str, field: str, value: object) -> None:
    with raises_code(BenchmarkError, code, field=field, value=value) as error:
        parse_config(dict(MINIMAL, **change), source="bad.toml")
    assert str(error.value).startswith("bad.toml: ")  # the file, then where in it


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
    with raises_code(BenchmarkError, "not_toml", value=broken):
        load_config(str(broken))
    with raises_code(BenchmarkError, "missing_file", value=tmp_path / "missing.toml"):
        load_config(str(tmp_path / "missing.toml"))
    with raises_code(BenchmarkError, "unknown_config", value="nonexistent") as caught:
        load_config("nonexistent")
    assert "paper" in str(caught.value) and "quick" in str(caught.value)  # the shipped ones


def test_train_chars_axis() -> None:
    config = parse_config(dict(MINIMAL, train_chars=[10000, 50000]))
    assert config.train_chars == (10000, 50000)
    assert config.to_json()["train_chars"] == (10000, 50000)
    assert "train_chars" not in parse_config(dict(MINIMAL)).to_json()  # configs without it keep their identity
    for change, code, field, value in [
        ({"train_chars": []}, "too_short", "train_chars", []),
        ({"train_chars": [0]}, "out_of_range", "train_chars[0]", 0),
        ({"train_chars": [5, 5]}, "invalid", "train_chars", [5, 5]),
        ({"train_chars": [5], "max_train_chars": 9}, "table_rule", "", "max_train_chars"),
        ({"train_chars": [5], "tokenizers": [], "production": ["cl100k"]}, "table_rule", "", "train_chars"),
    ]:
        with raises_code(BenchmarkError, code, field=field, value=value):
            parse_config(dict(MINIMAL, **change), source="bad.toml")


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
    with raises_code(BenchmarkError, "table_rule", value="gpt2"):  # a label used twice
        load_config("flores200", ["tokenizers/other.tiktoken,pattern=gpt2,label=gpt2"])
    with raises_code(BenchmarkError, "bad_tokenizer_option", value="colour=red"):
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
    with raises_code(BenchmarkError, "missing_file", value="tokenizers/gpt2.tiktoken"):
        resolve_pretrained(config.pretrained_rows, config.source, tmp_path)
