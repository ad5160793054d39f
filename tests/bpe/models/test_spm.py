"""Reference rows spm-bpe / spm-unigram: special-token layout, determinism, honest byte spans, save/load, errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe
from bpe.base import DEFAULT_SPECIAL_TOKENS, Tokenizer, TokenizerError
from bpe.models.inference import INFERENCE_METHODS
from bpe.models.spm import WHITESPACE_MARK
from tests.conftest import leading, same_word_arrays
from tests.errors import UNSET, raises_code

KINDS = ("spm-bpe", "spm-unigram")
VOCAB_SIZE = 4000


@pytest.fixture(scope="module")
def training_text(embedded_text: dict[str, list[str]]) -> list[str]:
    """About 120,000 characters per language of the embedded corpora (Korean: all 52,000): fast, and
    every script is covered."""
    return [text for texts in embedded_text.values() for text in leading(texts, 120_000)]


@pytest.fixture(scope="module", params=KINDS)
def trained(request: pytest.FixtureRequest, training_text: list[str]) -> Tokenizer:
    return bpe.train(request.param, training_text, VOCAB_SIZE)


def assert_spans_are_honest(tokenizer: Tokenizer, text: str) -> None:
    """Spans tile the UTF-8 text in order, and each token's bytes are exactly the text it covers,
    except that the first token also carries sentencepiece's dummy-prefix space."""
    encoding = tokenizer.encode_with_spans(text)
    data = text.encode("utf-8")
    cursor = 0
    for position, (token_id, (start, end)) in enumerate(zip(encoding.ids, encoding.spans, strict=True)):
        assert start == cursor, (text, position)
        expected = (b" " if position == 0 else b"") + data[start:end]
        assert tokenizer.id_to_bytes(token_id) == expected, (text, position, tokenizer.id_to_piece(token_id))
        cursor = end
    assert cursor == len(data)


def test_special_and_byte_piece_layout(trained: Tokenizer) -> None:
    assert trained.vocab_size == VOCAB_SIZE
    assert trained.pieces(range(4)) == list(DEFAULT_SPECIAL_TOKENS)
    assert trained.unk_id == 1
    # byte fallback: the 256 byte pieces follow the specials
    assert trained.pieces([4, 4 + 0xEA, 259]) == ["<0x00>", "<0xEA>", "<0xFF>"]
    assert [trained.id_to_bytes(i) for i in (4, 4 + 0xEA, 259)] == [b"\x00", b"\xea", b"\xff"]
    assert [trained.id_to_bytes(i) for i in range(4)] == [b""] * 4


