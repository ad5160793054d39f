"""Normalizers: Hangul jamo decomposition, its alignment to the original text, and tokenizers built on it."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bpe
from bpe.base import TokenizerError
from bpe.pipeline.normalizers import NORMALIZERS, get_normalizer
from tests.errors import raises_code

JAMO = get_normalizer("jamo")


def test_jamo_is_the_canonical_decomposition_of_every_syllable() -> None:
    syllables = "".join(chr(code) for code in range(0xAC00, 0xD7A4))
    assert JAMO.normalize_text(syllables) == unicodedata.normalize("NFD", syllables)
    assert JAMO.denormalize(JAMO.normalize_text(syllables)) == syllables


def test_jamo_changes_nothing_but_hangul_syllables() -> None:
    text = "café ㄱㅏ 漢字 é"  # decomposable é, compatibility jamo and Han stay as they are
    assert JAMO.normalize_text(text) == text
    assert JAMO.normalize(text).changes == ()


hangul_or_not = st.text(alphabet=st.sampled_from("가각힣한국어 abcé\u1100\u1161\u11a8ㄱ."), max_size=30)


@given(hangul_or_not)
def test_jamo_round_trips_nfc_text(text: str) -> None:
    text = unicodedata.normalize("NFC", text)
    assert JAMO.denormalize(JAMO.normalize_text(text)) == text


@given(hangul_or_not)
def test_alignment_maps_every_offset_monotonically_into_the_original(text: str) -> None:
    normalized = JAMO.normalize(text)
    size = len(normalized.text.encode("utf-8"))
    mapped = [normalized.original_offset(offset) for offset in range(size + 1)]
    assert mapped[0] == 0 and mapped[-1] == len(text.encode("utf-8"))
    assert mapped == sorted(mapped)
    # every jamo boundary of the normalized text lands on a distinct original byte offset
    boundaries = [0]
    for char in normalized.text:
        boundaries.append(boundaries[-1] + len(char.encode("utf-8")))
    assert len({normalized.original_offset(b) for b in boundaries}) == len(boundaries)


def test_boundary_inside_a_syllable_maps_inside_its_bytes() -> None:
    normalized = JAMO.normalize("한")  # ᄒ ᅡ ᆫ: 9 bytes for the 3 bytes of 한
    assert [normalized.original_offset(offset) for offset in (0, 3, 6, 9)] == [0, 1, 2, 3]
    two = JAMO.normalize("a가b")  # ᄀ ᅡ: 6 bytes for 3
    assert [two.original_offset(offset) for offset in (0, 1, 4, 7, 8)] == [0, 1, 2, 4, 5]


@pytest.fixture(scope="module")
def korean(embedded_text: dict[str, list[str]]) -> list[str]:
    """All the embedded Korean training text (about 52,000 characters)."""
    return embedded_text["kor_Hang"]


@pytest.mark.parametrize("kind", ["char-bpe", "byte-bpe", "char", "word"])
def test_jamo_tokenizers_count_against_the_original_text(
    kind: str, korean: list[str], flores_sample: dict[str, list[str]], tmp_path: Path
) -> None:
    vocab_size = {"char-bpe": 1200, "byte-bpe": 1200, "char": 3000, "word": 3000}[kind]
    tokenizer = bpe.train(kind, korean, vocab_size, normalizer="jamo")
    syllables = bpe.train(kind, korean, vocab_size)
    if kind == "char":  # sub-character units: far fewer than syllables
        assert tokenizer.vocab_size < syllables.vocab_size
    lines = flores_sample["kor_Hang"]
    inside = 0
    for line in lines:
        encoding = tokenizer.encode_with_spans(line)
        data = line.encode("utf-8")
        position = 0
        for token, (start, end) in zip(encoding.ids, encoding.spans, strict=True):
            # tiles the ORIGINAL bytes; only a bare end-of-word marker, or a byte-level token holding part
            # of one jamo's bytes, covers nothing
            assert start == position
            assert end > start or len(tokenizer.id_to_bytes(token).decode("utf-8", errors="ignore")) == 0
            position = end
            inside += end < len(data) and data[end] & 0xC0 == 0x80  # a continuation byte: inside a character
        assert position == len(data)
        assert tokenizer.encode(line) == encoding.ids
        if tokenizer.unk_id not in encoding.ids:
            assert tokenizer.decode(encoding.ids) == line
    if kind in ("char-bpe", "byte-bpe"):
        assert inside > 0  # some tokens end between two jamo of one syllable
    tokenizer.save(tmp_path / "jamo.json")
    loaded = bpe.load(tmp_path / "jamo.json")
    assert loaded.normalizer.name == "jamo"
    assert [loaded.encode(line) for line in lines] == [tokenizer.encode(line) for line in lines]


def test_unknown_normalizer() -> None:
    with raises_code(TokenizerError, "not_allowed", field="normalizer", value="nfkc") as caught:
        bpe.train("char-bpe", ["some text"] * 3, 100, normalizer="nfkc")
    assert all(repr(name) in str(caught.value) for name in NORMALIZERS)  # the choices


NFC = get_normalizer("nfc")
#: decomposed and precomposed Latin, conjoining jamo, Cyrillic with a combining breve, a singleton (Å sign)
composable = st.text(alphabet=st.sampled_from("ae\u0301\u030a\u0327c\u1100\u1161\u11a8 и\u0306\u212b가."), max_size=30)


@given(composable)
def test_nfc_is_unicodedata_nfc_with_a_monotone_alignment_onto_the_original(text: str) -> None:
    normalized = NFC.normalize(text)
    assert normalized.text == NFC.normalize_text(text) == unicodedata.normalize("NFC", text)
    # character boundaries of the NFC text map to original offsets in order, ending at the original's end
    boundaries = [0]
    for char in normalized.text:
        boundaries.append(boundaries[-1] + len(char.encode("utf-8")))
    mapped = [normalized.original_offset(offset) for offset in boundaries]
    assert mapped[0] == 0 and mapped[-1] == len(text.encode("utf-8")) and mapped == sorted(mapped)
    # an unchanged text has no changes; each change covers whole characters of both texts
    assert (normalized.changes == ()) == (normalized.text == text)
    for start, end, original_start, original_end in normalized.changes:
        assert normalized.text.encode("utf-8")[start:end].decode("utf-8") == unicodedata.normalize(
            "NFC", text.encode("utf-8")[original_start:original_end].decode("utf-8")
        )


def test_a_family_with_the_nfc_normalizer_encodes_decomposed_text_as_its_composed_form() -> None:
    composed = "Çağrı kahve içti, Ёлка и йод. " * 30
    tokenizer = bpe.train("byte-bpe", [composed], 400, normalizer="nfc")
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed
    assert tokenizer.encode(decomposed) == tokenizer.encode(composed)
    spans = tokenizer.encode_with_spans(decomposed).spans
    assert spans[-1][1] == len(decomposed.encode("utf-8")) and [s for s, _ in spans[1:]] == [e for _, e in spans[:-1]]
    assert tokenizer.decode(tokenizer.encode(decomposed)) == composed  # NFC loses the decomposed form
