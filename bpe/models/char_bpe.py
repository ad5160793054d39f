"""char-bpe: BPE over Unicode characters (Sennrich et al. 2016).

Each pre-token is split into characters plus an end-of-word marker ``</w>``
(``end_of_word``):

``separate`` (default)
    ``</w>`` is its own base symbol after the last character; it covers no
    input, so its byte span is empty.
``attached``
    The marker is glued to the last character (subword-nmt 0.2 / HF tokenizers
    style): ``t</w>`` is a base symbol distinct from ``t``.  A character seen
    only word-finally then has no word-inner symbol (and vice versa): it
    encodes as ``<unk>`` in the other position.
``none``
    No marker: a piece can end a word or sit inside one alike (with the
    ``none`` pre-tokenizer, BPE on one string such as ``_AB_ABC_AB_ABAB``).

The alphabet is every character of the training text, or with
``limit_alphabet=N`` the N most frequent ones (ties: code point order); other
characters encode as ``<unk>`` and never take part in a merge.  Base symbols
are ordered ``</w>`` first, then by character code point (plain before
``c</w>``).  Default pre-tokenizer: ``unicode``.  ``min_frequency`` defaults to
2, as in subword-nmt: a pair seen once is not merged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from bpe.base import DEFAULT_SPECIAL_TOKENS, FamilyFacts, TokenizerError, VocabFloor
from bpe.models.merge_tokenizer import MergeTokenizer
from bpe.models.trained import TrainingRequest
from bpe.options import (
    Dropout,
    EndOfWord,
    LimitAlphabet,
    MergesEncodeMode,
    MinFrequency,
    NormalizerName,
    PreTokenizerName,
    SamplingOptions,
    SamplingSeed,
    TieBreak,
    read_common_body,
    special_tokens_with,
)
from bpe.training.counts import PretokenCounts, training_counts

END_OF_WORD = "</w>"
_BASE_SYMBOLS = {"separate": "characters and </w>", "attached": "characters, plain or with </w>", "none": "characters"}


class CharBPEOptions(SamplingOptions):
    native_mode = "merges"

    pretokenizer: PreTokenizerName = "unicode"
    normalizer: NormalizerName = "none"
    end_of_word: EndOfWord = "separate"
    min_frequency: MinFrequency = 2  # subword-nmt's default: a pair seen once is not merged
    limit_alphabet: LimitAlphabet = None
    encode_mode: MergesEncodeMode = "merges"
    tie_break: TieBreak = "longest-first"
    dropout: Dropout = 0.0
    seed: SamplingSeed = 0


class CharBPETokenizer(MergeTokenizer):
    family = "char-bpe"
    options_model = CharBPEOptions
    facts = FamilyFacts(derivable=True)
    floor_needs_text = True  # the alphabet of the text is part of the floor

    options: CharBPEOptions

    def __init__(
        self,
        base_pieces: Sequence[str],
        merges: Iterable[tuple[int, int]] = (),
        *,
        special_tokens: Iterable[str] = (),
        **options: Any,
    ) -> None:
        """``base_pieces``: the base symbols (characters, ``</w>`` or ``c</w>`` per
        ``end_of_word``); ``merges``: id pairs; ``special_tokens``: extra specials
        after ``<pad> <unk> <s> </s>``; ``options``: see ``CharBPEOptions``."""
        settings = CharBPEOptions.parse(self.family, options)
        _check_base_pieces(base_pieces, settings.end_of_word)
        super().__init__(
            special_tokens=special_tokens_with(special_tokens),
            base_pieces=base_pieces,
            base_bytes=[piece.removesuffix(END_OF_WORD).encode("utf-8") for piece in base_pieces],
            merges=merges,
            options=settings,
        )
        first_base = len(self.special_tokens)
        self._symbol_ids = {piece: first_base + index for index, piece in enumerate(base_pieces)}
        self._end_of_word_id = self._symbol_ids.get(END_OF_WORD)

    @property
    def end_of_word(self) -> str:
        return self.options.end_of_word

    @classmethod
    def from_piece_merges(
        cls, base_pieces: Sequence[str], merges: Iterable[tuple[str, str]], **options: Any
    ) -> CharBPETokenizer:
        """Build from merges written as piece strings, e.g. ``("t", "h"), ("th", "e")``.
        A piece names the lowest id that spells it."""
        untrained = cls(base_pieces, **options)
        ids: dict[str, int] = {}
        for token_id, piece in enumerate(untrained.vocab):
            ids.setdefault(piece, token_id)
        id_merges: list[tuple[int, int]] = []
        for left, right in merges:
            if left not in ids or right not in ids:
                raise TokenizerError(f"merge {left!r} + {right!r} uses a piece that is not in the vocabulary yet")
            id_merges.append((ids[left], ids[right]))
            ids.setdefault(left + right, untrained.vocab_size + len(id_merges) - 1)
        return cls(base_pieces, id_merges, **options)

    # -- training ---------------------------------------------------------
    @classmethod
    def untrained(cls, counts: PretokenCounts, request: TrainingRequest) -> CharBPETokenizer:
        """The characters of the counted text (with ``</w>`` per ``end_of_word``, at most
        ``limit_alphabet`` of them), checked against the vocabulary floor they make."""
        settings = request.options
        base_pieces = _alphabet(counts, settings.end_of_word, settings.limit_alphabet)
        n_specials = len(request.special_tokens)
        base_floor(n_specials, len(base_pieces), settings.end_of_word, settings.limit_alphabet).check(
            cls.family, request.vocab_size
        )
        return cls(base_pieces, special_tokens=request.extra_special_tokens, **settings.model_dump())

    def with_merges(self, merges: Iterable[tuple[int, int]]) -> CharBPETokenizer:
        base_pieces = self._pieces[len(self.special_tokens) : self.first_merge_id]
        extra_specials = self.special_tokens[len(DEFAULT_SPECIAL_TOKENS) :]
        return type(self)(base_pieces, merges, special_tokens=extra_specials, **self.options.model_dump())

    def _derived_floor(self, body: Mapping[str, Any]) -> VocabFloor:
        """The specials and this tokenizer's base symbols (those of its training text)."""
        n_specials = len(body["specials"])
        n_base = len(body["vocab"]) - n_specials - len(body["merges"])
        return base_floor(n_specials, n_base, self.options.end_of_word, self.options.limit_alphabet)

    @classmethod
    def vocab_floor(
        cls,
        texts: Iterable[str] | None = None,
        *,
        special_tokens: Iterable[str] = (),
        workers: int | None = None,
        **options: Any,
    ) -> VocabFloor:
        """The specials and the base symbols of ``texts`` (characters, with ``</w>`` per ``end_of_word``,
        at most ``limit_alphabet`` characters); on any text, at least one character."""
        settings = CharBPEOptions.parse(cls.family, options)
        specials = len(special_tokens_with(special_tokens))
        if texts is None:
            least = 2 if settings.end_of_word == "separate" else 1
            return VocabFloor(specials + least, f"{specials} special tokens + {least} base symbol(s) at least")
        counts = training_counts(texts, settings.pretokenizer, workers=workers, normalizer=settings.normalizer)
        base = _alphabet(counts, settings.end_of_word, settings.limit_alphabet)
        return base_floor(specials, len(base), settings.end_of_word, settings.limit_alphabet)

    def _merge_keys(self) -> list[str]:
        return list(self._pieces)

    def _training_words(self, pretoken_counts: PretokenCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from bpe.kernels.count_kernel import symbol_words

        _, plain, final, end = self.base_symbol_tables(unknown=-1)
        return symbol_words(pretoken_counts.units, pretoken_counts.offsets, pretoken_counts.counts, plain, final, end)

    def base_symbol_tables(self, unknown: int | None = None) -> tuple[int, np.ndarray, np.ndarray, int]:
        """``(-1, plain, final, end)``: code point -> base symbol id inside a pre-token (``plain``) and
        as its last character (``final``), ``unknown`` (default: the ``<unk>`` id) for characters
        outside the alphabet, and the separate ``</w>`` id (-1 when there is none)."""
        missing = self.unk_id if unknown is None else unknown
        plain = np.full(0x110000, missing, dtype=np.int32)
        final = np.full(0x110000, missing, dtype=np.int32)
        for piece, symbol in self._symbol_ids.items():
            if piece == END_OF_WORD:
                continue
            if piece.endswith(END_OF_WORD):
                final[ord(piece[0])] = symbol
            else:
                plain[ord(piece)] = symbol
        if self.end_of_word != "attached":
            final = plain
        end = self._end_of_word_id if self.end_of_word == "separate" else -1
        return -1, plain, final, end

    # -- encoding ---------------------------------------------------------
    def _base_symbols(self, pretoken: str) -> tuple[list[int], list[int]]:
        symbol_ids, unk = self._symbol_ids, self.unk_id
        symbols = [symbol_ids.get(char, unk) for char in pretoken]
        byte_lengths = [1] * len(pretoken) if pretoken.isascii() else [len(char.encode("utf-8")) for char in pretoken]
        if self.end_of_word == "attached":
            symbols[-1] = symbol_ids.get(pretoken[-1] + END_OF_WORD, unk)
        elif self.end_of_word == "separate":
            symbols.append(self._end_of_word_id)
            byte_lengths.append(0)
        return symbols, byte_lengths

    def encode_inside_word(self, chars: str) -> list[int]:
        """The ids of ``chars`` as the inside of a word, with no end-of-word marker after them: what the
        merges (or the inference method) make of characters that more characters follow.  How a piece
        without ``</w>`` can be the whole of an encoding (``benchmarks.measure.audit``); with ``end_of_word =
        "none"`` the same as encoding ``chars`` as one pre-token."""
        symbols = [self._symbol_ids.get(char, self.unk_id) for char in chars]
        return self._apply_merges(symbols) if self.encode_mode == "merges" else self._segment(symbols)

    # -- persistence ------------------------------------------------------
    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> CharBPETokenizer:
        config, specials, vocab = read_common_body(body)
        merges = cls._read_merges(body)
        base_count = len(vocab) - len(specials) - len(merges)
        if base_count < 0:
            raise TokenizerError('tokenizer file: field "vocab" is shorter than the specials plus one entry per merge',
                                 code="bad_tokenizer_file", value=len(vocab), field="vocab")  # fmt: skip
        options = CharBPEOptions.read_saved(config)
        tokenizer = cls(
            vocab[len(specials) : len(specials) + base_count],
            merges,
            special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :],
            **options.model_dump(),
        )
        tokenizer._check_saved_vocab(vocab)
        return tokenizer


