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

Encoding and decoding go through sentencepiece's processor (``bpe.models.spm_encoding``, which also
says how a literal ``▁`` in the text is treated); the trainer's arguments and the training record are
``bpe.models.spm_training``'s.
"""

from __future__ import annotations

import base64
import binascii
import random
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, ClassVar

import sentencepiece
from pydantic import AfterValidator, Field, Strict, model_validator
from sentencepiece import sentencepiece_model_pb2
from typing_extensions import Self

from bpe.base import Encoding, FamilyFacts, TokenizerError, TrainableTokenizer, VocabFloor, WordEncodings, utf8
from bpe.models.inference import UNMATCHED, VocabularyTrie
from bpe.models.spm_encoding import WHITESPACE_MARK, SentencePieceBacked, load_processor
from bpe.models.spm_training import (
    TRAINING_RECORD,
    sentencepiece_floor,
    train_model,
    training_config,
    training_sentences,
)
from bpe.options import (
    ENCODE_TIME,
    DeclaredOptions,
    Dropout,
    SamplingOptions,
    SamplingSeed,
    TieBreak,
    checked_vocab_size,
    encode_mode_option,
)
from bpe.validation import NonNegativeNumber, expecting, in_interval, table_rule

_MODEL_TYPE_IDS = {"unigram": 1, "bpe": 2}  # sentencepiece_model.proto TrainerSpec.ModelType


#: sentencepiece's own default: characters covering 99.95% of the text get a piece; the rarest
#: 0.05% are spelled with byte-fallback pieces.
DEFAULT_CHARACTER_COVERAGE = 0.9995


CharacterCoverage = Annotated[
    in_interval(0, 1, closed_high=True),
    Field(description="share of the text whose characters get a piece; the rest use byte-fallback pieces"),
]


def _check_nbest(nbest: int) -> int:
    if nbest != -1 and nbest < 2:
        raise ValueError("nbest must be -1 or >= 2")  # rephrased by `expecting`
    return nbest


NBest = Annotated[
    Annotated[int, Strict(), AfterValidator(_check_nbest), expecting("-1 (every segmentation) or an integer >= 2")]
    | None,
    Field(description="spm-unigram sampling: sample among the N best segmentations (-1: all; unset: -1)"),
    ENCODE_TIME,
]

Alpha = Annotated[
    NonNegativeNumber | None,
    Field(description="spm-unigram sampling: sample segmentations with probability ∝ P^alpha (unset: off)"),
    ENCODE_TIME,
]


class SentencePieceBPEOptions(SamplingOptions):
    native_mode = "merges"

    character_coverage: CharacterCoverage = DEFAULT_CHARACTER_COVERAGE
    encode_mode: encode_mode_option("merges") = "merges"  # type: ignore[valid-type]
    tie_break: TieBreak = "longest-first"
    dropout: Dropout = 0.0
    seed: SamplingSeed = 0


class SentencePieceUnigramOptions(SamplingOptions):
    native_mode = "likelihood"

    character_coverage: CharacterCoverage = DEFAULT_CHARACTER_COVERAGE
    encode_mode: encode_mode_option("likelihood") = "likelihood"  # type: ignore[valid-type]
    tie_break: TieBreak = "longest-first"
    alpha: Alpha = None
    nbest: NBest = None
    seed: SamplingSeed = 0

    @model_validator(mode="after")
    def _nbest_with_alpha(self) -> Self:
        if self.nbest is not None and self.alpha is None:
            raise table_rule("nbest only applies to sampling: give alpha too", value="nbest")
        return self


class SentencePieceTokenizer(DeclaredOptions, SentencePieceBacked, TrainableTokenizer):
    """A trained sentencepiece model; subclasses fix the model type and its options (above)."""

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
        sentences = training_sentences(texts)
        config = training_config(cls.model_type, vocab_size, character_coverage)
        model = train_model(cls.family, cls.model_type, sentences, vocab_size, character_coverage)
        return cls(model, config, options=settings)

    @classmethod
    def vocab_floor(cls, texts: Iterable[str] | None = None, **options: Any) -> VocabFloor:
        """The specials, the 256 byte-fallback pieces and the characters covering ``character_coverage``
        of ``texts``, as sentencepiece counts them (``spm_training.sentencepiece_floor``)."""
        character_coverage = cls.options_model.parse(cls.family, options).character_coverage
        return sentencepiece_floor(cls.family, cls.model_type, texts, character_coverage)

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
            raise TokenizerError(f'{cls.family}: fields "config" (object), "vocab" (list), "model" (string) required',
                                 code="bad_tokenizer_file")  # fmt: skip
        try:
            model_proto = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            raise TokenizerError(f'{cls.family}: field "model" is not base64', code="not_base64",
                                 field="model") from None  # fmt: skip
        encode_time = cls.options_model.encode_option_names()
        record = {name: value for name, value in config.items() if name not in encode_time}
        tokenizer = cls(model_proto, record, source=f'{cls.family} field "model"')
        proto = sentencepiece_model_pb2.ModelProto.FromString(model_proto)
        if proto.trainer_spec.model_type != _MODEL_TYPE_IDS[cls.model_type]:
            raise TokenizerError(f'{cls.family}: field "model" holds a sentencepiece model of another type',
                                 code="bad_tokenizer_file", field="model")  # fmt: skip
        # the options are the config without the training record (a file saved before the
        # encode-time options existed has none: their defaults)
        tokenizer.options = cls.options_model.read_saved(
            {name: value for name, value in config.items() if name not in TRAINING_RECORD}
        )
        if tokenizer.to_dict()["vocab"] != vocab:
            raise TokenizerError(f'{cls.family}: field "vocab" does not match the pieces of field "model"',
                                 code="bad_tokenizer_file", field="vocab")  # fmt: skip
        return tokenizer


class SentencePieceBPETokenizer(SentencePieceTokenizer):
    family = "spm-bpe"
    model_type = "bpe"
    options_model = SentencePieceBPEOptions
    facts = FamilyFacts(row_type="reference")
    options: SentencePieceBPEOptions

    def _sampling_arguments(self) -> dict[str, Any]:
        return {"alpha": self.options.dropout}  # sentencepiece takes the BPE-dropout probability as its alpha


class SentencePieceUnigramTokenizer(SentencePieceTokenizer):
    family = "spm-unigram"
    model_type = "unigram"
    options_model = SentencePieceUnigramOptions
    facts = FamilyFacts(row_type="reference", native_method="likelihood")
    options: SentencePieceUnigramOptions

    def _sampling_arguments(self) -> dict[str, Any]:
        nbest = self.options.nbest
        return {"alpha": self.options.alpha, "nbest_size": -1 if nbest is None else nbest}
