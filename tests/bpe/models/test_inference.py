"""Inference methods over a vocabulary trie (Uzan et al. 2024): hand-checked examples and properties."""

from __future__ import annotations

from itertools import product

from hypothesis import given, settings
from hypothesis import strategies as st

from bpe.models.inference import INFERENCE_METHODS, TIE_BREAKS, UNMATCHED, VocabularyTrie


def trie_of(*entries: str) -> VocabularyTrie:
    return VocabularyTrie((tuple(entry), index) for index, entry in enumerate(entries))


def spelled(trie_entries: tuple[str, ...], segmentation: list[tuple[int, int]], symbols: str) -> list[str]:
    pieces, position = [], 0
    for token, length in segmentation:
        piece = symbols[position : position + length]
        assert token == UNMATCHED or trie_entries[token] == piece
        pieces.append(piece)
        position += length
    assert position == len(symbols)
    return pieces


ENTRIES = ("a", "b", "c", "d", "ab", "bc", "cd", "abc", "bcd")


def test_each_method_on_a_hand_example() -> None:
    trie = trie_of(*ENTRIES)
    word = "abcd"
    results = {method: spelled(ENTRIES, trie.segment(word, method), word) for method in INFERENCE_METHODS}
    assert results["longest-prefix"] == ["abc", "d"]
    assert results["longest-suffix"] == ["a", "bcd"]
    # "abc" and "bcd" are equally long: the leftmost wins
    assert results["longest-token"] == ["abc", "d"]
    # two tokens at least: ab|cd, abc|d and a|bcd tie; the longest first token wins
    assert results["fewest-tokens"] == ["abc", "d"]


def test_fewest_tokens_breaks_ties_by_the_longest_first_token() -> None:
    entries = ("a", "b", "c", "d", "e", "abcd", "ab", "cde")
    trie = trie_of(*entries)
    # abcd|e and ab|cde both take two tokens: the longer first token wins
    assert spelled(entries, trie.fewest_tokens("abcde"), "abcde") == ["abcd", "e"]
    entries = ("a", "b", "c", "x", "ab", "bcx")
    trie = trie_of(*entries)
    # ab|c|x takes three, a|bcx two: fewer tokens first, then the tie-break
    assert spelled(entries, trie.fewest_tokens("abcx"), "abcx") == ["a", "bcx"]


def test_fewest_tokens_longest_last_breaks_ties_by_the_longest_last_token() -> None:
    entries = ("a", "b", "c", "d", "e", "abcd", "ab", "cde")
    trie = trie_of(*entries)
    assert spelled(entries, trie.segment("abcde", "fewest-tokens", "longest-last"), "abcde") == ["ab", "cde"]
    trie = trie_of(*ENTRIES)  # ab|cd, abc|d and a|bcd tie: the longest last token wins
    assert spelled(ENTRIES, trie.segment("abcd", "fewest-tokens", "longest-last"), "abcd") == ["a", "bcd"]
    assert trie.segment("a?ab", "fewest-tokens", "longest-last") == [(0, 1), (UNMATCHED, 1), (4, 2)]


def test_greedy_can_need_more_tokens_than_the_optimum() -> None:
    entries = ("a", "b", "c", "d", "e", "f", "abcd", "cdef", "ab")
    trie = trie_of(*entries)
    assert spelled(entries, trie.longest_prefix("abcdef"), "abcdef") == ["abcd", "e", "f"]
    assert spelled(entries, trie.fewest_tokens("abcdef"), "abcdef") == ["ab", "cdef"]
    assert spelled(entries, trie.longest_suffix("abcdef"), "abcdef") == ["ab", "cdef"]


def test_unknown_symbols_stand_alone() -> None:
    trie = trie_of("a", "b", "ab")
    for method in INFERENCE_METHODS:
        assert trie.segment("a?ab", method) == [(0, 1), (UNMATCHED, 1), (2, 2)], method