def base_floor(n_specials: int, n_base: int, end_of_word: str, limit_alphabet: int | None) -> VocabFloor:
    """The specials and the base symbols: the smallest vocabulary a char-bpe tokenizer can have."""
    return VocabFloor(
        n_specials + n_base,
        f"{n_specials} special tokens + {n_base} base symbols: {_BASE_SYMBOLS[end_of_word]} of the training text",
        "" if limit_alphabet is not None else "; raise vocab_size or set limit_alphabet",
    )


def _alphabet(pretoken_counts: PretokenCounts, end_of_word: str, limit_alphabet: int | None) -> list[str]:
    """The base symbols for the counted pre-tokens (see the module docstring for the order)."""
    from bpe.kernels.count_kernel import character_stats

    occurrences, places = character_stats(pretoken_counts.units, pretoken_counts.offsets, pretoken_counts.counts)
    seen = np.flatnonzero(places)
    char_counts = dict(zip(map(chr, seen.tolist()), occurrences[seen].tolist(), strict=True))
    kept = set(sorted(char_counts, key=lambda char: (-char_counts[char], char))[:limit_alphabet])
    if end_of_word != "attached":
        return ([END_OF_WORD] if end_of_word == "separate" else []) + sorted(kept)
    inner = {chr(point) for point in np.flatnonzero(places & 1).tolist()}
    final = {chr(point) for point in np.flatnonzero(places & 2).tolist()}
    # "a" < "a</w>" < "b": sorting the strings orders by character, plain symbol first
    return sorted({char for char in inner if char in kept} | {char + END_OF_WORD for char in final if char in kept})


