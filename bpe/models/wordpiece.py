"""wordpiece: WordPiece, trained from scratch and encoded by MaxMatch as BERT encodes.

**Training** (Schuster & Nakajima 2012, "Japanese and Korean Voice Search", ICASSP; the pair score as
the Hugging Face NLP course's WordPiece chapter computes it):

1. the text is cut into pre-tokens (``pretokenizer``, default ``unicode``: runs of letters and digits,
   runs of punctuation, one preceding space attached, as for the other families; BERT's basic tokenizer
   also splits at whitespace and punctuation but drops the spaces, which ``unicode`` keeps, so that
   decoding restores the text) and the pre-tokens (*words*) are counted;
2. each word is split into characters, every character after the first written with the continuation
   prefix ``##``; an attached space stays with the character after it: `` dog`` -> `` d`` ``##o`` ``##g``,
   ``dog`` -> ``d`` ``##o`` ``##g``.  So a word-initial piece starts a word, as in BERT (where `` d`` is
   ``d``); were the space a piece of its own, every word after a space would start with it and spell all
   its letters as ``##`` pieces, and the score, which divides by the space's count, would join the space
   to a word last;
3. the base vocabulary, after the specials, is that alphabet: the word-initial pieces in code point
   order, then the ``##`` characters in code point order;
4. then, repeatedly, the adjacent pair (a, b) with the highest score count(ab) / (count(a) · count(b)) is
   merged in every word, left to right, and the merged piece (a + b without b's ``##``: ``##o`` + ``##g``
   -> ``##og``) joins the vocabulary.  Counts are occurrences in the words as segmented so far, weighted
   by the words' counts.  Training stops at ``vocab_size`` entries or when no pair occurs
   ``min_frequency`` times (default 1: every pair counts, as in the course).

**Ties**: scores are compared exactly (as fractions, never as rounded floats); among equal scores the
pair seen more often wins, then the pair whose pieces come first in code point order (a's string, then
b's).  Two cases the course leaves open: should a merge spell a piece already in the vocabulary, it
rewrites the words but adds no entry (every piece is in the vocabulary once; the course's list would
hold it twice); and a word-initial ``#`` never merges with a ``##`` piece that starts with
``#``, whose result would begin with ``##`` and read as a continuation piece (BERT never meets this:
its pre-tokenizer isolates every punctuation character).

Training is incremental, as BPE trainers are: after a merge only the words holding the pair are
rewritten and only the pair counts they change are updated; the best pair comes from a heap in which
an entry whose pair's counts have changed is replaced by a current one when it surfaces (a merge lowers
count(a) and count(b), raising the score of every pair holding a or b: those pairs are pushed again at
once).  Training stops at the same merge
whatever ``vocab_size`` is, so a smaller size is the first entries of a larger one (``derivable``).

**Encoding** is MaxMatch (greedy longest-match-first: BERT's ``WordpieceTokenizer``, Devlin et al. 2019;
Wu et al. 2016; Song et al. 2021, "Fast WordPiece Tokenization"): the longest vocabulary entry that starts the word,
then the longest ``##`` entry that starts the rest, and so on.  A word that cannot be covered, or that
is longer than ``max_input_chars_per_word`` characters (default 100, as BERT), becomes one ``<unk>``
covering the whole word.  Decoding joins the pieces without their ``##``: lossless when no ``<unk>``
was produced.  The saved ``merges`` list, for each merged entry, the pair whose merge made it.

**Inference methods** (``encode_mode``, Uzan et al. 2024; ``bpe.models.inference``): ``longest-prefix``
(MaxMatch, the default), ``longest-suffix``, ``longest-token`` and ``fewest-tokens`` (with its
``tie_break``).  The ``##`` convention decides where a piece may stand: a word-initial piece exactly at
the word's start, a ``##`` piece anywhere after it.  The first character of a word and of every
word-initial piece is a symbol of its own kind (``word_symbols``), so each method runs unchanged over the
symbols and obeys the convention: ``longest-suffix`` takes the longest piece allowed to end the rest (a
``##`` piece, or a word-initial one reaching the start), right to left; ``longest-token`` the longest
piece allowed where it stands, then the parts left and right of it; ``fewest-tokens`` the fewest pieces among the
segmentations into a word-initial piece and ``##`` pieces.  As in MaxMatch, a word a method leaves
partly uncovered (a greedy method at a dead end, none backtracks; ``fewest-tokens`` only when no such
segmentation exists) is one ``<unk>``, as is a word over ``max_input_chars_per_word``.  Every method is
defined under the convention, so none is refused.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Annotated, Any

from pydantic import Field

from bpe.base import DEFAULT_SPECIAL_TOKENS, FamilyFacts, TokenizerError, VocabFloor
from bpe.models.inference import UNMATCHED, VocabularyTrie
from bpe.models.trained import TrainedTokenizer, TrainingRequest
from bpe.options import (
    ENCODE_TIME,
    MinFrequency,
    NormalizerName,
    PreTokenizerName,
    SamplingOptions,
    TieBreak,
    body_field,
    encode_mode_option,
    read_common_body,
    special_tokens_with,
)
from bpe.training.counts import PretokenCounts, training_counts
from bpe.training.trainer import ProgressCallback, progress_callback
from bpe.validation import PositiveInt

#: the continuation prefix of a piece that does not start a word (BERT's)
CONTINUATION = "##"
_SHIFT = 32  # a pair of piece ids as one int key: left << 32 | right (dict keys hash faster than tuples)
_LOW = (1 << _SHIFT) - 1

MaxInputChars = Annotated[
    PositiveInt,
    Field(description="a longer word (in characters, an attached space included) encodes as one <unk>, as BERT"),
    ENCODE_TIME,
]


class WordPieceOptions(SamplingOptions):
    """``SamplingOptions`` for the rule tying ``tie_break`` to ``fewest-tokens``; this family never samples."""

    native_mode = "longest-prefix"

    pretokenizer: PreTokenizerName = "unicode"
    normalizer: NormalizerName = "none"
    min_frequency: MinFrequency = 1  # the course merges every pair, however rare
    encode_mode: encode_mode_option("longest-prefix") = "longest-prefix"  # type: ignore[valid-type]
    tie_break: TieBreak = "longest-first"
    max_input_chars_per_word: MaxInputChars = 100


class WordPieceTokenizer(TrainedTokenizer):
    family = "wordpiece"
    options_model = WordPieceOptions
    facts = FamilyFacts(derivable=True, native_method="longest-prefix")
    floor_needs_text = True  # the alphabet of the text is part of the floor

    options: WordPieceOptions

    def __init__(
        self,
        base_pieces: Sequence[str],
        merges: Iterable[tuple[int, int]] = (),
        *,
        special_tokens: Iterable[str] = (),
        **options: Any,
    ) -> None:
        """``base_pieces``: the alphabet (``c``, `` c`` or ``##c``: one character each); ``merges``: for each merged
        entry, in id order, the ids (left, right) it joins; ``special_tokens``: extra specials after
        ``<pad> <unk> <s> </s>``; ``options``: see ``WordPieceOptions``."""
        self.options = WordPieceOptions.parse(self.family, options)
        specials = special_tokens_with(special_tokens)
        pieces = [*specials, *_checked_alphabet(base_pieces)]
        self._merges = [_checked_merge(pieces, len(specials), index, merge) for index, merge in enumerate(merges)]
        if len(set(pieces[len(specials) :])) != len(pieces) - len(specials):
            raise TokenizerError("wordpiece vocabulary entries must be distinct", code="bad_vocabulary")
        token_bytes = [piece.encode("utf-8") for piece in specials]
        token_bytes += [piece.removeprefix(CONTINUATION).encode("utf-8") for piece in pieces[len(specials) :]]
        super().__init__(pieces, token_bytes, specials, self.options.pretokenizer, self.options.normalizer)
        self._n_base = len(base_pieces)
        self._initial: dict[str, int] = {}
        self._continuing: dict[str, int] = {}
        for token_id in range(len(specials), len(pieces)):
            piece = pieces[token_id]
            if piece.startswith(CONTINUATION):
                self._continuing[piece[len(CONTINUATION) :]] = token_id
            else:
                self._initial[piece] = token_id
        self._longest_initial = max(map(len, self._initial), default=0)
        self._longest_continuing = max(map(len, self._continuing), default=0)
        self._trie: VocabularyTrie | None = None  # the pieces, for the inference methods; built on first use

    @property
    def merges(self) -> list[tuple[int, int]]:
        """For each merged entry, in id order, the ids (left, right) whose merge first made it."""
        return list(self._merges)

    # -- training ---------------------------------------------------------
    @classmethod
    def _train(cls, texts: Iterable[str] | PretokenCounts, request: TrainingRequest) -> WordPieceTokenizer:
        """The alphabet of the counted words, then merges by score up to ``vocab_size`` (module docstring)."""
        settings = request.options
        counts = training_counts(texts, settings.pretokenizer, workers=request.workers, normalizer=settings.normalizer)
        words = dict(counts.items())
        base = alphabet(words)
        n_specials = len(request.special_tokens)
        _floor(n_specials, len(base)).check(cls.family, request.vocab_size)
        with progress_callback(request.progress, f"{cls.family} merges") as callback:
            merged = learn_merges(words, base, request.vocab_size - n_specials - len(base),
                                  settings.min_frequency, callback)  # fmt: skip
        merges = [(left + n_specials, right + n_specials) for left, right in merged]
        return cls(base, merges, special_tokens=request.extra_special_tokens, **settings.model_dump())

    @classmethod
    def _text_floor(cls, counts: PretokenCounts, settings: WordPieceOptions, specials: int) -> VocabFloor:
        """The specials and the alphabet of the counted text (initial and ``##`` characters)."""
        return _floor(specials, len(alphabet(counts)))

    def _derived_floor(self, body: Mapping[str, Any]) -> VocabFloor:
        """The specials and this tokenizer's alphabet (that of its training text)."""
        return _floor(len(body["specials"]), self._n_base)

    # -- encoding ---------------------------------------------------------
    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        """MaxMatch: the longest entry starting the word, then the longest ``##`` entry of the rest..."""
        length = len(pretoken)
        if length > self.options.max_input_chars_per_word:
            return [self.unk_id], [len(pretoken.encode("utf-8"))]
        if self.options.encode_mode != "longest-prefix":
            return self._segment_pretoken(pretoken)
        ids: list[int] = []
        bounds = [0]
        table, longest = self._initial, self._longest_initial
        start = 0
        while start < length:
            end = min(length, start + longest)
            while end > start:
                token = table.get(pretoken[start:end])
                if token is not None:
                    break
                end -= 1
            else:  # nothing in the vocabulary starts the rest: the whole word is unknown (BERT)
                return [self.unk_id], [len(pretoken.encode("utf-8"))]
            ids.append(token)
            bounds.append(end)
            start = end
            table, longest = self._continuing, self._longest_continuing
        return ids, _byte_lengths(pretoken, bounds)

    def _segment_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        """Another inference method over the marked symbols (module docstring); a word it cannot cover is one
        ``<unk>``."""
        if self._trie is None:
            entries = [(word_symbols(piece), token) for piece, token in self._initial.items()]
            entries += [(tuple(piece), token) for piece, token in self._continuing.items()]
            self._trie = VocabularyTrie(entries)
        segments = self._trie.segment(word_symbols(pretoken), self.options.encode_mode, self.options.tie_break,
                                      covered_first=True)  # fmt: skip
        if any(token == UNMATCHED for token, _ in segments):
            return [self.unk_id], [len(pretoken.encode("utf-8"))]
        bounds = [0]
        for _, length in segments:
            bounds.append(bounds[-1] + length)
        return [token for token, _ in segments], _byte_lengths(pretoken, bounds)

    # -- persistence ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "merges": [list(merge) for merge in self._merges]}

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> WordPieceTokenizer:
        config, specials, vocab = read_common_body(body)
        merges = body_field(body, "merges", list)
        for index, merge in enumerate(merges):
            if not isinstance(merge, list) or len(merge) != 2:
                raise TokenizerError(f'tokenizer file: field "merges[{index}]" must be a pair of ids, got {merge!r}',
                                     code="bad_tokenizer_file", value=merge, field=f"merges[{index}]")  # fmt: skip
        base_count = len(vocab) - len(specials) - len(merges)
        if base_count < 0:
            raise TokenizerError('tokenizer file: field "vocab" is shorter than the specials plus one entry per merge',
                                 code="bad_tokenizer_file", field="vocab")  # fmt: skip
        options = WordPieceOptions.read_saved(config)
        tokenizer = cls(
            vocab[len(specials) : len(specials) + base_count],
            [tuple(merge) for merge in merges],
            special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :],
            **options.model_dump(),
        )
        for token_id, (saved, rebuilt) in enumerate(zip(vocab, tokenizer.vocab, strict=True)):
            if saved != rebuilt:
                raise TokenizerError(
                    f'tokenizer file: field "vocab[{token_id}]" is {saved!r} but its merge spells {rebuilt!r}',
                    code="bad_tokenizer_file", value=saved, field=f"vocab[{token_id}]",
                )  # fmt: skip
        return tokenizer


# -- the alphabet and the checks of a vocabulary ---------------------------------------------


def alphabet(words: Iterable[str]) -> list[str]:
    """The base pieces of ``words``: the word-initial pieces (a character, after its attached space if the
    word has one: ``initial_length``) in code point order, then ``##`` + every later character in code
    point order."""
    initial: set[str] = set()
    inner: set[str] = set()
    for word in words:
        cut = initial_length(word)
        initial.add(word[:cut])
        inner.update(word[cut:])
    return [*sorted(initial), *(CONTINUATION + char for char in sorted(inner))]


def word_symbols(word: str) -> tuple[Hashable, ...]:
    """``word`` (or a word-initial piece) as the symbols of the inference methods: its first character marked
    (a one-tuple, never equal to a character) and the others as they are, so that a ``##`` piece, spelled in
    unmarked characters, never matches a word's start."""
    return ((word[0],), *word[1:]) if word else ()


def _byte_lengths(word: str, bounds: list[int]) -> list[int]:
    """The UTF-8 byte length of each segment ``word[start:end]`` between consecutive ``bounds``."""
    if word.isascii():
        return [end - start for start, end in pairwise(bounds)]
    return [len(word[start:end].encode("utf-8")) for start, end in pairwise(bounds)]


def initial_length(word: str) -> int:
    """How many characters of ``word`` its first base piece holds: an attached space and the character after
    it, else one."""
    return 2 if word[0] == " " and len(word) > 1 else 1


def _floor(n_specials: int, n_base: int) -> VocabFloor:
    return VocabFloor(
        n_specials + n_base,
        f"{n_specials} special tokens + {n_base} base pieces: the training text's characters, initial and ##",
        "; raise vocab_size",
    )


def _checked_alphabet(base_pieces: Sequence[str]) -> list[str]:
    for index, piece in enumerate(base_pieces):
        if not isinstance(piece, str) or not (
            len(piece.removeprefix(CONTINUATION)) == 1 or (len(piece) == 2 and piece[0] == " ")
        ):
            raise TokenizerError(f"wordpiece base piece #{index} {piece!r} is not one character, alone, after "
                                 f"{CONTINUATION!r} or after a space", code="bad_vocabulary", value=piece)  # fmt: skip
    return list(base_pieces)


def _checked_merge(pieces: list[str], n_specials: int, index: int, merge: Any) -> tuple[int, int]:
    """``merge`` as ids of ``pieces`` (which gets its result): a piece and a ``##`` piece, neither a special."""
    left, right = merge if isinstance(merge, tuple | list) and len(merge) == 2 else (None, None)
    valid = all(isinstance(side, int) and not isinstance(side, bool) and n_specials <= side < len(pieces)
                for side in (left, right))  # fmt: skip
    if not valid or not pieces[right].startswith(CONTINUATION):
        raise TokenizerError(f"wordpiece merge #{index} {merge!r} must join two earlier pieces, the second a "
                             f"{CONTINUATION!r} piece", code="bad_vocabulary", value=merge)  # fmt: skip
    joined = pieces[left] + pieces[right][len(CONTINUATION) :]
    if not pieces[left].startswith(CONTINUATION) and joined.startswith(CONTINUATION):
        raise TokenizerError(f"wordpiece merge #{index} would make the word-initial piece {joined!r}, which reads "
                             f"as a {CONTINUATION!r} piece", code="bad_vocabulary", value=merge)  # fmt: skip
    pieces.append(joined)
    return left, right


# -- training -------------------------------------------------------------------------------


class _Score:
    """count / (count(a) · count(b)), compared exactly by cross-multiplication; a higher score sorts
    first.  Only compared when two heap entries have the same rounded score."""

    __slots__ = ("count", "denominator")

    def __init__(self, count: int, denominator: int) -> None:
        self.count, self.denominator = count, denominator

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Score) and self.count * other.denominator == other.count * self.denominator

    def __lt__(self, other: _Score) -> bool:
        return self.count * other.denominator > other.count * self.denominator

    __hash__ = None  # type: ignore[assignment]


