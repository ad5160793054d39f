"""Small worked examples of word-, character- and BPE tokenization, computed by hand, as tests."""

from __future__ import annotations

from collections import Counter

from bpe.models.char import CharTokenizer
from bpe.models.char_bpe import CharBPETokenizer
from bpe.models.word import WordTokenizer
from bpe.pipeline.pretokenizers import get_pretokenizer
from bpe.training.trainer import train_merges


def merged_pieces(tokenizer: CharBPETokenizer) -> list[str]:
    return tokenizer.vocab[tokenizer.first_merge_id :]


# -- BPE on one string, no pre-tokenization, no marker: _AB_ABC_AB_ABAB -----------


def test_one_string_training_and_encoding() -> None:
    # base A B C _ + three merges; no pre-tokenization, no end-of-word marker
    tokenizer = CharBPETokenizer.train(["_AB_ABC_AB_ABAB"], 4 + 4 + 3, pretokenizer="none", end_of_word="none")
    assert tokenizer.vocab[4:8] == ["A", "B", "C", "_"]
    assert merged_pieces(tokenizer) == ["AB", "_AB", "_AB_AB"]
    encoding = tokenizer.encode_with_spans("_AB_ABAB_AB")
    assert tokenizer.pieces(encoding.ids) == ["_AB_AB", "AB", "_AB"]  # 11 characters -> 3 tokens
    assert encoding.spans == [(0, 6), (6, 8), (8, 11)]
    assert tokenizer.decode(encoding.ids) == "_AB_ABAB_AB"


def test_one_string_merge_counts() -> None:
    ids = {"A": 0, "B": 1, "C": 2, "_": 3}
    merges = train_merges({tuple(ids[c] for c in "_AB_ABC_AB_ABAB"): 1}, list(ids), 10)
    assert [merge.count for merge in merges] == [5, 4, 2]  # A+B 5 times, _+AB 4, _AB+_AB 2; then only 1s


def test_unicode_pretokenization_of_a_greeting() -> None:
    assert get_pretokenizer("unicode").split("Hello, world!!!") == ["Hello", ",", " world", "!!!"]


# -- Korean word counts: 계란밥 3, 간장밥 5, 간장계란밥 2, 볶음밥 3 ---------------------

KOREAN_WORD_COUNTS = {"계란밥": 3, "간장밥": 5, "간장계란밥": 2, "볶음밥": 3}


def test_korean_first_merge_is_ganjang_seven_times() -> None:
    alphabet = sorted({char for word in KOREAN_WORD_COUNTS for char in word})
    ids = {char: index for index, char in enumerate(alphabet)}
    word_counts = {tuple(ids[char] for char in word): count for word, count in KOREAN_WORD_COUNTS.items()}
    first = train_merges(word_counts, alphabet, 1)[0]
    assert (alphabet[first.left], alphabet[first.right], first.count) == ("간", "장", 7)


def test_korean_vocabulary_covers_an_unseen_word() -> None:
    texts = [word for word, count in KOREAN_WORD_COUNTS.items() for _ in range(count)]
    tokenizer = CharBPETokenizer.train(texts, 4 + 7 + 4, end_of_word="none")
    # the second round has two pairs at 5 (계+란, 간장+밥): the tie-break takes 간장+밥 first
    # ("간" < "계" by code point), then 계+란 and 계란+밥, also at 5
    assert merged_pieces(tokenizer) == ["간장", "간장밥", "계란", "계란밥"]
    # an unseen word, 계란간장볶음밥, is covered by known pieces: no OOV
    for mode in ("merges", "longest-prefix"):
        encoder = tokenizer.with_encode_options(encode_mode=mode)
        assert encoder.pieces(encoder.encode("계란간장볶음밥")) == ["계란", "간장", "볶", "음", "밥"]
        assert encoder.pieces(encoder.encode("간장계란밥")) == ["간장", "계란밥"]


# -- ten merge rules on quickest / smallest / thermometer / dog; word and character level --

TEN_MERGES = [
    ("t", "h"), ("th", "e"), ("the", "</w>"), ("s", "</w>"), ("n", "</w>"),
    ("t", "</w>"), ("d", "o"), ("do", "g"), ("dog", "</w>"), ("q", "u"),
]  # fmt: skip


def test_encoding_with_the_ten_rules() -> None:
    alphabet = ["</w>", *sorted(set("quickest thermometer dog smallest n"))]
    tokenizer = CharBPETokenizer.from_piece_merges(alphabet, TEN_MERGES)
    assert merged_pieces(tokenizer) == ["th", "the", "the</w>", "s</w>", "n</w>", "t</w>", "do", "dog", "dog</w>", "qu"]
    expected = {
        "quickest": ["qu", "i", "c", "k", "e", "s", "t</w>"],
        "smallest": ["s", "m", "a", "l", "l", "e", "s", "t</w>"],
        "thermometer": ["the", "r", "m", "o", "m", "e", "t", "e", "r", "</w>"],
        "dog": ["dog</w>"],
    }
    for word, pieces in expected.items():
        ids = tokenizer.encode(word)
        assert tokenizer.pieces(ids) == pieces
        assert tokenizer.decode(ids) == word
    assert tokenizer.decode(tokenizer.encode("quickest thermometer dog")) == "quickest thermometer dog"


def test_word_level_keeps_unknown_words() -> None:
    tokenizer = WordTokenizer.train(["the dog", "the quick dog", "the cat"], 100)
    ids = tokenizer.encode("the unusual dog")
    assert tokenizer.pieces(ids) == ["the", "<unk>", " dog"]  # 3 tokens, not 2: `unusual` is not dropped
    assert tokenizer.encode_with_spans("the unusual dog").spans == [(0, 3), (3, 11), (11, 15)]


def test_character_level_lengths() -> None:
    tokenizer = CharTokenizer.train(["quickest thermometer"], 100)
    assert tokenizer.pieces(tokenizer.encode("quickest")) == list("quickest")
    assert len(tokenizer.encode("thermometer")) == 11


# -- character vocabulary of a Turkish proverb ----------------------------------


def test_character_vocabulary_of_a_proverb() -> None:
    text = "damlaya damlaya göl olur"
    tokenizer = CharTokenizer.train([text], 100)
    assert tokenizer.vocab[4:] == sorted(set(text))  # the alphabet in code point order
    ids = tokenizer.encode(text)
    assert len(ids) == 24 and tokenizer.decode(ids) == text
    assert Counter(ids)[tokenizer.vocab.index(" ")] == 3
