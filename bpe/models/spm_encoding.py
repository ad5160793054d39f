"""Encoding and decoding through a sentencepiece processor: ``SentencePieceBacked``, shared by the trained
reference rows ``spm-bpe`` and ``spm-unigram`` (``bpe.models.spm``) and by ``SentencePieceModelTokenizer``, a
published sentencepiece ``.model`` file (Llama 2, the mistral-common models) used as is.

A literal ``▁`` (U+2581) in the text is sentencepiece's own whitespace symbol: it is encoded
exactly like a space, so ``"a▁b"`` and ``"a b"`` give the same ids and both decode to ``"a b"``
(decoding is lossy for that one character).  Spans stay exact: they index the text as given (a
literal ``▁`` covers its own three bytes) and tile it; only ``id_to_bytes`` of such a token shows a
space where the text has ``▁``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from itertools import chain
from typing import Any

import sentencepiece
from sentencepiece import sentencepiece_model_pb2

from bpe.base import Encoding, Tokenizer, TokenizerError, WordEncodings, ids_in_range, utf8
from bpe.pretrained.base import PretrainedTokenizer, check_token_id

#: sentencepiece's whitespace meta symbol; text containing it literally decodes it as a space.
WHITESPACE_MARK = "▁"


def load_processor(model_proto: bytes, source: str) -> sentencepiece.SentencePieceProcessor:
    """A processor for a serialized model; ``source`` names it in the error."""
    try:
        return sentencepiece.SentencePieceProcessor(model_proto=model_proto)
    except RuntimeError:
        raise TokenizerError(f"{source}: not a valid sentencepiece model", code="bad_sentencepiece_model",
                             value=source) from None  # fmt: skip


def looks_like_model(data: bytes) -> bool:
    """True when ``data`` parses as a sentencepiece ``ModelProto`` with pieces."""
    try:
        return len(sentencepiece_model_pb2.ModelProto.FromString(data).pieces) > 0
    except Exception:  # protobuf's DecodeError, or worse on random bytes
        return False


def _check_encodable(text: str) -> None:
    """A TokenizerError unless ``text`` is a string with a UTF-8 form (a lone surrogate has none), as in every
    family; ASCII text, the common case, is passed without encoding it."""
    if not isinstance(text, str) or not text.isascii():
        utf8(text)


class SentencePieceBacked(Tokenizer):
    """Encoding and decoding through a ``SentencePieceProcessor`` held in ``self._processor``."""

    _processor: sentencepiece.SentencePieceProcessor

    def encode_with_spans(self, text: str) -> Encoding:
        """Byte spans into ``text`` from sentencepiece's begin/end offsets, with two fixes:
        the dummy-prefix ``▁`` covers nothing (empty span), and byte-fallback pieces,
        which sentencepiece reports as empty spans plus one span for the whole
        character on the last byte, each get their own single byte."""
        _check_encodable(text)
        return self._encoding(self._encode_proto(text))

    def encode(self, text: str) -> list[int]:
        """Ids only: sentencepiece's ids without building spans (integers unless the encoding samples)."""
        _check_encodable(text)
        if self.samples:
            return [piece.id for piece in self._encode_proto(text).pieces]
        return self._processor.encode(text)

    def _encoding(self, proto: Any) -> Encoding:
        """The ids and spans of a SentencePieceText proto (``encode_with_spans``' fixes applied)."""
        byte_ids = self._byte_ids
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        cursor = 0  # end of the text covered so far
        for piece in proto.pieces:
            span = (cursor, cursor + 1) if piece.id in byte_ids else (piece.begin, piece.end)
            ids.append(piece.id)
            spans.append(span)
            cursor = span[1]
        return Encoding(ids=ids, spans=spans)

    def encode_texts(self, texts: Sequence[str]) -> list[Encoding]:
        """``encode_with_spans`` of every text, in one call of sentencepiece's batch encoder (on one thread:
        the same segmentation as one call per text, without the per-call cost of its Python wrapper).  A model
        that leaves the text as it is (``_surface_lengths``) is asked for ids only, each piece's span read
        from the bytes its piece spells; a text where that cannot be the answer (a literal ``▁``, an unknown
        or control piece, lengths that do not add up to the text's) is encoded again with spans."""
        for text in texts:
            _check_encodable(text)
        lengths = self._surface_lengths
        if lengths is None:
            return [self._encoding(proto) for proto in self._processor.encode(list(texts), out_type="proto",
                                                                              num_threads=1)]  # fmt: skip
        dummy = 1 if self.adds_dummy_prefix else 0
        encodings = []
        for text, ids in zip(texts, self._processor.encode(list(texts), num_threads=1), strict=True):
            spans = []
            position = -dummy if ids else 0  # the dummy prefix's ▁ spells no byte of the text
            for token in ids:
                length = lengths[token]
                if length < 0:
                    break
                end = position + length
                spans.append((max(position, 0), end))
                position = end
            if len(spans) != len(ids) or position != len(text.encode("utf-8")) or WHITESPACE_MARK in text:
                encodings.append(self.encode_with_spans(text))
            else:
                encodings.append(Encoding(ids=ids, spans=spans))
        return encodings

    @functools.cached_property
    def _surface_lengths(self) -> list[int] | None:
        """Per id, the UTF-8 length of the text its piece stands for (``▁`` a space; a byte-fallback piece one
        byte; -1 for unknown, control and unused pieces), when the model leaves the text as it is (identity
        normalization, whitespace kept and escaped as ``▁`` before the word); None otherwise."""
        normalizer = self._model_spec.normalizer_spec
        if (normalizer.name != "identity" or normalizer.precompiled_charsmap or normalizer.remove_extra_whitespaces
                or not normalizer.escape_whitespaces or self._model_spec.trainer_spec.treat_whitespace_as_suffix):
            return None  # fmt: skip
        processor = self._processor
        lengths = []
        for token in range(processor.get_piece_size()):
            if processor.is_byte(token):
                lengths.append(1)
            elif processor.is_unknown(token) or processor.is_control(token) or processor.is_unused(token):
                lengths.append(-1)
            else:
                lengths.append(len(processor.id_to_piece(token).replace(WHITESPACE_MARK, " ").encode("utf-8")))
        return lengths

    def encode_words(self, words: Sequence[str]) -> list[Encoding]:
        return self.encode_texts(words)  # a word's encoding is its encode_with_spans (``encode_word``)

    def encode_word_arrays(self, words: Sequence[str]) -> WordEncodings:
        """``encode_words`` as flat arrays: for a model that leaves the text as it is, the ids of all words in one
        batch call and each piece's span read from the bytes it spells, in one pass over all words (as
        ``encode_texts``); a batch where that cannot be every word's answer goes through ``encode_texts``."""
        import numpy as np

        lengths = self._surface_lengths
        if lengths is None or self.samples or any(WHITESPACE_MARK in word for word in words):
            return WordEncodings.of(self.encode_texts(words))
        for word in words:
            _check_encodable(word)
        encoded = self._processor.encode(list(words), num_threads=1)
        counts = np.fromiter((len(word_ids) for word_ids in encoded), dtype=np.int64, count=len(encoded))
        ids = np.fromiter(chain.from_iterable(encoded), dtype=np.int64, count=int(counts.sum()))
        token_lengths = np.asarray(lengths, dtype=np.int64)[ids]
        word_of = np.repeat(np.arange(len(words)), counts)
        dummy = 1 if self.adds_dummy_prefix else 0
        spelled = np.bincount(word_of, weights=token_lengths, minlength=len(words)) - dummy * (counts > 0)
        expected = np.fromiter((len(word.encode("utf-8")) for word in words), dtype=np.int64, count=len(words))
        if (token_lengths < 0).any() or (spelled != expected).any():
            return WordEncodings.of(self.encode_texts(words))
        ends = np.cumsum(token_lengths)
        starts = ends - token_lengths
        starts = starts - starts[(np.cumsum(counts) - counts)[word_of]] - dummy  # the dummy ▁ spells no byte
        spans = np.stack([np.maximum(starts, 0), starts + token_lengths], axis=1)
        return WordEncodings(ids, spans, counts)

    @functools.cached_property
    def _byte_ids(self) -> frozenset[int]:
        """The ids of byte-fallback pieces (``<0xAB>``), looked up once: ``is_byte`` per piece is slow."""
        processor = self._processor
        return frozenset(i for i in range(processor.get_piece_size()) if processor.is_byte(i))

    def _encode_proto(self, text: str) -> Any:
        """sentencepiece's own encoding of ``text`` (a SentencePieceText proto)."""
        return self._processor.encode(text, out_type="proto")

    def encode_word(self, word: str) -> Encoding:
        """The dummy prefix already gives a word its mid-sentence form (``▁word``)."""
        return self.encode_with_spans(word)

    @functools.cached_property
    def _model_spec(self) -> Any:
        return sentencepiece_model_pb2.ModelProto.FromString(self._processor.serialized_model_proto())

    @property
    def adds_dummy_prefix(self) -> bool:
        """True when the model puts a ``▁`` before every text (its normalizer's ``add_dummy_prefix``)."""
        return bool(self._model_spec.normalizer_spec.add_dummy_prefix)

    @functools.cached_property
    def _processor_without_dummy_prefix(self) -> sentencepiece.SentencePieceProcessor:
        spec = sentencepiece_model_pb2.ModelProto.FromString(self._processor.serialized_model_proto())
        spec.normalizer_spec.add_dummy_prefix = False
        return load_processor(spec.SerializeToString(), self.name)

    def sentencepiece_ids(self, text: str, *, dummy_prefix: bool = True) -> list[int]:
        """sentencepiece's own segmentation of ``text`` (whatever inference method or sampling the tokenizer is
        set to); with ``dummy_prefix=False`` the model's dummy prefix turned off, every other setting as the
        model has it: how a piece without ``▁`` (one that stands inside a word) can be the whole of an
        encoding (``benchmarks.measure.audit``)."""
        processor = self._processor if dummy_prefix else self._processor_without_dummy_prefix
        return list(processor.encode(text))

    def _check_id(self, token_id: int) -> None:
        check_token_id(token_id, self.vocab_size, self.name)

    def id_to_bytes(self, token_id: int) -> bytes:
        """``▁`` stands for a space, ``<0xAB>`` for its byte; control and unknown ids for no text."""
        self._check_id(token_id)
        processor = self._processor
        if processor.is_byte(token_id):
            return bytes([int(processor.id_to_piece(token_id)[3:5], 16)])
        if processor.is_control(token_id) or processor.is_unknown(token_id):
            return b""
        return processor.id_to_piece(token_id).replace(WHITESPACE_MARK, " ").encode("utf-8")

    def decode(self, ids: Sequence[int]) -> str:
        """sentencepiece's own decoding: drops the dummy-prefix space and control ids,
        shows ``<unk>`` as `` ⁇ ``, turns cut byte sequences into U+FFFD."""
        if not ids_in_range(ids, self.vocab_size):
            for token_id in ids:
                self._check_id(token_id)
        return self._processor.decode(list(ids))

    def id_to_piece(self, token_id: int) -> str:
        self._check_id(token_id)
        return self._processor.id_to_piece(token_id)

    @property
    def vocab_size(self) -> int:
        return self._processor.get_piece_size()

    @property
    def unk_id(self) -> int | None:
        return self._processor.unk_id()


class SentencePieceModelTokenizer(SentencePieceBacked, PretrainedTokenizer):
    """A published sentencepiece model, used as is: sentencepiece's own encoding (no BOS/EOS, no
    sampling) and decoding."""

    family = "sentencepiece"

    def __init__(self, model_proto: bytes, name: str) -> None:
        PretrainedTokenizer.__init__(self, name)
        self._processor = load_processor(model_proto, name)