def test_the_first_entry_spelling_a_sequence_wins() -> None:
    trie = VocabularyTrie([(("a", "b"), 7), (("a", "b"), 3), (("a",), 1), (("b",), 2)])
    assert trie.longest_prefix("ab") == [(7, 2)]


def brute_force_fewest(entries: set[str], word: str) -> int:
    """The fewest pieces, trying every way to cut ``word`` (unknown single symbols allowed alone)."""
    best = len(word)
    for cuts in product((False, True), repeat=max(len(word) - 1, 0)):
        pieces, start = [], 0
        for position, cut in enumerate(cuts, start=1):
            if cut:
                pieces.append(word[start:position])
                start = position
        pieces.append(word[start:])
        if all(piece in entries or len(piece) == 1 for piece in pieces):
            best = min(best, len(pieces))
    return best


vocabularies = st.sets(st.text(alphabet="abcd", min_size=2, max_size=4), max_size=12)
words = st.text(alphabet="abcde", min_size=1, max_size=9)


@settings(max_examples=300, deadline=None)
@given(vocabularies, words)
def test_every_method_tiles_and_fewest_tokens_is_optimal(extra: set[str], word: str) -> None:
    entries = ("a", "b", "c", "d", *sorted(extra))  # "e" is no entry: an unknown symbol
    trie = trie_of(*entries)
    counts = {}
    for method in INFERENCE_METHODS:
        pieces = spelled(entries, trie.segment(word, method), word)
        assert all(piece in entries or piece == "e" for piece in pieces), (method, pieces)
        counts[method] = len(pieces)
    assert counts["fewest-tokens"] == min(counts.values())
    assert counts["fewest-tokens"] == brute_force_fewest(set(entries), word)
    last = spelled(entries, trie.segment(word, "fewest-tokens", "longest-last"), word)
    assert len(last) == counts["fewest-tokens"] and all(piece in entries or piece == "e" for piece in last)


@settings(max_examples=300, deadline=None)
@given(vocabularies, st.text(alphabet="abcd", min_size=1, max_size=9))
def test_longest_last_is_the_segmentation_of_a_unigram_model_with_equal_scores(extra: set[str], word: str) -> None:
    """Uzan et al.'s least-tokens inference: a Hugging Face Unigram model whose tokens all score the same."""
    from tokenizers import models

    entries = ("a", "b", "c", "d", *sorted(extra))
    unigram = models.Unigram([(entry, -1.0) for entry in entries], unk_id=None)
    theirs = [token.value for token in unigram.tokenize(word)]
    assert spelled(entries, trie_of(*entries).segment(word, "fewest-tokens", "longest-last"), word) == theirs
    # the mirror image: longest-first on the reversed word and entries
    mirrored = tuple(entry[::-1] for entry in entries)
    reversed_pieces = spelled(mirrored, trie_of(*mirrored).segment(word[::-1], "fewest-tokens", TIE_BREAKS[0]),
                              word[::-1])  # fmt: skip
    assert [piece[::-1] for piece in reversed(reversed_pieces)] == theirs


def test_covered_first_prefers_any_segmentation_into_entries() -> None:
    """The symbol "a" is no entry: a|bcd takes two tokens with "a" unmatched, ab|c|d three entries; covered_first (a
    family that refuses uncovered words, WordPiece) takes the covering, and still falls back when none exists."""
    entries = ("ab", "c", "d", "bcd")
    trie = trie_of(*entries)
    for tie_break in TIE_BREAKS:
        assert trie.segment("abcd", "fewest-tokens", tie_break) == [(UNMATCHED, 1), (3, 3)]
        covered = trie.segment("abcd", "fewest-tokens", tie_break, covered_first=True)
        assert spelled(entries, covered, "abcd") == ["ab", "c", "d"]
        assert trie.segment("xbcd", "fewest-tokens", tie_break, covered_first=True) == [(UNMATCHED, 1), (3, 3)]
