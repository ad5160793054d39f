"""Reference rows ``spm-bpe`` and ``spm-unigram``: sentencepiece behind the Tokenizer interface.

Settings follow seed 004 (pad 0 / unk 1 / bos 2 / eos 3, byte fallback on) with
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

Encode-time options (saved in ``config``; training is unchanged by them):

``encode_mode``
    ``merges`` for spm-bpe and ``likelihood`` (the Viterbi segmentation) for
    spm-unigram are sentencepiece's own encoding (the default).  The
    vocabulary-only inference methods of Uzan et al. 2024 (``bpe.inference``:
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

``SentencePieceBacked`` is shared with the production row ``mistral-v1``
(bpe.production), which is a sentencepiece model too.
"""

from __future__ import annotations

import base64
import binascii
import io
import random
import re
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, NoReturn

import sentencepiece
from sentencepiece import sentencepiece_model_pb2

from bpe.base import DEFAULT_SPECIAL_TOKENS, Encoding, Tokenizer, TokenizerError
from bpe.inference import INFERENCE_METHODS, UNMATCHED, VocabularyTrie
from bpe.options import check_vocab_minimum, reject_unknown_options, require_choice, require_int
from bpe.trainer import check_encodable, checked_texts

#: sentencepiece's own default: characters covering 99.95% of the text get a
#: piece; the rarest 0.05% are spelled with byte-fallback pieces.
DEFAULT_CHARACTER_COVERAGE = 0.9995
#: sentencepiece's whitespace meta symbol; text containing it literally decodes it as a space.
WHITESPACE_MARK = "▁"
_BYTE_PIECES = 256
_MODEL_TYPE_IDS = {"unigram": 1, "bpe": 2}  # sentencepiece_model.proto TrainerSpec.ModelType

#: encode-time options, kept in the saved ``config`` beside the training settings
ENCODE_OPTIONS = ("encode_mode", "alpha", "nbest", "dropout", "seed")

_TOO_SMALL = re.compile(r"Vocabulary size is smaller than required_chars\. (\d+) vs (\d+)")


def load_processor(model_proto: bytes, source: str) -> sentencepiece.SentencePieceProcessor:
    """A processor for a serialized model; ``source`` names it in the error."""
    try:
        return sentencepiece.SentencePieceProcessor(model_proto=model_proto)
    except RuntimeError:
        raise TokenizerError(f"{source}: not a valid sentencepiece model") from None


def check_token_id(token_id: int, vocab_size: int, family: str) -> None:
    """A TokenizerError unless ``token_id`` is an int in ``0..vocab_size-1``."""
    if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < vocab_size:
        raise TokenizerError(f"token id {token_id!r} is out of range for {family} (0..{vocab_size - 1})")


class SentencePieceBacked(Tokenizer):
    """Encoding and decoding through a ``SentencePieceProcessor`` held in ``self._processor``."""

    _processor: sentencepiece.SentencePieceProcessor

    def encode_with_spans(self, text: str) -> Encoding:
        """Byte spans into ``text`` from sentencepiece's begin/end offsets, with two fixes:
        the dummy-prefix ``▁`` covers nothing (empty span), and byte-fallback pieces,
        which sentencepiece reports as empty spans plus one span for the whole
        character on the last byte, each get their own single byte."""
        processor = self._processor
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        cursor = 0  # end of the text covered so far
        for piece in self._encode_proto(text).pieces:
            span = (cursor, cursor + 1) if processor.is_byte(piece.id) else (piece.begin, piece.end)
            ids.append(piece.id)
            spans.append(span)
            cursor = span[1]
        return Encoding(ids=ids, spans=spans)

    def _encode_proto(self, text: str) -> Any:
        """sentencepiece's own encoding of ``text`` (a SentencePieceText proto)."""
        return self._processor.encode(text, out_type="proto")

    def encode_word(self, word: str) -> Encoding:
        """The dummy prefix already gives a word its mid-sentence form (``▁word``)."""
        return self.encode_with_spans(word)

    def _check_id(self, token_id: int) -> None:
        check_token_id(token_id, self.vocab_size, self.family)

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