def test_training_is_deterministic_and_leaves_no_files(
    training_text: list[str], tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for kind in KINDS:
        first, second = (bpe.train(kind, training_text[::3], 2000).to_dict() for _ in range(2))
        assert first["model"] == second["model"], kind  # byte-identical serialized models
    assert list(tmp_path.iterdir()) == []


def test_flores_spans_and_round_trip(trained: Tokenizer, flores: dict[str, list[str]]) -> None:
    for lines in flores.values():
        for line in lines:
            assert_spans_are_honest(trained, line)
            assert trained.decode(trained.encode(line)) == line


def test_byte_fallback_pieces_cover_one_byte_each(trained: Tokenizer) -> None:
    text = "a 𓀀 b"  # an Egyptian hieroglyph: in no training sentence, so spelled with 4 byte pieces
    encoding = trained.encode_with_spans(text)
    pieces = trained.pieces(encoding.ids)
    first_byte = pieces.index("<0xF0>")
    assert pieces[first_byte : first_byte + 4] == ["<0xF0>", "<0x93>", "<0x80>", "<0x80>"]
    assert encoding.spans[first_byte : first_byte + 4] == [(2, 3), (3, 4), (4, 5), (5, 6)]
    assert trained.decode(encoding.ids) == text


def test_words_encoded_in_one_batch_as_one_by_one(trained: Tokenizer, flores_sample: dict[str, list[str]]) -> None:
    """``encode_words`` (sentencepiece's batch encoder, ids only, spans from the pieces' bytes) gives every
    word's ``encode_word``: Latin, Cyrillic, Hangul, byte-fallback characters, the empty word, whitespace,
    a literal ``▁``, control characters; a word with no UTF-8 form is the usual error."""
    odd = ["𓀀", "a𓀀b", "", " ", "  a", "a  b ", "\t\n", "a ▁ b", "▁", "▁x", "x\x00y\x01", "e\u0301", "\u00a0x",
           "<unk>", "<s>", "😀😀", "\u200bz"]  # fmt: skip
    words = [*dict.fromkeys(w for lines in flores_sample.values() for line in lines[:30] for w in line.split()), *odd]
    assert trained._surface_lengths is not None  # identity normalization: spans read from the pieces
    assert trained.encode_words(words) == [trained.encode_word(word) for word in words]
    plain = [word for word in words if "▁" not in word]  # a literal ▁ sends the batch to encode_texts
    assert same_word_arrays(trained.encode_word_arrays(plain), [trained.encode_word(word) for word in plain])
    assert same_word_arrays(trained.encode_word_arrays(words), [trained.encode_word(word) for word in words])
    texts = [line for lines in flores_sample.values() for line in lines[:30]] + odd
    assert trained.encode_texts(texts) == [trained.encode_with_spans(text) for text in texts]
    dropout = trained.with_encode_options(seed=3, **({"dropout": 0.3} if trained.family == "spm-bpe"
                                                     else {"alpha": 0.5}))  # fmt: skip
    assert dropout.samples  # sampled one text at a time, seeded by the text
    assert dropout.encode_words(words) == [dropout.encode_word(word) for word in words]
    assert same_word_arrays(dropout.encode_word_arrays(words), [dropout.encode_word(word) for word in words])
    assert dropout.encode_texts(texts) == [dropout.encode_with_spans(text) for text in texts]
    with raises_code(TokenizerError, "lone_surrogate", value="\udfff"):
        trained.encode_words(["ok", "bad \udfff"])


@pytest.mark.parametrize("mode", INFERENCE_METHODS)
def test_every_encoding_path_applies_the_inference_method(trained: Tokenizer, flores_sample: dict[str, list[str]],
                                                          mode: str) -> None:  # fmt: skip
    """A row's fertility, boundaries and MorphScore come from the batch word arrays: with another inference
    method they must be that method's segmentation, as ``encode_word`` and ``encode_words`` give it, never
    sentencepiece's own."""
    words = list(dict.fromkeys(w for lines in flores_sample.values() for line in lines[:30] for w in line.split()))
    method = trained.with_encode_options(encode_mode=mode)
    expected = [method.encode_word(word) for word in words]
    assert same_word_arrays(method.encode_word_arrays(words), expected)
    assert method.encode_words(words) == expected
    native = [trained.encode_word(word) for word in words]
    assert expected != native  # the method changes some word here, so the comparison above can fail


def test_spans_from_the_pieces_unless_a_literal_mark(trained: Tokenizer, flores_sample,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The batch encoder encodes a text again with sentencepiece's spans only where a piece's bytes cannot be
    its span: here, the texts with a literal ``▁``."""
    encoded_again = []
    one_by_one = type(trained).encode_with_spans
    monkeypatch.setattr(type(trained), "encode_with_spans",
                        lambda self, text: encoded_again.append(text) or one_by_one(self, text))  # fmt: skip
    texts = [line for lines in flores_sample.values() for line in lines[:30]]
    texts += ["", " ", "  a", "\t\n", "x\x00y", "😀", "a ▁ b", "▁x"]
    trained.encode_texts(texts)
    assert encoded_again == ["a ▁ b", "▁x"]


def test_ids_only_encode_equals_encode_with_spans(trained: Tokenizer, flores_sample: dict[str, list[str]]) -> None:
    """``encode`` (sentencepiece's integer ids, no spans) gives ``encode_with_spans``' ids, also when sampling
    and with another inference method; a text with no UTF-8 form is the usual error."""
    dropout = trained.with_encode_options(seed=3, **({"dropout": 0.3} if trained.family == "spm-bpe"
                                                     else {"alpha": 0.5}))  # fmt: skip
    longest = trained.with_encode_options(encode_mode="longest-prefix")
    for tokenizer in (trained, dropout, longest):
        for line in [*flores_sample["tur_Latn"][:40], *flores_sample["kor_Hang"][:40], "a𓀀b", ""]:
            assert tokenizer.encode(line) == tokenizer.encode_with_spans(line).ids
    with raises_code(TokenizerError, "lone_surrogate", value="\udfff"):
        trained.encode("bad \udfff")


def test_dummy_prefix_covers_no_text(trained: Tokenizer) -> None:
    encoding = trained.encode_with_spans("𓀀")  # no "▁𓀀" piece: the prefix stands alone
    assert trained.id_to_piece(encoding.ids[0]) == WHITESPACE_MARK
    assert encoding.spans[0] == (0, 0)
    assert trained.encode_with_spans("") == bpe.Encoding(ids=[], spans=[])


@pytest.fixture(scope="module")
def spm_bpe_small(training_text: list[str]) -> Tokenizer:
    return bpe.train("spm-bpe", training_text[::3], 2000)


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters=WHITESPACE_MARK)))
def test_arbitrary_text_spans_and_round_trip(text: str, spm_bpe_small: Tokenizer) -> None:
    assert_spans_are_honest(spm_bpe_small, text)
    assert spm_bpe_small.decode(spm_bpe_small.encode(text)) == text


def test_save_load_round_trip(trained: Tokenizer, flores_sample: dict[str, list[str]], tmp_path) -> None:
    path = tmp_path / "tokenizer.json"
    trained.save(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["family"] == trained.family
    assert document["config"]["model_type"] == trained.family.removeprefix("spm-")
    assert [piece for piece, _score in document["vocab"]] == trained.pieces(range(trained.vocab_size))
    loaded = bpe.load(path)
    assert type(loaded) is type(trained)
    for lines in flores_sample.values():
        for line in lines:
            assert loaded.encode_with_spans(line) == trained.encode_with_spans(line)


def test_load_rejects_inconsistent_files(trained: Tokenizer, tmp_path) -> None:
    path = tmp_path / "tokenizer.json"
    trained.save(path)
    document = json.loads(path.read_text(encoding="utf-8"))

    def load_with(**changes: object) -> None:
        path.write_text(json.dumps({**document, **changes}), encoding="utf-8")
        bpe.load(path)

    with raises_code(TokenizerError, "bad_tokenizer_file", field="vocab"):
        load_with(vocab=[["edited", 0.0], *document["vocab"][1:]])
    with raises_code(TokenizerError, "not_base64", field="model"):
        load_with(model="not base64!")
    with raises_code(TokenizerError, "bad_sentencepiece_model"):
        load_with(model="aGVsbG8=")
    other = "spm-unigram" if trained.family == "spm-bpe" else "spm-bpe"
    with raises_code(TokenizerError, "bad_tokenizer_file", field="model"):
        load_with(family=other)
    with raises_code(TokenizerError, "bad_tokenizer_file", field=None):
        load_with(config=None)


@pytest.mark.parametrize("kind", KINDS)
def test_vocab_size_bounds(kind: str, training_text: list[str]) -> None:
    floor = bpe.family_class(kind).vocab_floor(training_text)
    assert floor.minimum > 300 and "256 byte-fallback pieces" in floor.parts
    with raises_code(TokenizerError, "vocab_below_floor", value=300) as too_small:
        bpe.train(kind, training_text, 300)
    message = str(too_small.value)
    assert str(floor.minimum) in message and "src/" not in message  # the floor, no sentencepiece internals
    # more than the text can give: a smaller vocabulary, as in the other families
    small = bpe.train(kind, training_text[:100], 1_000_000)
    assert 260 < small.vocab_size < 100_000 and small.to_dict()["config"]["vocab_size"] == 1_000_000
    if kind == "spm-bpe":  # the minimum named is really enough (unigram: slow at this size)
        assert bpe.train(kind, training_text, floor.minimum).vocab_size == floor.minimum


@pytest.mark.parametrize(
    ("texts", "vocab_size", "options", "code", "value"),
    [
        ([], 1000, {}, "empty_training_input", UNSET),
        (["  ", "\t", ""], 1000, {}, "empty_training_input", UNSET),
        ("some text", 1000, {}, "bad_training_input", UNSET),
        (["some text"], 0, {}, "out_of_range", 0),
        (["some text"], "1000", {}, "wrong_type", "1000"),
        (["some text"], 1000, {"character_coverage": 1.5}, "out_of_range", 1.5),
        (["some text"], 1000, {"character_coverage": "all"}, "wrong_type", "all"),
        (["some text"], 1000, {"character_coverage": 0}, "out_of_range", 0),
        (["some text"], 1000, {"limit_alphabet": 0}, "unknown_option", "limit_alphabet"),
        (["some text"], 1000, {"pretokenizer": "gpt2"}, "unknown_option", "pretokenizer"),
    ],
)
def test_bad_training_input(texts: list[str], vocab_size: object, options: dict, code: str, value: object) -> None:
    for kind in KINDS:
        with raises_code(TokenizerError, code, value=value):
            bpe.train(kind, texts, vocab_size, **options)


def test_decode_rejects_out_of_range_ids(trained: Tokenizer) -> None:
    with raises_code(TokenizerError, "token_id_out_of_range", value=VOCAB_SIZE):
        trained.decode([5, VOCAB_SIZE])
    with raises_code(TokenizerError, "token_id_out_of_range", value=-1):
        trained.id_to_bytes(-1)
