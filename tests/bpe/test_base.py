"""The shared Tokenizer behaviour in bpe.base: encoding a word in its mid-sentence form."""

from __future__ import annotations

import pytest

import bpe
from tests.conftest import leading


def test_encode_word_matches_the_word_inside_running_text(embedded_text):
    tokenizer = bpe.train("byte-bpe", leading(embedded_text["eng_Latn"], 40_000), 1000)
    text = "the quick thermometer"
    running = tokenizer.encode_with_spans(text)
    word = tokenizer.encode_word("thermometer")
    # the tokens of " thermometer" inside the sentence, spans moved onto the bare word
    start = text.index(" thermometer")
    inside = [(i, s, e) for i, (s, e) in zip(running.ids, running.spans, strict=True) if s >= start]
    assert word.ids == [i for i, _, _ in inside]
    assert word.spans[0][0] == 0 and word.spans[-1][1] == len("thermometer")
    assert tokenizer.decode(word.ids) == " thermometer"


def test_encode_word_drops_a_token_that_covers_only_the_prefix_space(embedded_text):
    tokenizer = bpe.train("char", leading(embedded_text["tur_Latn"], 20_000), 500)
    encoding = tokenizer.encode_word("çıkmazına")
    assert tokenizer.pieces(encoding.ids) == list("çıkmazına")
    assert encoding.spans[0] == (0, 2)  # ç is two UTF-8 bytes


def test_sentencepiece_word_uses_its_dummy_prefix():
    mistral = bpe.load("mistral-v1")
    encoding = mistral.encode_word("world")
    assert mistral.pieces(encoding.ids) == ["▁world"]
    assert encoding.spans == [(0, 5)]


@pytest.mark.parametrize("kind", ["word", "char", "char-bpe", "byte-bpe"])
def test_ids_only_encode_agrees_with_encode_with_spans(kind, embedded_text, flores_sample):
    tokenizer = bpe.train(kind, leading(embedded_text["rus_Cyrl"], 60_000), 1000)
    for line in flores_sample["rus_Cyrl"] + flores_sample["kor_Hang"][:50]:
        assert tokenizer.encode(line) == tokenizer.encode_with_spans(line).ids