class SentencePieceTokenizer(SentencePieceBacked):
    """A trained sentencepiece model; subclasses fix the model type and its own encode mode."""

    model_type: ClassVar[str]
    #: sentencepiece's own encoding, the default ``encode_mode``
    native_mode: ClassVar[str]
    #: the sampling options this model type takes, besides ``seed``
    sampling_options: ClassVar[tuple[str, ...]]

    def __init__(
        self,
        model_proto: bytes,
        config: dict[str, Any],
        source: str = "<memory>",
        *,
        encode_mode: str | None = None,
        alpha: float | None = None,
        nbest: int | None = None,
        dropout: float | None = None,
        seed: int | None = None,
    ) -> None:
        self._model_proto = model_proto
        self._processor = load_processor(model_proto, source)
        self.config = config
        self._set_encode_options(self.checked_encode_options(encode_mode, alpha, nbest, dropout, seed))
        self._trie: VocabularyTrie | None = None

    def _set_encode_options(self, options: dict[str, Any]) -> None:
        self.encode_mode: str = options["encode_mode"]
        self.alpha: float | None = options.get("alpha")
        self.nbest: int | None = options.get("nbest")
        self.dropout: float = options.get("dropout", 0.0)
        self.seed: int = options["seed"]

    @classmethod
    def encode_modes(cls) -> tuple[str, ...]:
        return (cls.native_mode, *INFERENCE_METHODS)

    @classmethod
    def checked_encode_options(
        cls, encode_mode: Any = None, alpha: Any = None, nbest: Any = None, dropout: Any = None, seed: Any = None
    ) -> dict[str, Any]:
        """The encode-time options this model type takes, defaults filled in; a TokenizerError for a bad one."""
        given = {"alpha": alpha, "nbest": nbest, "dropout": dropout}
        reject_unknown_options(cls.family, {name: given[name] for name in given if name not in cls.sampling_options})
        if encode_mode is None:
            encode_mode = cls.native_mode
        encode_mode = require_choice("encode_mode", encode_mode, cls.encode_modes())
        if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha < 0):
            raise TokenizerError(f"{cls.family}: alpha must be a number >= 0, got {alpha!r}")
        if nbest is not None:
            if alpha is None:
                raise TokenizerError(f"{cls.family}: nbest only applies to sampling: give alpha too")
            if isinstance(nbest, bool) or not isinstance(nbest, int) or not (nbest == -1 or nbest >= 2):
                raise TokenizerError(f"{cls.family}: nbest must be -1 (all segmentations) or >= 2, got {nbest!r}")
        if dropout is not None and (
            isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1
        ):
            raise TokenizerError(f"{cls.family}: dropout must be a probability between 0 and 1, got {dropout!r}")
        if (alpha is not None or dropout) and encode_mode != cls.native_mode:
            raise TokenizerError(f"{cls.family}: sampling applies to encode_mode {cls.native_mode!r} only")
        options = {
            "encode_mode": encode_mode,
            "alpha": None if alpha is None else float(alpha),
            "nbest": nbest,
            "dropout": float(dropout or 0.0),
            "seed": require_int("seed", 0 if seed is None else seed, 0),
        }
        return {name: options[name] for name in ("encode_mode", *cls.sampling_options, "seed")}

    @property
    def samples(self) -> bool:
        """True when encoding samples (alpha given, or dropout > 0)."""
        return self.alpha is not None or self.dropout > 0

    def encode_options(self) -> dict[str, Any]:
        """The encode-time options this model type takes, as ``with_encode_options`` and ``train`` take them."""
        return {name: getattr(self, name) for name in ("encode_mode", *self.sampling_options, "seed")}

    def with_encode_options(self, **options: Any) -> SentencePieceTokenizer:
        """The same model with other encode-time options (an option not given keeps its value)."""
        return type(self)(self._model_proto, self.config, **{**self.encode_options(), **options})

    # -- encoding ---------------------------------------------------------
    def _encode_proto(self, text: str) -> Any:
        if not self.samples:
            return super()._encode_proto(text)
        sentencepiece.set_random_generator_seed(random.Random(f"{self.seed}\x00{text}").getrandbits(32))
        if self.alpha is None:  # spm-bpe: sentencepiece takes the dropout probability as its alpha
            return self._processor.encode(text, out_type="proto", enable_sampling=True, alpha=self.dropout)
        nbest = -1 if self.nbest is None else self.nbest
        return self._processor.encode(text, out_type="proto", enable_sampling=True, alpha=self.alpha, nbest_size=nbest)

    def encode_with_spans(self, text: str) -> Encoding:
        if self.encode_mode == self.native_mode:
            return super().encode_with_spans(text)
        if not isinstance(text, str):
            raise TokenizerError(f"can only encode a string, got {type(text).__name__}")
        check_encodable(text, "the text to encode")
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
            for token, length in self._trie.segment(symbols[low:high], self.encode_mode):
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
        character_coverage: float | None = None,
        progress: object = None,
        **options: Any,
    ) -> SentencePieceTokenizer:
        """Options other than ``character_coverage`` (e.g. a pre-tokenizer) must be None:
        sentencepiece splits text its own way.  None means the default.  ``progress`` is
        accepted for a uniform interface; sentencepiece reports none."""
        encode_options = cls.checked_encode_options(*(options.pop(name, None) for name in ENCODE_OPTIONS))
        reject_unknown_options(cls.family, options)
        require_int("vocab_size", vocab_size, 1)
        if character_coverage is None:
            character_coverage = DEFAULT_CHARACTER_COVERAGE
        if not isinstance(character_coverage, (int, float)) or not 0 < character_coverage <= 1:
            raise TokenizerError(f"{cls.family}: character_coverage must be in (0, 1], got {character_coverage!r}")
        sentences = [text for text in checked_texts(texts) if text.strip()]
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
        except RuntimeError as exc:
            cls._raise_training_error(str(exc), vocab_size, character_coverage)
        return cls(model.getvalue(), config, **encode_options)

    @classmethod
    def _raise_training_error(cls, message: str, vocab_size: int, character_coverage: float) -> NoReturn:
        """Translate sentencepiece's internal check failures into advice."""
        if match := _TOO_SMALL.search(message):
            required = int(match.group(2))
            characters = required - len(DEFAULT_SPECIAL_TOKENS) - _BYTE_PIECES
            parts = (
                f"{len(DEFAULT_SPECIAL_TOKENS)} specials + {_BYTE_PIECES} byte-fallback pieces + {characters} "
                f"characters covering {character_coverage:.2%} of this text"
            )
            check_vocab_minimum(cls.family, vocab_size, required, parts, "; or use a lower character_coverage")
        raise TokenizerError(f"{cls.family}: sentencepiece training failed: {message}")

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
        training = {name: value for name, value in config.items() if name not in ENCODE_OPTIONS}
        encode_options = {name: value for name, value in config.items() if name in ENCODE_OPTIONS}
        tokenizer = cls(model_proto, training, source=f'{cls.family} field "model"')
        proto = sentencepiece_model_pb2.ModelProto.FromString(model_proto)
        if proto.trainer_spec.model_type != _MODEL_TYPE_IDS[cls.model_type]:
            raise TokenizerError(f'{cls.family}: field "model" holds a sentencepiece model of another type')
        tokenizer._set_encode_options(cls.checked_encode_options(**encode_options))
        if tokenizer.to_dict()["vocab"] != vocab:
            raise TokenizerError(f'{cls.family}: field "vocab" does not match the pieces of field "model"')
        return tokenizer


class SentencePieceBPETokenizer(SentencePieceTokenizer):
    family = "spm-bpe"
    model_type = "bpe"
    native_mode = "merges"
    sampling_options = ("dropout",)


class SentencePieceUnigramTokenizer(SentencePieceTokenizer):
    family = "spm-unigram"
    model_type = "unigram"
    native_mode = "likelihood"
    sampling_options = ("alpha", "nbest")
