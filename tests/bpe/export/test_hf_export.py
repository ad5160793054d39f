"""Independent cross-check: our BPE exported to Hugging Face ``tokenizers`` gives the same ids.

Tokenizers are trained on the embedded corpora of the four languages and compared on every FLORES
line (evaluation text they never saw): the full data root's, else the sample's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tokenizers import Regex, Tokenizer
from tokenizers.pre_tokenizers import Split

import bpe
from bpe.base import TokenizerError
from bpe.export.hf_export import oniguruma_pattern, to_hf_json
from bpe.models.byte_bpe import ByteBPETokenizer
from bpe.pipeline.pretokenizers import PRETOKENIZERS
from tests.conftest import leading
from tests.errors import raises_code

VOCAB_SIZE = 8000

EXPORTS = [
    pytest.param("byte-bpe", {}, id="byte-bpe-gpt2"),  # HF ByteLevel's own GPT-2 regex
    pytest.param("byte-bpe", {"pretokenizer": "cl100k"}, id="byte-bpe-cl100k"),  # Split + Oniguruma rewrite
    pytest.param("char-bpe", {"end_of_word": "attached"}, id="char-bpe-attached"),
    pytest.param("byte-bpe", {"pretokenizer": "o200k"}, id="byte-bpe-o200k", marks=pytest.mark.slow),
    pytest.param("char-bpe", {"end_of_word": "none"}, id="char-bpe-none", marks=pytest.mark.slow),
    pytest.param("unigram", {}, id="unigram", marks=pytest.mark.slow),  # HF's Unigram model: Viterbi, fused <unk>s
    pytest.param(
        "char-bpe",
        {"end_of_word": "attached", "pretokenizer": "whitespace", "limit_alphabet": 300},  # <unk> for rare characters
        id="char-bpe-attached-whitespace-limited",
        marks=pytest.mark.slow,
    ),
]


def export(tokenizer: bpe.Tokenizer, directory: Path) -> Tokenizer:
    path = directory / "tokenizer.json"
    path.write_text(to_hf_json(tokenizer), encoding="utf-8")
    return Tokenizer.from_file(str(path))


@pytest.fixture(scope="module")
def exported(
    embedded_text: dict[str, list[str]], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str, dict], tuple[bpe.Tokenizer, Tokenizer]]:
    """(ours, theirs) per export, trained once (whatever the FLORES set) on all the embedded training text."""
    texts = [text for texts in embedded_text.values() for text in texts]
    trained: dict[str, tuple[bpe.Tokenizer, Tokenizer]] = {}

    def train_and_export(kind: str, options: dict) -> tuple[bpe.Tokenizer, Tokenizer]:
        key = json.dumps([kind, options], sort_keys=True)
        if key not in trained:
            ours = bpe.train(kind, texts, VOCAB_SIZE, **options)
            trained[key] = ours, export(ours, tmp_path_factory.mktemp("hf"))
        return trained[key]

    return train_and_export


@pytest.mark.parametrize(("kind", "options"), EXPORTS)
def test_hf_gives_our_ids_on_every_flores_line(
    kind: str, options: dict, exported: Callable[[str, dict], tuple[bpe.Tokenizer, Tokenizer]],
    flores: dict[str, list[str]],
) -> None:
    ours, theirs = exported(kind, options)
    assert theirs.get_vocab_size() == ours.vocab_size == VOCAB_SIZE
    for language, lines in flores.items():
        assert len(lines) == len(flores["eng_Latn"]) >= 100
        hf_ids = [encoding.ids for encoding in theirs.encode_batch(lines, add_special_tokens=False)]
        for number, (line, expected) in enumerate(zip(lines, hf_ids, strict=True), start=1):
            ids = ours.encode(line)
            assert ids == expected, (language, number, ours.pieces(ids), ours.pieces(expected))
            assert theirs.decode(ids, skip_special_tokens=False) == ours.decode(ids), (language, number)


@pytest.mark.parametrize("name", [name for name, p in PRETOKENIZERS.items() if p.is_regex and p.pattern is not None])
def test_split_pattern_pretokenizes_like_ours(name: str, flores: dict[str, list[str]]) -> None:
    """HF's Oniguruma reads our regexes (after ``oniguruma_pattern``) exactly as the ``regex`` module does."""
    ours = PRETOKENIZERS[name]
    split = Split(Regex(oniguruma_pattern(ours.pattern)), behavior="isolated")
    for lines in flores.values():
        for line in lines:
            assert [piece for piece, _ in split.pre_tokenize_str(line)] == ours.split(line), (name, line)


def test_possessive_interval_needs_the_rewrite() -> None:
    """Without the rewrite Oniguruma reads cl100k's ``\\p{N}{1,3}+`` as "runs of 1-3 digits, repeated"."""
    cl100k = PRETOKENIZERS["cl100k"]
    assert cl100k.split("0230") == ["023", "0"]
    raw = Split(Regex(cl100k.pattern), behavior="isolated")
    assert [piece for piece, _ in raw.pre_tokenize_str("0230")] == ["0230"]
    assert oniguruma_pattern(r"\p{N}{1,3}+|[ab]{2}+|x++") == r"(?>\p{N}{1,3})|(?>[ab]{2})|x++"


def test_unexportable_tokenizers_are_refused(embedded_text: dict[str, list[str]]) -> None:
    text = leading(embedded_text["eng_Latn"], 30_000)
    refused = [
        bpe.train("char-bpe", text, 1000),  # end_of_word "separate": HF's BPE has no separate marker symbol
        bpe.train("word", text, 1000),
        bpe.train("char", text, 1000),
        bpe.train("byte-bpe", text, 1000, encode_mode="greedy"),
        bpe.train("byte-bpe", text, 1000, dropout=0.1),
        bpe.train("byte-bpe", text, 1000, normalizer="jamo"),
        bpe.train("byte-bpe", ["한국어 문장입니다", "형태소 분석"], 300, pretokenizer="morpheme"),
        bpe.load("cl100k"),
    ]
    for tokenizer in refused:
        with raises_code(TokenizerError, "not_exportable") as caught:
            to_hf_json(tokenizer)
        assert "byte-bpe" in str(caught.value)  # names what is exportable


def test_pieces_spelled_alike_are_refused() -> None:
    """Two ids for one string (here "abc" from ab+c and a+bc) cannot live in a HF vocabulary."""
    a, b, c = (4 + ord(char) for char in "abc")  # byte ids follow the 4 specials
    ab, bc = 260, 262
    tokenizer = ByteBPETokenizer([(a, b), (ab, c), (b, c), (a, bc)])
    assert tokenizer.pieces([261, 263]) == ["abc", "abc"]
    with raises_code(TokenizerError, "not_exportable", value="abc") as caught:
        to_hf_json(tokenizer)
    assert "261" in str(caught.value) and "263" in str(caught.value)  # names both ids
