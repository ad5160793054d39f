"""Pre-tokenizers: the documented splits, losslessness, byte offsets, and the tiktoken regexes."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe.base import TokenizerError
from bpe.pipeline.bytes_unicode import bytes_to_piece
from bpe.pipeline.pretokenizers import (
    CL100K_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    PRETOKENIZERS,
    get_pretokenizer,
)
from tests.errors import raises_code


def split(name: str, text: str) -> list[str]:
    return get_pretokenizer(name).split(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("abc123 4.5", ["abc123", " 4", ".", "5"]),  # letters and digits form one run
        ("a  b", ["a", " ", " b"]),  # extra spaces: their own pre-token, the last one goes to the word
        ("a\n\nb", ["a", "\n\n", "b"]),  # a newline is never attached to a word
        ("a \n b", ["a", " \n", " b"]),
        ("x\t\ty", ["x", "\t\t", "y"]),
        ("end.  ", ["end", ".", "  "]),  # trailing whitespace is one pre-token
        ("  a", [" ", " a"]),
        ("don't", ["don", "'", "t"]),  # no English contraction rules
        ("", []),
    ],
)
def test_unicode_documented_cases(text: str, expected: list[str]) -> None:
    assert split("unicode", text) == expected


def test_unicode_keeps_combining_marks_and_jamo_inside_words() -> None:
    decomposed = unicodedata.normalize("NFD", "café 한국어")  # e + U+0301; Hangul as conjoining jamo
    assert split("unicode", decomposed) == [
        unicodedata.normalize("NFD", "café"),
        unicodedata.normalize("NFD", " 한국어"),
    ]
    # GPT-2's regex has no \p{M}: the accent is cut off the word (why `unicode` adds it)
    assert split("gpt2", decomposed)[:2] == ["cafe", "\u0301"]


def test_whitespace_attaches_one_space() -> None:
    assert split("whitespace", "Hello, world!!!") == ["Hello,", " world!!!"]
    assert split("whitespace", "a  b\n") == ["a", " ", " b", "\n"]


def test_none_is_the_whole_text() -> None:
    assert split("none", "_AB_ABC_AB_ABAB") == ["_AB_ABC_AB_ABAB"]
    assert split("none", "") == []


def test_tiktoken_style_digits_and_contractions() -> None:
    assert split("gpt2", "I'll pay 1234567") == ["I", "'ll", " pay", " 1234567"]
    assert split("cl100k", "I'll pay 1234567") == ["I", "'ll", " pay", " ", "123", "456", "7"]
    assert split("o200k", "I'll pay 1234567") == ["I'll", " pay", " ", "123", "456", "7"]


def test_patterns_equal_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    # the constructors download their rank files; only their pat_str is wanted
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
    assert openai_public.r50k_base()["pat_str"] == GPT2_PATTERN
    assert openai_public.cl100k_base()["pat_str"] == CL100K_PATTERN
    assert openai_public.o200k_base()["pat_str"] == O200K_PATTERN


def test_gpt2_matches_hf_bytelevel_on_flores(flores: dict[str, list[str]]) -> None:
    """Independent check: HF tokenizers' ByteLevel pre-tokenizer uses the original GPT-2 regex."""
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    hf = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    for lines in flores.values():
        for line in lines[:300]:
            ours = [bytes_to_piece(piece.encode("utf-8")) for piece in split("gpt2", line)]
            assert ours == [piece for piece, _ in hf.pre_tokenize_str(line)]


@pytest.mark.parametrize("name", list(PRETOKENIZERS))
def test_lossless_with_byte_offsets_on_flores(name: str, flores_sample: dict[str, list[str]]) -> None:
    pretokenizer = get_pretokenizer(name)
    for lines in flores_sample.values():
        for line in lines[:200]:
            check_lossless(pretokenizer.split_with_offsets(line), line)


