"""What the families trained from scratch (word, char, char-bpe, byte-bpe, morfessor, bpe-knockout) share.

* **Training** is one template (``TrainedTokenizer.train``): the family's options are parsed by its
  ``options_model``, the vocabulary size and the special tokens checked, and the vocabulary floor
  (unless it depends on the text), all before any text is read; then the family's ``_train``
  learns from the text with that ``TrainingRequest``.  bpe-knockout trains another family and
  keeps its own ``train``.

* Special tokens sit at ids ``0..len(specials)-1`` (``<pad> <unk> <s> </s>``
  first).  Text is encoded literally: ``"<s>"`` in the input is three
  characters, unless ``encode(..., allowed_special=True)`` asks to map special
  strings to their ids (tiktoken's convention).  Decoding a special id gives
  back its string.
* The vocabulary is a list of printable pieces (index = id) and an id ->
  bytes table used for decoding and byte spans.
* Encoding runs the pipeline of ``bpe.base``: the **normalizer**
  (``bpe.pipeline.normalizers``, default ``none``) rewrites the text and keeps an
  alignment to it; the **pre-tokenizer** cuts the normalized text; the
  **model** (the family) encodes each distinct pre-token once (cached) into
  ids and the UTF-8 byte length of each token; spans are mapped back through
  the alignment, so they always point into the text given.  The **decoder**
  joins the tokens' bytes and undoes the normalization.  A family that
  samples (BPE-dropout) encodes every pre-token afresh from a random stream.
"""

from __future__ import annotations

import copy
import random
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, pairwise
from typing import TYPE_CHECKING, Any, ClassVar

import regex
from typing_extensions import Self

from bpe.base import (
    DEFAULT_SPECIAL_TOKENS,
    UNK,
    Encoding,
    TokenizerError,
    TrainableTokenizer,
    VocabFloor,
    WordEncodings,
    ids_in_range,
    utf8,
    word_after_space,
    words_after_space,
)
from bpe.options import DeclaredOptions, FamilyOptions, checked_vocab_size, special_tokens_with
from bpe.pipeline.normalizers import NormalizedText, Normalizer, get_normalizer
from bpe.pipeline.pretokenizers import PreTokenizer, get_pretokenizer
from bpe.training.trainer import ProgressCallback

if TYPE_CHECKING:
    from bpe.training.counts import PretokenCounts

#: distinct pre-tokens remembered per tokenizer; the cache is emptied when full
CACHE_SIZE = 200_000


#: one pre-token's token ids and the UTF-8 byte length each covers (0 for a bare marker)
EncodedPretoken = tuple[list[int], list[int]]


def _joined(encoded: Iterable[EncodedPretoken], alignment: NormalizedText | None) -> Encoding:
    """One text's encoding from the (ids, byte lengths) of its pre-tokens in order, spans mapped back through
    its ``alignment`` to the normalizer (None: unchanged)."""
    ids: list[int] = []
    spans: list[tuple[int, int]] = []
    position = 0
    for token_ids, byte_lengths in encoded:
        ids.extend(token_ids)
        bounds = list(accumulate(byte_lengths, initial=position))
        spans.extend(pairwise(bounds))
        position = bounds[-1]
    return Encoding(ids, spans if alignment is None else list(map(alignment.original_span, spans)))


def _check_text(text: str) -> None:
    if not (isinstance(text, str) and text.isascii()):  # ASCII has a UTF-8 form: the common case, checked fast
        utf8(text)


@dataclass(frozen=True)
class TrainingRequest:
    """The arguments of ``TrainedTokenizer.train``, checked, as a family's ``_train`` reads them."""

    options: Any  # the family's options_model, parsed (``bpe.options``)
    vocab_size: int
    special_tokens: tuple[str, ...]  # all of them: the defaults first
    progress: bool | ProgressCallback = False
    workers: int | None = None

    @property
    def extra_special_tokens(self) -> tuple[str, ...]:
        """The special tokens after the defaults, as the families' constructors take them."""
        return self.special_tokens[len(DEFAULT_SPECIAL_TOKENS) :]


