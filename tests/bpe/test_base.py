"""The shared Tokenizer behaviour in bpe.base: encoding a word in its mid-sentence form."""

from __future__ import annotations

import copy

import pytest

import bpe
from tests.conftest import MERGE_FAMILY_CASES, leading, same_word_arrays
from tests.errors import raises_code


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


ODD_WORDS = ["", " ", "a", "don't", "\u00a0x", "😀", "e\u0301", "<unk>", "٣²", "a" * 120, "ab" * 70,
             "çekoslovakyalılaştıramadıklarımızdanmışsınızcasına"]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "options"),
    [
        *MERGE_FAMILY_CASES,
        ("char-bpe", {"normalizer": "jamo"}),
        ("char-bpe", {"encode_mode": "longest-prefix"}),
        ("byte-bpe", {"dropout": 0.2}),
        ("char-bpe", {"dropout": 0.3, "seed": 7}),
        ("word", {}),
        ("char", {"normalizer": "jamo"}),
    ],
)
def test_encode_words_equals_encode_word(kind, options, embedded_text, flores_sample):
    """The batch path (pre-tokens new to the cache merged in one compiled call from 1,000 of them on) gives
    every word's ``encode_word`` on a tokenizer that has not seen the words: four scripts, words longer than
    the compiled merge's heap threshold, unknown characters, the empty word."""
    train = [line for language in ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang")
             for line in leading(embedded_text[language], 20_000)]  # fmt: skip
    tokenizer = bpe.train(kind, train, 1200, **options)
    words = list(dict.fromkeys(word for lines in flores_sample.values() for line in lines for word in line.split()))
    words += ODD_WORDS
    assert len(words) > 2_000
    fresh_copy = copy.deepcopy(tokenizer)
    expected = [copy.deepcopy(tokenizer).encode_word(word) for word in words[:50]]
    fresh = copy.deepcopy(tokenizer)
    expected += [fresh.encode_word(word) for word in words[50:]]
    assert tokenizer.encode_words(words[:50]) == expected[:50]  # few words: per pre-token
    assert tokenizer.encode_words(words[50:]) == expected[50:]
    assert tokenizer.encode_words(words) == expected  # now all from the cache
    assert same_word_arrays(fresh_copy.encode_word_arrays(words), expected)  # new pre-tokens
    assert same_word_arrays(tokenizer.encode_word_arrays(words), expected)  # cached ones
    with raises_code(bpe.TokenizerError, "lone_surrogate", value="\udfff"):
        tokenizer.encode_words(["ok", "bad \udfff"])
    with raises_code(bpe.TokenizerError, "lone_surrogate", value="\udfff"):
        tokenizer.encode_word_arrays(["ok", "bad \udfff"])


@pytest.mark.parametrize(("kind", "options"), [("byte-bpe", {}), ("char-bpe", {"normalizer": "jamo"}),
                                               ("char-bpe", {"dropout": 0.2}), ("byte-bpe", {"dropout": 0.1}),
                                               ("char-bpe", {"dropout": 0.2, "normalizer": "jamo"}),
                                               ("word", {})])  # fmt: skip
def test_encode_texts_equals_encode_with_spans(kind, options, embedded_text, flores_sample):
    """Texts in one call (new pre-tokens merged at once) give each text's ``encode_with_spans``."""
    train = [line for language in ("eng_Latn", "kor_Hang") for line in leading(embedded_text[language], 20_000)]
    tokenizer = bpe.train(kind, train, 1200, **options)
    texts = [line for lines in flores_sample.values() for line in lines] + ["", " ", "a  b\t😀", "e\u0301 ٣"]
    expected = [copy.deepcopy(tokenizer).encode_with_spans(text) for text in texts]
    assert tokenizer.encode_texts(texts) == expected
    with raises_code(bpe.TokenizerError, "lone_surrogate", value="\udfff"):
        tokenizer.encode_texts(["ok", "bad \udfff"])
