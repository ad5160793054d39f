"""Reference rows ``spm-bpe`` and ``spm-unigram``: sentencepiece behind the Tokenizer interface.

Settings: pad 0 / unk 1 / bos 2 / eos 3 (every trainable family's layout), byte fallback on, and
four deliberate choices:

* **identity normalization**, no whitespace collapsing: every piece maps back to
  the original text, so spans are honest (Unicode normalization is the corpus
  layer's job);
* **determinism**: every sentence is used (``input_sentence_size=0``, so no
  sampling and no seed matters) and training runs on one thread, because the
  unigram EM sums floats per thread and the thread count changes the model;
* **in memory**: sentences go in through an iterator and the model comes back
  as bytes; nothing is written to disk;
* **soft vocabulary limit**, as in the other families: a text with less to learn
  than ``vocab_size`` gives a smaller vocabulary (``hard_vocab_limit`` off, which
  leaves the pieces unchanged when the size is reachable).  A ``vocab_size``
  below specials + 256 byte pieces + the covered characters is a TokenizerError
  naming that minimum.

Encode-time options (``bpe.options``; saved in ``config``; training is unchanged by them):

``encode_mode``
    ``merges`` for spm-bpe and ``likelihood`` (the Viterbi segmentation) for
    spm-unigram are sentencepiece's own encoding (the default).  The
    vocabulary-only inference methods of Uzan et al. 2024 (``bpe.models.inference``:
    ``longest-prefix``, ``longest-suffix``, ``longest-token``,
    ``fewest-tokens``) run over the model's pieces instead, in the text
    sentencepiece itself segments: a dummy-prefix ``▁`` before the text and
    every space as ``▁`` (identity normalization, as trained).  Each ``▁``
    starts a new unit no piece crosses (sentencepiece's whitespace split); a
    character in no piece is spelled with its byte-fallback pieces.  Without
    this the one unigram vocabulary of the benchmark could not be compared
    under the same inference methods as the BPE vocabularies.
``alpha``, ``nbest`` (spm-unigram)
    Subword regularization (Kudo 2018, "Subword Regularization: Improving
    Neural Network Translation Models with Multiple Subword Candidates"), on
    only when ``alpha`` is given: sample a segmentation with probability
    proportional to P(x)^alpha, among the ``nbest`` best (default -1: among
    all, by forward-filtering backward-sampling), with sentencepiece's own
    sampler.
``dropout`` (spm-bpe)
    sentencepiece's BPE-dropout (Provilkov et al. 2020) with this probability;
    off when 0 (the default).
``seed``
    Sampling draws from sentencepiece's generator, re-seeded before every
    encode call from ``seed`` and the text, so the same text, seed and model
    give the same tokens in any order (the seed is process-wide sentencepiece
    state: do not sample from several threads at once).

A literal ``▁`` (U+2581) in the text is sentencepiece's own whitespace symbol: it is encoded
exactly like a space, so ``"a▁b"`` and ``"a b"`` give the same ids and both decode to ``"a b"``
(decoding is lossy for that one character).  Spans stay exact: they index the text as given (a
literal ``▁`` covers its own three bytes) and tile it; only ``id_to_bytes`` of such a token shows a
space where the text has ``▁``.

``SentencePieceBacked`` is shared with ``SentencePieceModelTokenizer``: a published sentencepiece
``.model`` file (Llama 2, the mistral-common models), used as is.
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
import random
import re
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any, ClassVar

import sentencepiece
from sentencepiece import sentencepiece_model_pb2

from bpe.base import (
    DEFAULT_SPECIAL_TOKENS,
    Encoding,
    Tokenizer,
    TokenizerError,
    TrainableTokenizer,
    VocabFloor,
    WordEncodings,
    ids_in_range,
    utf8,
)
from bpe.models.inference import UNMATCHED, VocabularyTrie
from bpe.options import DeclaredOptions, SentencePieceBPEOptions, SentencePieceUnigramOptions, checked_vocab_size
from bpe.pretrained.base import PretrainedTokenizer, check_token_id
from bpe.training.trainer import checked_texts

#: sentencepiece's whitespace meta symbol; text containing it literally decodes it as a space.
WHITESPACE_MARK = "▁"
_BYTE_PIECES = 256
_MODEL_TYPE_IDS = {"unigram": 1, "bpe": 2}  # sentencepiece_model.proto TrainerSpec.ModelType

#: the facts of training a saved ``config`` records besides the options (``bpe.options``)
TRAINING_RECORD = (
    "model_type",
    "vocab_size",
    "byte_fallback",
    "normalization",
    "special_tokens",
    "sentencepiece_version",
)

_TOO_SMALL = re.compile(r"Vocabulary size is smaller than required_chars\. (\d+) vs (\d+)")


def load_processor(model_proto: bytes, source: str) -> sentencepiece.SentencePieceProcessor:
    """A processor for a serialized model; ``source`` names it in the error."""
    try:
        return sentencepiece.SentencePieceProcessor(model_proto=model_proto)
    except RuntimeError:
        raise TokenizerError(f"{source}: not a valid sentencepiece model") from None


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


class SentencePieceTokenizer(DeclaredOptions, SentencePieceBacked, TrainableTokenizer):
    """A trained sentencepiece model; subclasses fix the model type and its options (``bpe.options``)."""

    model_type: ClassVar[str]
    options_model: ClassVar[type[SentencePieceBPEOptions | SentencePieceUnigramOptions]]
    options: SentencePieceBPEOptions | SentencePieceUnigramOptions

    def __init__(
        self,
        model_proto: bytes,
        config: dict[str, Any],
        source: str = "<memory>",
        options: SentencePieceBPEOptions | SentencePieceUnigramOptions | None = None,
    ) -> None:
        """``config``: the training record (model type, sizes, sentencepiece version); ``options``:
        the family's options (default: every option's default)."""
        self._model_proto = model_proto
        self._processor = load_processor(model_proto, source)
        self.config = config
        self.options = self.options_model() if options is None else options
        self._trie: VocabularyTrie | None = None

    # -- encoding ---------------------------------------------------------
    def _encode_proto(self, text: str) -> Any:
        if not self.samples:
            return super()._encode_proto(text)
        sentencepiece.set_random_generator_seed(random.Random(f"{self.options.seed}\x00{text}").getrandbits(32))
        return self._processor.encode(text, out_type="proto", enable_sampling=True, **self._sampling_arguments())

    @abstractmethod
    def _sampling_arguments(self) -> dict[str, Any]:
        """sentencepiece's sampling arguments for this model type's options."""

    def encode_texts(self, texts: Sequence[str]) -> list[Encoding]:
        if self.samples or self.options.encode_mode != self.options.native_mode:  # one text at a time
            return [self.encode_with_spans(text) for text in texts]
        return super().encode_texts(texts)

    def encode_word_arrays(self, words: Sequence[str]) -> WordEncodings:
        """The batch arrays read sentencepiece's own segmentation: another inference method encodes each word
        as ``encode_word`` does."""
        if self.options.encode_mode != self.options.native_mode:
            return WordEncodings.of(self.encode_texts(words))
        return super().encode_word_arrays(words)

    def encode(self, text: str) -> list[int]:
        if self.options.encode_mode == self.options.native_mode:
            return super().encode(text)
        return self.encode_with_spans(text).ids

    def encode_with_spans(self, text: str) -> Encoding:
        encode_mode = self.options.encode_mode
        if encode_mode == self.options.native_mode:
            return super().encode_with_spans(text)
        utf8(text)  # a string with a UTF-8 form, as in every family
        if self._trie is None:
            self._trie = self._build_trie()
        if not text:
            return Encoding(ids=[], spans=[])
        # the text as sentencepiece segments it: dummy prefix, spaces as the whitespace mark
        symbols = [WHITESPACE_MARK, *(WHITESPACE_MARK if char == " " else char for char in text)]
        widths = [0, *(len(char.encode("utf-8")) for char in text)]
        starts = [i for i, symbol in enumerate(symbols) if symbol == WHITESPACE_MARK or i == 0]
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        position = 0
        for low, high in zip(starts, [*starts[1:], len(symbols)], strict=True):
            offset = low
            for token, length in self._trie.segment(symbols[low:high], encode_mode, self.options.tie_break):
                if token == UNMATCHED:  # a character in no piece: its byte-fallback pieces
                    for value in text[offset - 1].encode("utf-8") if offset else b"":
                        ids.append(self._processor.piece_to_id(f"<0x{value:02X}>"))
                        spans.append((position, position + 1))
                        position += 1
                else:
                    end = position + sum(widths[offset : offset + length])
                    ids.append(token)
                    spans.append((position, end))
                    position = end
                offset += length
        return Encoding(ids=ids, spans=spans)

    def _build_trie(self) -> VocabularyTrie:
        processor = self._processor
        ordinary = (
            token
            for token in range(processor.get_piece_size())
            if not (processor.is_byte(token) or processor.is_control(token) or processor.is_unknown(token)
                    or processor.is_unused(token))
        )  # fmt: skip
        return VocabularyTrie((tuple(processor.id_to_piece(token)), token) for token in ordinary)

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        *,
        progress: object = None,
        **options: Any,
    ) -> SentencePieceTokenizer:
        """``options``: see ``options_model`` (a pre-tokenizer, for one, is an error: sentencepiece
        splits text its own way); the encode-time ones only change encoding.  ``progress`` is
        accepted for a uniform interface; sentencepiece reports none."""
        settings = cls.options_model.parse(cls.family, options)
        character_coverage = settings.character_coverage
        vocab_size = checked_vocab_size(vocab_size, cls.options_model)
        sentences = _sentences(texts)
        config = {
            "model_type": cls.model_type,
            "vocab_size": vocab_size,
            "character_coverage": character_coverage,
            "byte_fallback": True,
            "normalization": "identity",
            "special_tokens": list(DEFAULT_SPECIAL_TOKENS),
            "sentencepiece_version": sentencepiece.__version__,
        }
        model = io.BytesIO()
        try:
            cls._run_trainer(sentences, model, vocab_size, character_coverage)
        except RuntimeError as exc:
            if floor := _floor_in(str(exc), character_coverage):
                floor.check(cls.family, vocab_size)
            raise TokenizerError(f"{cls.family}: sentencepiece training failed: {exc}") from None
        return cls(model.getvalue(), config, options=settings)

    @classmethod
    def vocab_floor(cls, texts: Iterable[str] | None = None, **options: Any) -> VocabFloor:
        """The specials, the 256 byte-fallback pieces and the characters covering ``character_coverage``
        of ``texts``, as sentencepiece counts them (asked of sentencepiece itself: a trainer run with no
        room for any character stops, before training, at the check that reports this number); on any
        text, at least one character."""
        character_coverage = cls.options_model.parse(cls.family, options).character_coverage
        if texts is None:
            return _floor(len(DEFAULT_SPECIAL_TOKENS) + _BYTE_PIECES + 1, character_coverage, least=True)
        no_room = len(DEFAULT_SPECIAL_TOKENS) + _BYTE_PIECES
        try:
            cls._run_trainer(_sentences(texts), io.BytesIO(), no_room, character_coverage)
        except RuntimeError as exc:
            if floor := _floor_in(str(exc), character_coverage):
                return floor
            raise TokenizerError(f"{cls.family}: sentencepiece training failed: {exc}") from None
        return _floor(no_room, character_coverage)  # a text with no character at all

    @classmethod
    def _run_trainer(cls, sentences: list[str], model: io.BytesIO, vocab_size: int, character_coverage: float) -> None:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences),
            model_writer=model,
            model_type=cls.model_type,
            vocab_size=vocab_size,
            character_coverage=character_coverage,
            byte_fallback=True,
            pad_id=0,
            unk_id=1,
            bos_id=2,
            eos_id=3,
            pad_piece=DEFAULT_SPECIAL_TOKENS[0],
            unk_piece=DEFAULT_SPECIAL_TOKENS[1],
            bos_piece=DEFAULT_SPECIAL_TOKENS[2],
            eos_piece=DEFAULT_SPECIAL_TOKENS[3],
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            input_sentence_size=0,
            # like the other families, stop below vocab_size when the text has no more to learn
            hard_vocab_limit=False,
            num_threads=1,
            # never skip a long sentence silently (sentencepiece's default skips > 4192 bytes)
            max_sentence_length=max(4192, *(len(s.encode("utf-8")) + 1 for s in sentences)),
            minloglevel=2,
        )

    # -- persistence ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        processor = self._processor
        return {
            "config": {**self.config, **self.encode_options()},
            "vocab": [[processor.id_to_piece(i), processor.get_score(i)] for i in range(self.vocab_size)],
            "model": base64.b64encode(self._model_proto).decode("ascii"),
        }

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> SentencePieceTokenizer:
        config, vocab, encoded = body.get("config"), body.get("vocab"), body.get("model")
        if not isinstance(config, dict) or not isinstance(vocab, list) or not isinstance(encoded, str):
            raise TokenizerError(f'{cls.family}: fields "config" (object), "vocab" (list), "model" (string) required')
        try:
            model_proto = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            raise TokenizerError(f'{cls.family}: field "model" is not base64') from None
        encode_time = cls.options_model.encode_option_names()
        record = {name: value for name, value in config.items() if name not in encode_time}
        tokenizer = cls(model_proto, record, source=f'{cls.family} field "model"')
        proto = sentencepiece_model_pb2.ModelProto.FromString(model_proto)
        if proto.trainer_spec.model_type != _MODEL_TYPE_IDS[cls.model_type]:
            raise TokenizerError(f'{cls.family}: field "model" holds a sentencepiece model of another type')
        # the options are the config without the training record (a file saved before the
        # encode-time options existed has none: their defaults)
        tokenizer.options = cls.options_model.read_saved(
            {name: value for name, value in config.items() if name not in TRAINING_RECORD}
        )
        if tokenizer.to_dict()["vocab"] != vocab:
            raise TokenizerError(f'{cls.family}: field "vocab" does not match the pieces of field "model"')
        return tokenizer


def _sentences(texts: Iterable[str]) -> list[str]:
    """The training sentences sentencepiece is given: every text with a non-blank character."""
    return [text for text in checked_texts(texts) if text.strip()]


def _floor(required: int, character_coverage: float, least: bool = False) -> VocabFloor:
    base = f"{len(DEFAULT_SPECIAL_TOKENS)} specials + {_BYTE_PIECES} byte-fallback pieces"
    if least:
        return VocabFloor(required, f"{base} + at least 1 character")
    characters = required - len(DEFAULT_SPECIAL_TOKENS) - _BYTE_PIECES
    return VocabFloor(required, f"{base} + {characters} characters covering {character_coverage:.2%} of this text",
                      "; or use a lower character_coverage")  # fmt: skip


def _floor_in(message: str, character_coverage: float) -> VocabFloor | None:
    """The floor a sentencepiece "vocabulary size is smaller than required_chars" failure reports."""
    match = _TOO_SMALL.search(message)
    return _floor(int(match.group(2)), character_coverage) if match else None


class SentencePieceBPETokenizer(SentencePieceTokenizer):
    family = "spm-bpe"
    model_type = "bpe"
    options_model = SentencePieceBPEOptions
    capabilities = frozenset()
    derivable = False
    boundary_baseline = None
    row_type = 'reference'
    native_method = 'merges'
    trains_on_references = False
    options: SentencePieceBPEOptions

    def _sampling_arguments(self) -> dict[str, Any]:
        return {"alpha": self.options.dropout}  # sentencepiece takes the BPE-dropout probability as its alpha


class SentencePieceUnigramTokenizer(SentencePieceTokenizer):
    family = "spm-unigram"
    model_type = "unigram"
    options_model = SentencePieceUnigramOptions
    capabilities = frozenset()
    derivable = False
    boundary_baseline = None
    row_type = 'reference'
    native_method = 'likelihood'
    trains_on_references = False
    options: SentencePieceUnigramOptions

    def _sampling_arguments(self) -> dict[str, Any]:
        nbest = self.options.nbest
        return {"alpha": self.options.alpha, "nbest_size": -1 if nbest is None else nbest}


class SentencePieceModelTokenizer(SentencePieceBacked, PretrainedTokenizer):
    """A published sentencepiece model, used as is: sentencepiece's own encoding (no BOS/EOS, no
    sampling) and decoding."""

    family = "sentencepiece"

    def __init__(self, model_proto: bytes, name: str) -> None:
        PretrainedTokenizer.__init__(self, name)
        self._processor = load_processor(model_proto, name)
