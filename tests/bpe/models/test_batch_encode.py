"""Batch encoding (bpe.models.batch_encode): the compiled encoder gives exactly tokenizer.encode, and the JSON
lines json.dumps writes, for char-bpe and byte-bpe on four languages."""

from __future__ import annotations

import json

import pytest

import bpe
from bpe.base import TokenizerError
from bpe.models.batch_encode import BatchEncoder
from tests.conftest import MERGE_FAMILY_CASES
from tests.errors import raises_code

LANGUAGES = ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang")
ODD = ["", " ", "a  b", "\u00a0x \u2028 😀", "don't 'LL", "\t\r\n", "e\u0301 ² Ⅻ ٣", "<s> </s>"]


@pytest.mark.parametrize(("kind", "options"), MERGE_FAMILY_CASES)
def test_batch_encoding_equals_encode(embedded_text: dict[str, list[str]], kind: str, options: dict) -> None:
    train = [line for language in LANGUAGES for line in embedded_text[language][:400]]
    tokenizer = bpe.train(kind, train, 1500, **options)
    encoder = BatchEncoder(tokenizer)
    for language in LANGUAGES:
        texts = embedded_text[language][-300:] + ODD
        expected = [tokenizer.encode(text) for text in texts]
        ids, per_text = encoder.encode(texts)
        assert per_text.tolist() == [len(e) for e in expected]
        assert ids.tolist() == [i for e in expected for i in e]
        # a second call reuses the cache of merged pre-tokens
        assert encoder.json_lines(texts) == "".join(json.dumps(e) + "\n" for e in expected).encode("utf-8")


def test_batch_encoding_on_flores(flores: dict[str, list[str]]) -> None:
    """Trained on the first half of every language's FLORES lines, encoding the second half."""
    half = {language: len(lines) // 2 for language, lines in flores.items()}
    tokenizer = bpe.train(
        "byte-bpe", [line for language in LANGUAGES for line in flores[language][: half[language]]], 4000
    )
    encoder = BatchEncoder(tokenizer)
    for language in LANGUAGES:
        texts = flores[language][half[language] :]
        assert encoder.json_lines(texts).decode().splitlines() == [json.dumps(tokenizer.encode(t)) for t in texts]


def test_what_batch_encoding_supports() -> None:
    lines = ["merhaba dünya"] * 20
    assert not BatchEncoder.supports(bpe.train("byte-bpe", lines, 300, pretokenizer="cl100k"))
    assert BatchEncoder.supports(bpe.train("char-bpe", lines, 300))
    assert not BatchEncoder.supports(bpe.train("char-bpe", lines, 300, encode_mode="longest-prefix"))
    # sampling, a normalizer and the morpheme pre-tokenizer change ids in ways the kernel does not reproduce
    assert not BatchEncoder.supports(bpe.train("byte-bpe", lines, 300, dropout=0.1))
    assert not BatchEncoder.supports(bpe.train("char-bpe", ["간장 계란밥"] * 20, 30, normalizer="jamo"))
    assert not BatchEncoder.supports(bpe.train("char-bpe", ["간장 계란밥"] * 20, 30, pretokenizer="morpheme"))
    assert not BatchEncoder.supports(bpe.train("morfessor", lines, 40))
    assert not BatchEncoder.supports(bpe.train("word", lines, 30))
    with raises_code(TokenizerError, "not_supported", value="word"):
        BatchEncoder(bpe.train("word", lines, 30))
