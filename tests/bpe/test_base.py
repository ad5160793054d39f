"""The shared Tokenizer behaviour in bpe.base: encoding a word in its mid-sentence form."""

from __future__ import annotations

import pytest

import bpe


def test_encode_word_matches_the_word_inside_running_text(flores_lines):
    tokenizer = bpe.train("byte-bpe", flores_lines["eng_Latn"][:300], 1000)
    text = "the quick thermometer"
    running = tokenizer.encode_with_spans(text)
    word = tokenizer.encode_word("thermometer")
    # the tokens of " thermometer" inside the sentence, spans moved onto the bare word
    start = text.index(" thermometer")
    inside = [(i, s, e) for i, (s, e) in zip(running.ids, running.spans, strict=True) if s >= start]
    assert word.ids == [i for i, _, _ in inside]
    assert word.spans[0][0] == 0 and word.spans[-1][1] == len("thermometer")
    assert tokenizer.decode(word.ids) == " thermometer"


def test_encode_word_drops_a_token_that_covers_only_the_prefix_space(flores_lines):
    tokenizer = bpe.train("char", flores_lines["tur_Latn"][:200], 500)
    encoding = tokenizer.encode_word("çıkmazına")
    assert tokenizer.pieces(encoding.ids) == list("çıkmazına")
    assert encoding.spans[0] == (0, 2)  # ç is two UTF-8 bytes


def test_sentencepiece_word_uses_its_dummy_prefix():
    mistral = bpe.load("mistral-v1")
    encoding = mistral.encode_word("world")
    assert mistral.pieces(encoding.ids) == ["▁world"]
    assert encoding.spans == [(0, 5)]


@pytest.mark.parametrize("kind", ["word", "char", "char-bpe", "byte-bpe"])
def test_ids_only_encode_agrees_with_encode_with_spans(kind, flores_lines):
    tokenizer = bpe.train(kind, flores_lines["rus_Cyrl"][:400], 1000)
    for line in flores_lines["rus_Cyrl"][400:600] + flores_lines["kor_Hang"][:50]:
        assert tokenizer.encode(line) == tokenizer.encode_with_spans(line).ids