class TrainedTokenizer(DeclaredOptions, TrainableTokenizer):
    """Base of the from-scratch families; subclasses implement ``_train``, ``_encode_pretoken`` and
    ``from_dict``, set ``options`` (their ``options_model``), and override ``vocab_floor`` when their
    floor depends on the text."""

    options: FamilyOptions

    #: True when the vocabulary floor depends on the text's alphabet: ``_train`` checks it once counted
    floor_needs_text: ClassVar[bool] = False

    @classmethod
    def train(
        cls,
        texts: Iterable[str] | PretokenCounts,
        vocab_size: int,
        *,
        special_tokens: Iterable[str] = (),
        progress: bool | ProgressCallback = False,
        workers: int | None = None,
        **options: Any,
    ) -> Self:
        """Learn a tokenizer of this family from ``texts`` (strings, one document/sentence/line each,
        or their pre-token counts: ``bpe.training.counts``) with at most ``vocab_size`` ids.

        ``special_tokens``: extra specials after ``<pad> <unk> <s> </s>``; ``progress``: True for a
        tqdm bar on stderr, or a callback ``(steps done, steps wanted)`` (families that learn
        merges report them; the others show none); ``workers``: threads counting pre-tokens
        (``bpe.training.counts.count_pretokens``); ``options``: the family's ``options_model``.  Every
        argument is checked before any text is read; the family's ``_train`` says what it learns.
        """
        return cls._train(texts, cls.training_request(vocab_size, special_tokens, options, progress, workers))

    @classmethod
    def training_request(
        cls,
        vocab_size: Any,
        special_tokens: Iterable[str] = (),
        options: Mapping[str, Any] | FamilyOptions | None = None,
        progress: bool | ProgressCallback = False,
        workers: int | None = None,
    ) -> TrainingRequest:
        """The arguments of ``train`` checked before any text is read: the options parsed by the
        family's ``options_model``, the vocabulary size, all the special tokens (the defaults first)
        and, unless ``floor_needs_text``, the family's vocabulary floor on any text."""
        settings = cls.options_model.parse(cls.family, {} if options is None else options)
        vocab_size = checked_vocab_size(vocab_size, cls.options_model)
        specials = special_tokens_with(special_tokens)
        request = TrainingRequest(settings, vocab_size, specials, progress, workers)
        if not cls.floor_needs_text:
            cls.vocab_floor(special_tokens=request.extra_special_tokens).check(cls.family, vocab_size)
        return request

    @classmethod
    def vocab_floor(
        cls,
        texts: Iterable[str] | PretokenCounts | None = None,
        *,
        special_tokens: Iterable[str] = (),
        workers: int | None = None,
        **options: Any,
    ) -> VocabFloor:
        """The specials and the family's ``facts.floor``; for a family whose floor depends on the text
        (``floor_needs_text``), the specials and the base symbols of ``texts`` counted as training counts them
        (``_text_floor``), and ``facts.floor`` at least on any text (``texts`` None)."""
        settings = cls.options_model.parse(cls.family, options)
        specials = len(special_tokens_with(special_tokens))
        if texts is not None and cls.floor_needs_text:
            from bpe.training.counts import training_counts

            counts = training_counts(texts, settings.pretokenizer, workers=workers, normalizer=settings.normalizer)
            return cls._text_floor(counts, settings, specials)
        symbols, what = cls.facts.floor
        at_least = " at least" if cls.floor_needs_text else ""
        return VocabFloor(specials + symbols, f"{specials} special tokens + {symbols} {what}{at_least}")

    @classmethod
    def _text_floor(cls, counts: PretokenCounts, settings: Any, specials: int) -> VocabFloor:
        """The floor on counted text, of a family whose floor depends on the text (``floor_needs_text``)."""
        raise NotImplementedError(f"{cls.family} declares floor_needs_text and implements _text_floor")

    def derived(self, vocab_size: int) -> Self:
        """Of a derivable family: its first ids, and the merges among them, are what a smaller training
        learns, in the same order."""
        if vocab_size == self.vocab_size:
            return self
        body = self.to_dict()
        self._derived_floor(body).check(self.family, vocab_size)
        removed = self.vocab_size - vocab_size
        body["vocab"] = body["vocab"][:vocab_size]
        if "merges" in body:
            body["merges"] = body["merges"][: len(body["merges"]) - removed]
        return type(self).from_dict(body)

    def _derived_floor(self, body: Mapping[str, Any]) -> VocabFloor:
        """The floor a derived size must reach (a family whose floor depends on the text knows it from
        its own vocabulary)."""
        return type(self).vocab_floor(special_tokens=body["specials"][len(DEFAULT_SPECIAL_TOKENS) :])

    @classmethod
    def _train(cls, texts: Iterable[str] | PretokenCounts, request: TrainingRequest) -> Self:
        """What the family learns from ``texts`` once ``request`` is checked (every family but
        bpe-knockout, which trains another family in its own ``train``, implements it)."""
        raise NotImplementedError(f"{cls.family} implements train itself")

    def __init__(
        self,
        pieces: Sequence[str],
        token_bytes: Sequence[bytes],
        special_tokens: Sequence[str],
        pretokenizer: str,
        normalizer: str = "none",
    ) -> None:
        self._pieces = list(pieces)
        self._bytes = list(token_bytes)
        self.special_tokens = tuple(special_tokens)
        self.normalizer: Normalizer = get_normalizer(normalizer)
        self.pretokenizer: PreTokenizer = get_pretokenizer(pretokenizer)
        self._special_ids = {token: index for index, token in enumerate(self.special_tokens)}
        longest_first = sorted(self.special_tokens, key=len, reverse=True)
        self._special_pattern = regex.compile("|".join(regex.escape(token) for token in longest_first))
        self._cache: dict[str, tuple[list[int], list[int]]] = {}

    # -- encoding ---------------------------------------------------------
    def encode_with_spans(self, text: str, *, allowed_special: bool = False) -> Encoding:
        """Encode ``text``; with ``allowed_special`` the special strings in it become their ids."""
        _check_text(text)
        normalized = self.normalizer.normalize(text)
        stream = self._sampling_stream(text)
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        if not allowed_special:
            self._encode_chunk(normalized.text, 0, ids, spans, stream)
        else:
            char_position = byte_position = 0
            for match in self._special_pattern.finditer(normalized.text):
                chunk = normalized.text[char_position : match.start()]
                byte_position = self._encode_chunk(chunk, byte_position, ids, spans, stream)
                end = byte_position + len(match.group().encode("utf-8"))
                ids.append(self._special_ids[match.group()])
                spans.append((byte_position, end))
                char_position, byte_position = match.end(), end
            self._encode_chunk(normalized.text[char_position:], byte_position, ids, spans, stream)
        if normalized.changes:
            spans = [normalized.original_span(span) for span in spans]
        return Encoding(ids, spans)

    def encode(self, text: str, *, allowed_special: bool = False) -> list[int]:
        """Ids only: the hot path of throughput benchmarks skips building byte spans."""
        if allowed_special or self.samples:
            return self.encode_with_spans(text, allowed_special=allowed_special).ids
        _check_text(text)
        ids: list[int] = []
        cache = self._cache
        pretokens = self.pretokenizer.split(self.normalizer.normalize_text(text))
        self._cache_new(pretokens)  # a long text's new pre-tokens merged at once
        for pretoken in pretokens:
            encoded = cache.get(pretoken) or self._encode_and_cache(pretoken)
            ids.extend(encoded[0])
        return ids

    def encode_texts(self, texts: Sequence[str]) -> list[Encoding]:
        """``encode_with_spans`` of every text; without sampling, the pre-tokens new to the cache encoded first,
        all at once (``_cached_pretokens``)."""
        if self.samples:
            return self._sampled_encodings(texts)
        alignments, pretokens = self._cached_pretokens(texts)
        return [self._cached_encoding(pieces, alignment)
                for alignment, pieces in zip(alignments, pretokens, strict=True)]  # fmt: skip

    def encode_words(self, words: Sequence[str]) -> list[Encoding]:
        """``encode_word`` of every word of ``words``; without sampling, the pre-tokens new to the cache encoded
        first, all at once (``_cached_pretokens``)."""
        if self.samples:
            return [word_after_space(encoding) for encoding in self._sampled_encodings([" " + word for word in words])]
        alignments, pretokens = self._cached_pretokens([" " + word for word in words])
        cache = self._cache
        encodings = []
        for alignment, pieces in zip(alignments, pretokens, strict=True):
            ids: list[int] = []
            spans: list[tuple[int, int]] = []
            if alignment is not None:  # spans through the alignment, then as encode_word moves them
                encodings.append(word_after_space(self._cached_encoding(pieces, alignment)))
                continue
            # word_after_space inline: bytes counted from the word's start, -1 being the space
            position = -1
            for pretoken in pieces:
                token_ids, byte_lengths = cache.get(pretoken) or self._encode_and_cache(pretoken)
                if position >= 0:
                    ids.extend(token_ids)
                    bounds = list(accumulate(byte_lengths, initial=position))
                    spans.extend(pairwise(bounds))
                    position = bounds[-1]
                    continue
                for token, length in zip(token_ids, byte_lengths, strict=True):
                    if position >= 0:
                        spans.append((position, position + length))
                    elif length == 1:  # the space alone
                        position = 0
                        continue
                    else:  # covers the space and the word's start, or nothing (a bare marker)
                        spans.append((0, max(position + length, 0)))
                    ids.append(token)
                    position += length
            encodings.append(Encoding(ids, spans))
        return encodings

    def encode_word_arrays(self, words: Sequence[str]) -> WordEncodings:
        """``encode_words`` as flat arrays, the pre-tokens new to the cache encoded first, all at once; the spans
        taken from the tokens' byte lengths in one pass over all words (``words_after_space``).  Words that the
        normalizer changes, or sampling, go through ``encode_words``."""
        if self.samples:
            return super().encode_word_arrays(words)
        alignments, pretokens = self._cached_pretokens([" " + word for word in words])
        if any(alignment is not None for alignment in alignments):
            return WordEncodings.of(self.encode_words(words))
        cache = self._cache
        ids: list[int] = []
        lengths: list[int] = []
        counts = []
        for pieces in pretokens:
            before = len(ids)
            for pretoken in pieces:
                token_ids, byte_lengths = cache.get(pretoken) or self._encode_and_cache(pretoken)
                ids += token_ids
                lengths += byte_lengths
            counts.append(len(ids) - before)
        return words_after_space(ids, lengths, counts)

    def _cached_encoding(self, pretokens: list[str], alignment: NormalizedText | None) -> Encoding:
        """The encoding of a text from the cached encodings of its ``pretokens``, spans mapped back through its
        ``alignment`` to the normalizer (None: unchanged)."""
        cache = self._cache
        return _joined((cache.get(pretoken) or self._encode_and_cache(pretoken) for pretoken in pretokens), alignment)

    def _sampled_encodings(self, texts: Sequence[str]) -> list[Encoding]:
        """``encode_with_spans`` of every text when encoding samples: the pre-tokens of all texts sampled in one
        ``_sample_texts`` call."""
        for text in texts:
            _check_text(text)
        normalized = [self.normalizer.normalize(text) for text in texts]
        sampled = self._sample_texts(texts, [self.pretokenizer.split(text.text) for text in normalized])
        return [_joined(encoded, text if text.changes else None)
                for text, encoded in zip(normalized, sampled, strict=True)]  # fmt: skip

    def _cached_pretokens(self, texts: Sequence[str]) -> tuple[list[NormalizedText | None], list[list[str]]]:
        """The alignment of every normalized text (None when the normalizer left it unchanged) and its
        pre-tokens, after encoding those the cache does not hold in one ``_encode_pretokens`` call (compiled
        merges for the BPE families)."""
        for text in texts:
            _check_text(text)
        alignments: list[NormalizedText | None] = [None] * len(texts)
        if self.normalizer.name != "none":
            normalized = [self.normalizer.normalize(text) for text in texts]
            texts = [text.text for text in normalized]
            alignments = [text if text.changes else None for text in normalized]
        pretokens = [self.pretokenizer.split(text) for text in texts]
        self._cache_new(chain.from_iterable(pretokens))
        return alignments, pretokens

    def _cache_new(self, pretokens: Iterable[str]) -> None:
        """Encode the pre-tokens of ``pretokens`` the cache does not hold, in one ``_encode_pretokens`` call (the
        merge families' compiled batch merge), into the cache."""
        cache = self._cache
        new = [pretoken for pretoken in dict.fromkeys(pretokens) if pretoken not in cache]
        for pretoken, encoded in zip(new, self._encode_pretokens(new), strict=True):
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            cache[pretoken] = encoded

    def _encode_pretokens(self, pretokens: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """``_encode_pretoken`` of every pre-token of ``pretokens``; families with a batch encoder override it."""
        return [self._encode_pretoken(pretoken) for pretoken in pretokens]

    def _encode_and_cache(self, pretoken: str) -> tuple[list[int], list[int]]:
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        encoded = self._cache[pretoken] = self._encode_pretoken(pretoken)
        return encoded

    def _encode_chunk(
        self, text: str, offset: int, ids: list[int], spans: list[tuple[int, int]], stream: random.Random | None
    ) -> int:
        """Append the tokens of ``text`` (which starts at byte ``offset``); return the byte offset after it."""
        cache = self._cache
        position = offset
        for pretoken in self.pretokenizer.split(text):
            if stream is None:
                token_ids, byte_lengths = cache.get(pretoken) or self._encode_and_cache(pretoken)
            else:
                token_ids, byte_lengths = self._sample_pretoken(pretoken, stream)
            ids.extend(token_ids)
            for length in byte_lengths:
                spans.append((position, position + length))
                position += length
        return position

    # -- sampling (families that can sample override these and ``samples``) ---
    def _sampling_stream(self, text: str) -> random.Random | None:
        """The random stream of one encode call of ``text``, or None when encoding is deterministic."""
        return None

    def _sample_pretoken(self, pretoken: str, stream: random.Random) -> tuple[list[int], list[int]]:
        raise NotImplementedError(f"{self.family} does not sample")

    def _sample_texts(self, texts: Sequence[str], pretokens: Sequence[list[str]]) -> list[list[EncodedPretoken]]:
        """For every text, ``_sample_pretoken`` of each of its ``pretokens`` from the text's own stream, as
        ``encode_with_spans`` samples them; families with a batch sampler override it."""
        encoded = []
        for text, pieces in zip(texts, pretokens, strict=True):
            stream = self._sampling_stream(text)
            encoded.append([self._sample_pretoken(pretoken, stream) for pretoken in pieces])
        return encoded

    @abstractmethod
    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        """The ids of one pre-token and the UTF-8 byte length each covers (0 for a bare marker)."""

    # -- decoding ---------------------------------------------------------
    def _check_id(self, token_id: int) -> None:
        if isinstance(token_id, bool) or not isinstance(token_id, int):
            raise TokenizerError(f"token id {token_id!r} is not an integer", code="token_id_not_integer",
                                 value=token_id)  # fmt: skip
        if not 0 <= token_id < len(self._pieces):
            raise TokenizerError(
                f"token id {token_id} is out of range (the vocabulary has ids 0..{self.vocab_size - 1})",
                code="token_id_out_of_range",
                value=token_id,
            )

    def id_to_bytes(self, token_id: int) -> bytes:
        """The token's bytes in the normalized form (jamo stay decomposed; ``decode`` recomposes)."""
        self._check_id(token_id)
        return self._bytes[token_id]

    def id_to_piece(self, token_id: int) -> str:
        self._check_id(token_id)
        return self._pieces[token_id]

    def decode(self, ids: Sequence[int]) -> str:
        if not ids_in_range(ids, len(self._pieces)):
            for token_id in ids:
                self._check_id(token_id)
        text = b"".join([self._bytes[token_id] for token_id in ids]).decode("utf-8", errors="replace")
        return self.normalizer.denormalize(text)

    # -- vocabulary -------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self._pieces)

    @property
    def unk_id(self) -> int | None:
        return self._special_ids[UNK]

    @property
    def vocab(self) -> list[str]:
        """The printable pieces, index = id (a copy)."""
        return list(self._pieces)

    # -- persistence ------------------------------------------------------
    def config(self) -> dict[str, Any]:
        """The options this tokenizer was built with (saved under ``config``)."""
        return self.options.model_dump()

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config(), "specials": list(self.special_tokens), "vocab": list(self._pieces)}

    def _fresh_copy(self) -> Self:
        """A shallow copy with its own (empty) encoding cache, for variants sharing the vocabulary."""
        clone = copy.copy(self)
        clone._cache = {}
        return clone