def learn_merges(
    words: Mapping[str, int],
    base: Sequence[str],
    max_merges: int,
    min_frequency: int = 1,
    progress: ProgressCallback | None = None,
) -> list[tuple[int, int]]:
    """Up to ``max_merges`` merges that add an entry, as (left, right) indices into ``base`` followed by
    the merged pieces in order, learned from ``words`` (word -> count) split over ``base``
    (``alphabet(words)``).  The rule, the tie-break and the two open cases: the module docstring.

    The heap holds (-rounded score, exact score, -count, a, b, pair, count(a)·count(b)); int / int is
    correctly rounded, so rounding never reverses two scores and only equal rounded scores need the
    exact comparison.  An entry is current while its pair's count and denominator are those stored.
    """
    pieces = list(base)  # printable, "##" on continuation pieces
    texts = [piece.removeprefix(CONTINUATION) for piece in pieces]
    ids = {piece: index for index, piece in enumerate(pieces)}
    hash_initial = ids.get("#", -1)
    words_symbols: list[list[int]] = []
    word_counts: list[int] = []
    piece_count = [0] * len(pieces)
    pair_count: dict[int, int] = {}
    where: dict[int, set[int]] = {}  # pair -> words holding it (a superset: checked when visited)
    for word, count in words.items():
        cut = initial_length(word)
        symbols = [ids[word[:cut]], *(ids[CONTINUATION + char] for char in word[cut:])]
        index = len(words_symbols)
        words_symbols.append(symbols)
        word_counts.append(count)
        for symbol in symbols:
            piece_count[symbol] += count
        for left, right in pairwise(symbols):
            key = left << _SHIFT | right
            pair_count[key] = pair_count.get(key, 0) + count
            where.setdefault(key, set()).add(index)
    pairs_with: dict[int, set[int]] = {}  # piece -> pairs holding it (count > 0)
    for key in pair_count:
        pairs_with.setdefault(key >> _SHIFT, set()).add(key)
        pairs_with.setdefault(key & _LOW, set()).add(key)

    def eligible(key: int) -> bool:
        # a word-initial "#" + "##" piece starting with "#" would spell a continuation piece
        return pair_count.get(key, 0) >= min_frequency and not (
            key >> _SHIFT == hash_initial and texts[key & _LOW].startswith("#")
        )

    def entry(key: int) -> tuple:
        count = pair_count[key]
        left, right = key >> _SHIFT, key & _LOW
        denominator = piece_count[left] * piece_count[right]
        return (-(count / denominator), _Score(count, denominator), -count, pieces[left], pieces[right], key,
                denominator)  # fmt: skip

    heap = [entry(key) for key in pair_count if eligible(key)]
    heapq.heapify(heap)
    merges: list[tuple[int, int]] = []
    while len(merges) < max_merges and heap:
        top = heapq.heappop(heap)
        key = top[5]
        if not eligible(key):
            continue
        left, right = key >> _SHIFT, key & _LOW
        if pair_count[key] != -top[2] or piece_count[left] * piece_count[right] != top[6]:
            heapq.heappush(heap, entry(key))  # stale: its pair's current entry goes in (a lower score, or a duplicate)
            continue
        joined = pieces[left] + texts[right]
        merged = ids.get(joined)
        if merged is None:
            merged = ids[joined] = len(pieces)
            pieces.append(joined)
            texts.append(texts[left] + texts[right])
            piece_count.append(0)
            merges.append((left, right))
            if progress is not None and len(merges) % 100 == 0:
                progress(len(merges), max_merges)
        grown = _merge_in_words(key, merged, words_symbols, word_counts, where, pair_count, pairs_with, piece_count)
        for changed in pairs_with.get(left, set()) | pairs_with.get(right, set()) | grown:
            if eligible(changed):  # count(a) and count(b) fell: these scores rose
                heapq.heappush(heap, entry(changed))
        if len(heap) > 4 * len(pair_count) + 100_000:  # drop the stale entries
            heap = [entry(pair) for pair in pair_count if eligible(pair)]
            heapq.heapify(heap)
    if progress is not None:
        progress(len(merges), max_merges)
    return merges