def _check_base_pieces(base_pieces: Sequence[str], end_of_word: str) -> None:
    def valid(piece: Any) -> bool:
        if not isinstance(piece, str):
            return False
        if end_of_word == "separate" and piece == END_OF_WORD:
            return True
        if end_of_word == "attached" and piece.endswith(END_OF_WORD):
            piece = piece.removesuffix(END_OF_WORD)
        return len(piece) == 1

    for index, piece in enumerate(base_pieces):
        if not valid(piece):
            raise TokenizerError(
                f"char-bpe base symbol #{index} {piece!r} is not valid with end_of_word={end_of_word!r} "
                f"(expected one character{', or ' + END_OF_WORD if end_of_word == 'separate' else ''}"
                f"{', optionally followed by ' + END_OF_WORD if end_of_word == 'attached' else ''})",
                code="bad_vocabulary",
                value=piece,
            )
    if len(set(base_pieces)) != len(base_pieces):
        raise TokenizerError("char-bpe base symbols must not repeat", code="bad_vocabulary")
    if end_of_word == "separate" and END_OF_WORD not in base_pieces:
        raise TokenizerError(f"char-bpe with end_of_word='separate' needs the base symbol {END_OF_WORD!r}",
                             code="bad_vocabulary", value=END_OF_WORD)  # fmt: skip
