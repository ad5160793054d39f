"""unigram: a Unigram language model tokenizer trained from scratch (Kudo 2018, "Subword Regularization:
Improving Neural Network Translation Models with Multiple Subword Candidates", ACL), as sentencepiece's
unigram trainer does it, on the pre-tokens of this library's pipeline.

**Training** (``bpe.training.unigram_trainer``, which states every step, tie-break and difference from
sentencepiece): the text is cut into pre-tokens (``pretokenizer``, default ``unicode``) and counted; a seed
vocabulary of every character and the ``seed_size`` most frequent substrings (frequency × length, at most
``max_piece_length`` characters, inside pre-tokens) gets scores by EM (the expected count of each piece over
all segmentations of every distinct pre-token, weighted by its count; sentencepiece's digamma M-step), and
after every ``num_sub_iterations`` EM steps the pieces whose removal costs least likelihood are dropped,
keeping ``shrinking_factor`` of them, until ``1.1 · vocab_size`` remain; then the best-scoring pieces up to
``vocab_size`` are kept, every character of the text among them.  The vocabulary is the specials, then the
pieces by score (highest first, ties in code point order).  A smaller size is not a prefix of a larger one
(pruning depends on the target), so the family is not derivable.

**Encoding**: per pre-token, the Viterbi segmentation (highest sum of scores); among equal sums, for each
end position the piece starting earliest (the longest last piece), as sentencepiece's encoder.  A character
in no piece is ``<unk>`` with the lowest piece score − 10 (sentencepiece's ``kUnkPenalty``), and a run of
them is one ``<unk>``, as sentencepiece merges them.  Pieces hold the text as it is, spaces included
(`` the``, no ``▁``), so decoding joins them: lossless when no ``<unk>`` was produced.  A piece that spells
a special token's string is an ordinary piece: text is literal unless ``allowed_special``.

**Inference methods** (``encode_mode``, Uzan et al. 2024; ``bpe.models.inference``): ``likelihood`` (the
default) is the Viterbi segmentation above; ``longest-prefix``, ``longest-suffix``, ``longest-token`` and
``fewest-tokens`` (with its ``tie_break``) segment each pre-token over the pieces alone, scores unused.
Symbols are the pre-token's characters and a piece matches its characters as they are, its attached space
included (`` the`` only where a space precedes ``the`` in the pre-token).  A character that is no piece
and starts none that matches is a segment of its own, and a run of such segments is one ``<unk>`` covering
them, as the Viterbi encoder merges them (``fewest-tokens`` counts each unknown character as one token
before the run is merged).  Decoding stays lossless when no ``<unk>`` was produced: every other piece is
its own text.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import pairwise
from typing import Annotated, Any

from pydantic import Field

from bpe.base import DEFAULT_SPECIAL_TOKENS, FamilyFacts, TokenizerError, VocabFloor
from bpe.models.inference import UNMATCHED, VocabularyTrie
from bpe.models.trained import TrainedTokenizer, TrainingRequest
from bpe.options import (
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
from bpe.training.trainer import progress_callback
from bpe.training.unigram_trainer import UNK_PENALTY, train_pieces
from bpe.validation import PositiveInt, in_interval


class UnigramOptions(SamplingOptions):
    """``SamplingOptions`` for the rule tying ``tie_break`` to ``fewest-tokens``; this family never samples."""

    native_mode = "likelihood"

    pretokenizer: PreTokenizerName = "unicode"
    normalizer: NormalizerName = "none"
    seed_size: Annotated[
        PositiveInt, Field(description="substrings in the seed vocabulary, the most frequent by frequency x length")
    ] = 1_000_000
    shrinking_factor: Annotated[
        in_interval(0, 1), Field(description="share of the pieces each pruning step keeps (sentencepiece: 0.75)")
    ] = 0.75
    num_sub_iterations: Annotated[PositiveInt, Field(description="EM steps between two pruning steps")] = 2
    max_piece_length: Annotated[PositiveInt, Field(description="longest piece, in characters")] = 16
    encode_mode: encode_mode_option("likelihood") = "likelihood"  # type: ignore[valid-type]
    tie_break: TieBreak = "longest-first"


class UnigramTokenizer(TrainedTokenizer):
    family = "unigram"
    options_model = UnigramOptions
    facts = FamilyFacts(native_method="likelihood")
    floor_needs_text = True  # every character of the text is a piece

    options: UnigramOptions

    def __init__(
        self, scored_pieces: Iterable[tuple[str, float]], *, special_tokens: Iterable[str] = (), **options: Any
    ) -> None:
        """``scored_pieces``: (piece, log probability) in id order after the specials; ``special_tokens``: extra
        specials after ``<pad> <unk> <s> </s>``; ``options``: see ``UnigramOptions``."""
        self.options = UnigramOptions.parse(self.family, options)
        specials = special_tokens_with(special_tokens)
        scored = list(scored_pieces)
        for index, entry in enumerate(scored):
            piece, score = entry if isinstance(entry, tuple | list) and len(entry) == 2 else (None, None)
            if not isinstance(piece, str) or not piece or not _is_score(score):
                raise TokenizerError(f"unigram piece #{index} must be (a non-empty string, a finite score), got "
                                     f"{entry!r}", code="bad_vocabulary", value=entry)  # fmt: skip
        pieces = [piece for piece, _ in scored]
        if len(set(pieces)) != len(pieces):
            duplicate = next(piece for index, piece in enumerate(pieces) if piece in pieces[:index])
            raise TokenizerError(f"unigram pieces must be distinct; {duplicate!r} is given twice",
                                 code="bad_vocabulary", value=duplicate)  # fmt: skip
        vocab = [*specials, *pieces]
        super().__init__(vocab, [piece.encode("utf-8") for piece in vocab], specials, self.options.pretokenizer,
                         self.options.normalizer)  # fmt: skip
        self._scores = [float(score) for _, score in scored]
        self._piece_ids = {piece: len(specials) + index for index, piece in enumerate(pieces)}
        self._id_scores = [0.0] * len(specials) + self._scores
        self._longest = max(map(len, pieces), default=1)
        self._unk_score = min(self._scores, default=0.0) - UNK_PENALTY
        self._trie: VocabularyTrie | None = None  # the pieces, for the inference methods; built on first use

    @property
    def scored_pieces(self) -> list[tuple[str, float]]:
        """(piece, score) of every id after the specials, in id order."""
        return list(zip(self._pieces[len(self.special_tokens) :], self._scores, strict=True))

    # -- training ---------------------------------------------------------
    @classmethod
    def _train(cls, texts: Iterable[str] | PretokenCounts, request: TrainingRequest) -> UnigramTokenizer:
        """Count the pre-tokens, check the floor on their characters, train the pieces (module docstring)."""
        settings = request.options
        counts = training_counts(texts, settings.pretokenizer, workers=request.workers, normalizer=settings.normalizer)
        words = dict(counts.items())
        n_specials = len(request.special_tokens)
        _floor(n_specials, len({char for word in words for char in word})).check(cls.family, request.vocab_size)
        with progress_callback(request.progress, f"{cls.family} EM rounds") as callback:
            scored = train_pieces(words, request.vocab_size, n_specials, seed_size=settings.seed_size,
                                  shrinking_factor=settings.shrinking_factor,
                                  num_sub_iterations=settings.num_sub_iterations,
                                  max_piece_length=settings.max_piece_length, progress=callback)  # fmt: skip
        return cls(scored, special_tokens=request.extra_special_tokens, **settings.model_dump())

    @classmethod
    def _text_floor(cls, counts: PretokenCounts, settings: UnigramOptions, specials: int) -> VocabFloor:
        """The specials and every character of the counted text (through the normalizer)."""
        return _floor(specials, len({char for pretoken in counts for char in pretoken}))

    # -- encoding ---------------------------------------------------------
    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        """The Viterbi segmentation (module docstring): ids and UTF-8 byte lengths, runs of ``<unk>`` as one."""
        if self.options.encode_mode != "likelihood":
            return self._segment_pretoken(pretoken)
        size = len(pretoken)
        best = [0.0] + [-math.inf] * size
        back = [0] * (size + 1)
        chosen = [0] * (size + 1)
        piece_ids, scores, longest, unk = self._piece_ids, self._id_scores, self._longest, self.unk_id
        for start in range(size):
            base = best[start]
            single = False
            for end in range(start + 1, min(size, start + longest) + 1):
                token = piece_ids.get(pretoken[start:end])
                if token is None:
                    continue
                single = single or end == start + 1
                score = base + scores[token]
                if score > best[end]:  # strictly: the earliest start wins a tie
                    best[end], back[end], chosen[end] = score, start, token
            if not single and base + self._unk_score > best[start + 1]:
                best[start + 1], back[start + 1], chosen[start + 1] = base + self._unk_score, start, unk
        ids: list[int] = []
        bounds = [size]
        end = size
        while end > 0:
            start = back[end]
            if chosen[end] == unk and ids and ids[-1] == unk:
                bounds[-1] = start  # a run of unknown characters is one <unk>
            else:
                ids.append(chosen[end])
                bounds.append(start)
            end = start
        ids.reverse()
        bounds.reverse()
        return ids, _byte_lengths(pretoken, bounds)

    def _segment_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        """An inference method over the pieces (module docstring), runs of unknown characters as one ``<unk>``."""
        if self._trie is None:
            self._trie = VocabularyTrie((piece, token) for piece, token in self._piece_ids.items())
        unk = self.unk_id
        ids: list[int] = []
        bounds = [0]
        for token, length in self._trie.segment(pretoken, self.options.encode_mode, self.options.tie_break):
            if token == UNMATCHED and ids and ids[-1] == unk:
                bounds[-1] += length  # a run of unknown characters is one <unk>
                continue
            ids.append(unk if token == UNMATCHED else token)
            bounds.append(bounds[-1] + length)
        return ids, _byte_lengths(pretoken, bounds)

    # -- persistence ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "scores": list(self._scores)}

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> UnigramTokenizer:
        config, specials, vocab = read_common_body(body)
        scores = body_field(body, "scores", list)
        pieces = vocab[len(specials) :]
        if len(scores) != len(pieces):
            raise TokenizerError(f'tokenizer file: field "scores" holds {len(scores)} scores for {len(pieces)} pieces '
                                 '(one per "vocab" entry after the specials)', code="bad_tokenizer_file",
                                 value=len(scores), field="scores")  # fmt: skip
        for index, score in enumerate(scores):
            if not _is_score(score):
                raise TokenizerError(f'tokenizer file: field "scores[{index}]" must be a finite number, got {score!r}',
                                     code="bad_tokenizer_file", value=score, field=f"scores[{index}]")  # fmt: skip
        options = UnigramOptions.read_saved(config)
        return cls(zip(pieces, scores, strict=True), special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :],
                   **options.model_dump())  # fmt: skip


def _byte_lengths(pretoken: str, bounds: list[int]) -> list[int]:
    """The UTF-8 byte length of each segment ``pretoken[start:end]`` between consecutive ``bounds``."""
    if pretoken.isascii():
        return [end - start for start, end in pairwise(bounds)]
    return [len(pretoken[start:end].encode("utf-8")) for start, end in pairwise(bounds)]


def _is_score(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _floor(specials: int, characters: int) -> VocabFloor:
    """Every character of the training text is a piece (sentencepiece's required characters)."""
    return VocabFloor(specials + characters, f"{specials} special tokens + {characters} characters of the training "
                      "text", "; raise vocab_size")  # fmt: skip