def _merge_in_words(
    key: int,
    merged: int,
    words_symbols: list[list[int]],
    word_counts: list[int],
    where: dict[int, set[int]],
    pair_count: dict[int, int],
    pairs_with: dict[int, set[int]],
    piece_count: list[int],
) -> set[int]:
    """Replace the pair ``key`` by ``merged`` in every word holding it (left to right, without overlap) and
    update the counts; return the pairs whose count grew (those holding ``merged``)."""
    left, right = key >> _SHIFT, key & _LOW
    delta: dict[int, int] = {}
    total = 0
    for index in where.pop(key, ()):
        symbols = words_symbols[index]
        rewritten: list[int] = []
        position, size = 0, len(symbols)
        while position < size:
            if position + 1 < size and symbols[position] == left and symbols[position + 1] == right:
                rewritten.append(merged)
                position += 2
            else:
                rewritten.append(symbols[position])
                position += 1
        hits = size - len(rewritten)
        if not hits:
            continue
        count = word_counts[index]
        total += hits * count
        for a, b in pairwise(symbols):
            pair = a << _SHIFT | b
            delta[pair] = delta.get(pair, 0) - count
        for a, b in pairwise(rewritten):
            pair = a << _SHIFT | b
            delta[pair] = delta.get(pair, 0) + count
            if a == merged or b == merged:
                where.setdefault(pair, set()).add(index)
        words_symbols[index] = rewritten
    grown = set()
    for pair, change in delta.items():
        if not change:
            continue
        before = pair_count.get(pair, 0)
        after = before + change
        if change > 0:
            grown.add(pair)
        if after:
            pair_count[pair] = after
            if not before:
                pairs_with.setdefault(pair >> _SHIFT, set()).add(pair)
                pairs_with.setdefault(pair & _LOW, set()).add(pair)
        else:
            del pair_count[pair]
            pairs_with[pair >> _SHIFT].discard(pair)
            pairs_with[pair & _LOW].discard(pair)
    piece_count[left] -= total
    piece_count[right] -= total
    piece_count[merged] += total
    return grown