@pytest.mark.parametrize("name", list(PRETOKENIZERS))
@given(text=st.text())
def test_lossless_on_any_text(name: str, text: str) -> None:
    check_lossless(get_pretokenizer(name).split_with_offsets(text), text)


def check_lossless(pieces: list[tuple[str, int]], text: str) -> None:
    assert "".join(piece for piece, _ in pieces) == text
    data = text.encode("utf-8")
    for piece, start in pieces:
        assert piece
        assert data[start : start + len(piece.encode("utf-8"))] == piece.encode("utf-8")


def test_unknown_pretokenizer_names_the_choices() -> None:
    with raises_code(TokenizerError, "unknown_pretokenizer", value="bert") as caught:
        get_pretokenizer("bert")
    assert all(name in str(caught.value) for name in PRETOKENIZERS)  # the choices


# -- morpheme (kiwipiepy) ---------------------------------------------------------


def test_morpheme_cuts_eojeol_at_morphemes_never_inside_a_syllable() -> None:
    text = "나는 계란밥을 먹었다. 했다 가셨어요"
    # 했 = 하 + 었 and 셨 = 시 + 었 are fused syllables: kiwi's overlapping morphemes never cut them
    assert split("morpheme", text) == [
        "나", "는", " 계란", "밥", "을", " 먹", "었", "다", ".", " 했", "다", " 가", "셨", "어요",
    ]  # fmt: skip


def test_morpheme_leaves_text_without_hangul_as_unicode_does() -> None:
    text = "Hello, world!!! 3.5 abc123"
    assert split("morpheme", text) == split("unicode", text)


def test_morpheme_cut_rule() -> None:
    from bpe.pipeline.pretokenizers import morpheme_cuts

    # 서울입니다: 서울 [0,2) + 이 [2,3) + ㅂ니다 [2,5): 이 and ㅂ니다 share 입, so 3 is no cut but 2 is
    assert morpheme_cuts([(0, 2), (2, 1), (2, 3)]) == [0, 2]
    assert morpheme_cuts([(0, 2), (1, 2)]) == [0]  # a start inside another morpheme is no cut


def test_morpheme_pretokenizer_on_korean_flores(flores: dict[str, list[str]]) -> None:
    pretokenizer = get_pretokenizer("morpheme")
    lines = flores["kor_Hang"][:100]
    more = sum(len(pretokenizer.split(line)) - len(split("unicode", line)) for line in lines)
    assert more > 2 * len(lines)  # eojeol really are cut into morphemes
    for line in lines:
        check_lossless(pretokenizer.split_with_offsets(line), line)


def test_morpheme_bpe_round_trips_korean(
    embedded_text: dict[str, list[str]], flores_sample: dict[str, list[str]]
) -> None:
    import bpe

    tokenizer = bpe.train("char-bpe", embedded_text["kor_Hang"], 2000, pretokenizer="morpheme")
    plain = bpe.train("char-bpe", embedded_text["kor_Hang"], 2000)
    lines = flores_sample["kor_Hang"]
    for line in lines:
        ids = tokenizer.encode(line)
        if tokenizer.unk_id not in ids:
            assert tokenizer.decode(ids) == line
        # no token crosses a morpheme boundary
        cuts = {start for _, start in get_pretokenizer("morpheme").split_with_offsets(line)}
        spans = tokenizer.encode_with_spans(line).spans
        assert not [cut for start, end in spans for cut in cuts if start < cut < end]
    assert sum(len(tokenizer.encode(line)) for line in lines) > sum(len(plain.encode(line)) for line in lines)


def test_morpheme_cuts_jamo_text_where_it_cuts_the_composed_text() -> None:
    from bpe.pipeline.normalizers import get_normalizer

    jamo = get_normalizer("jamo")
    text = "나는 계란밥을 먹었다. 했다 가셨어요"
    decomposed = split("morpheme", jamo.normalize_text(text))
    assert [jamo.denormalize(piece) for piece in decomposed] == split("morpheme", text)
