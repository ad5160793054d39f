"""The interface every tokenizer family shares: train / encode / decode / save / load.

A tokenizer is a pipeline of pieces, named as in HF ``tokenizers``. The normalizer, the
pre-tokenizer and the inference method can be chosen (options ``normalizer``, ``pretokenizer``,
``encode_mode`` of the from-scratch families, composed in ``bpe.models.trained``); the rest comes with
the family:

* a **normalizer** (``bpe.pipeline.normalizers``) rewrites the text and keeps an
  alignment back to it (default: the text as given);
* a **pre-tokenizer** (``bpe.pipeline.pretokenizers``) cuts text into pre-tokens that
  merges never cross;
* a **model** (the family: word, char, char-bpe, byte-bpe, ...) maps each
  pre-token to ids, with its inference method (``bpe.models.inference``);
* a **decoder** maps ids back to text through an id -> bytes table and undoes
  the normalization.

Every encoding carries UTF-8 *byte* spans into the input text (the original
text, before any normalization), so metrics can
compute boundaries on the original text whatever markers (``</w>``, ``Ġ``,
``▁``) a family prints in its pieces.  Byte spans (not character spans) are
used because byte-level tokens may end inside a multi-byte character; such a
boundary then honestly matches no character-level gold boundary.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from itertools import chain
from pathlib import Path
from typing import Any, ClassVar, Literal

from bpe.atomic import atomic_write_text
from bpe.errors import CodedError

FORMAT_NAME = "tokbench-tokenizer"
FORMAT_VERSION = 1

#: Special tokens every trainable family reserves, in this order, at ids 0..3
#: (sentencepiece's ``--pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3`` layout).
DEFAULT_SPECIAL_TOKENS: tuple[str, ...] = ("<pad>", "<unk>", "<s>", "</s>")
UNK = "<unk>"


class TokenizerError(CodedError, ValueError):
    """A user-facing error: bad options, bad training input, bad file.

    The message names the offending file/field/value and what was expected; the
    CLI prints it without a traceback and exits with a non-zero status.  ``code`` names the kind
    of problem (docs/errors.md), ``value`` the offending value, ``field`` where it was given.
    """

    default_code = "tokenizer_error"


def is_panic(error: BaseException) -> bool:
    """True for a panic of a compiled (Rust, pyo3) library: ``pyo3_runtime.PanicException`` derives
    from BaseException, so ``except Exception`` lets it through."""
    return type(error).__name__ == "PanicException"


@contextmanager
def compiled_library(name: str, library: str) -> Iterator[None]:
    """Turn a panic of ``library`` while working for tokenizer ``name`` into a TokenizerError."""
    try:
        yield
    except BaseException as error:
        if not is_panic(error):
            raise
        raise TokenizerError(f"{name}: {library} failed on this input ({error}); the tokenizer file or its "
                             "settings do not fit the text", code="library_failed",
                             value=library) from None  # fmt: skip


@dataclass(frozen=True)
class VocabFloor:
    """The smallest ``vocab_size`` a family trains at: ``minimum`` ids, made of ``parts`` (in words);
    ``hint`` says how to lower it."""

    minimum: int
    parts: str
    hint: str = ""

    def check(self, family: str, vocab_size: int) -> None:
        """Raise when ``vocab_size`` cannot hold the specials and base symbols."""
        if vocab_size < self.minimum:
            raise TokenizerError(
                f"vocab_size {vocab_size} is below the minimum {self.minimum} for {family} ({self.parts}){self.hint}",
                code="vocab_below_floor",
                value=vocab_size,
            )


@dataclass(frozen=True)
class Encoding:
    """The result of encoding one text.

    ``spans[i]`` is the half-open UTF-8 byte range ``[start, end)`` of the input
    text that token ``ids[i]`` covers.  A token that covers no input (a
    separate end-of-word marker ``</w>``) has ``start == end``.
    """

    ids: list[int]
    spans: list[tuple[int, int]]

    def __len__(self) -> int:
        return len(self.ids)


def word_after_space(encoding: Encoding) -> Encoding:
    """``encoding`` of ``" " + word`` as ``encode_word(word)``: the tokens covering only the space dropped,
    spans moved one byte back (a token covering the space and the word's start begins at 0)."""
    ids: list[int] = []
    spans: list[tuple[int, int]] = []
    for token, (start, end) in zip(encoding.ids, encoding.spans, strict=True):
        if start > 0:  # a token of the word: one byte back
            ids.append(token)
            spans.append((start - 1, end - 1 if end > 0 else 0))
        elif not start < end <= 1:  # not the prefix space alone
            ids.append(token)
            spans.append((0, end - 1 if end > 0 else 0))
    return Encoding(ids=ids, spans=spans)


@dataclass(frozen=True, eq=False)
class WordEncodings:
    """The encodings of several words, each encoded alone (``Tokenizer.encode_words``), as flat numpy arrays:
    every token's id and its byte span in its word, word after word, and each word's number of tokens.
    (numpy is imported when one is made: ``import bpe`` does not load it.)"""

    ids: Any  # np.ndarray of int64, one per token
    spans: Any  # np.ndarray of int64, shape (tokens, 2): [start, end) in the word's UTF-8 bytes
    counts: Any  # np.ndarray of int64, one per word: its tokens

    @classmethod
    def of(cls, encodings: Sequence[Encoding]) -> WordEncodings:
        import numpy as np

        counts = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        total = int(counts.sum())
        ids = np.fromiter(chain.from_iterable(e.ids for e in encodings), dtype=np.int64, count=total)
        spans = np.fromiter(chain.from_iterable(chain.from_iterable(e.spans for e in encodings)), dtype=np.int64,
                            count=2 * total).reshape(total, 2)  # fmt: skip
        return cls(ids, spans, counts)

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def firsts(self) -> Any:
        """Each word's first token (an index into ``ids``)."""
        import numpy as np

        return np.cumsum(self.counts) - self.counts

    def encoding(self, word: int) -> Encoding:
        """The ``Encoding`` of word number ``word``."""
        first = int(self.firsts[word])
        last = first + int(self.counts[word])
        return Encoding(self.ids[first:last].tolist(), [(start, end) for start, end in self.spans[first:last].tolist()])


def words_after_space(ids: Sequence[int], lengths: Sequence[int], counts: Sequence[int]) -> WordEncodings:
    """``word_after_space`` of the encodings of several ``" " + word`` texts at once, given every token's id and
    byte length, text after text, and each text's number of tokens (its tokens spell it from its first byte)."""
    import numpy as np

    ids, lengths, counts = (np.asarray(values, dtype=np.int64) for values in (ids, lengths, counts))
    ends = np.cumsum(lengths)
    text_of = np.repeat(np.arange(len(counts)), counts)
    text_start = (ends - lengths)[(np.cumsum(counts) - counts)[text_of]]  # each token's text's first byte
    starts = ends - lengths - text_start
    ends = starts + lengths
    kept = ~((starts < ends) & (ends <= 1))  # not the prefix space alone
    spans = np.stack([np.maximum(starts - 1, 0), np.maximum(ends - 1, 0)], axis=1)[kept]
    return WordEncodings(ids[kept], spans, np.bincount(text_of[kept], minlength=len(counts)).astype(np.int64))


class Capability(Enum):
    """What a metric may assume about a tokenizer's tokens."""

    WHOLE_PRETOKENS = "every token is one whole pre-token; an unknown pre-token becomes <unk>"
    CHARACTER_TOKENS = "one token per character: the no-merge baseline of the BPE families"


@dataclass(frozen=True)
class FamilyFacts:
    """What a trainable family declares about itself, read through ``bpe.family_class(kind).facts``.
    The defaults are the common case (a BPE-like family ranked with the others), so a family writes only
    where it differs.

    ``row_type``: ``"family"`` or ``"reference"`` (how results and reports class its rows);
    ``capabilities``: the ``Capability`` set metrics may assume; ``derivable``: a smaller size is the
    first ids of a larger trained tokenizer (``TrainedTokenizer.derived``, ``bpe.training.sweep``);
    ``boundary_baseline``: why its inner-word boundaries are fixed by construction (never ranked on
    morpheme-boundary metrics), or None; ``native_method``: its own encoding when ``encode_mode`` is
    unset; ``trains_on_references``: trains on gold morphemes beside the text; ``floor``: the
    smallest vocabulary on any text besides the specials, as (symbols, what they are), which the default
    ``vocab_floor`` reports (a family whose floor depends on the text overrides ``vocab_floor``);
    ``training_input``: ``"text"`` (``train(texts, ...)``) or ``"parallel"`` (per-language training text and a
    line-aligned dev set per language, through the family's ``train_parallel``; its ``train`` refuses plain text);
    ``variant_of``: the family this one modifies (SuperBPE and parity-aware BPE: ``byte-bpe``), which reports compare
    it with at the same vocabulary size, or None."""

    row_type: str = "family"
    capabilities: frozenset[Capability] = frozenset()
    derivable: bool = False
    boundary_baseline: str | None = None
    native_method: str = "merges"
    trains_on_references: bool = False
    floor: tuple[int, str] = (1, "character")
    training_input: Literal["text", "parallel"] = "text"
    variant_of: str | None = None


class Tokenizer(ABC):
    """What every tokenizer does: encode text with byte spans, decode ids, name its pieces.  A
    published tokenizer (``bpe.pretrained.base``) is only this; a family trained here is a
    ``TrainableTokenizer``, which adds training, the family facts and saving."""

    family: ClassVar[str]
    #: True for the families that train and save (``TrainableTokenizer``).
    trainable: ClassVar[bool] = False

    @property
    def name(self) -> str:
        """How messages refer to this tokenizer: its family (a pretrained tokenizer: its name or file)."""
        return self.family

    # -- encoding ---------------------------------------------------------
    @abstractmethod
    def encode_with_spans(self, text: str) -> Encoding:
        """Encode ``text`` and report the byte span of every token."""

    def encode(self, text: str) -> list[int]:
        return self.encode_with_spans(text).ids

    def encode_word(self, word: str) -> Encoding:
        """Encode one word as it occurs inside running text: after a space.

        Families that attach a space to the following word (`` world``, ``Ġworld``)
        would otherwise see an isolated word in a form they rarely saw in
        training.  The word is encoded as ``" " + word``; tokens covering only
        that space are dropped and spans are shifted back onto ``word`` (a token
        covering the space and the word's start begins at 0).  Families with their
        own word-start marker (sentencepiece's dummy prefix) override this.
        """
        return word_after_space(self.encode_with_spans(" " + word))

    def encode_texts(self, texts: Sequence[str]) -> list[Encoding]:
        """``encode_with_spans`` of every text of ``texts``, in order; families with a batch encoder override it."""
        return [self.encode_with_spans(text) for text in texts]

    def encode_words(self, words: Sequence[str]) -> list[Encoding]:
        """``encode_word`` of every word of ``words``, in order; families with a batch encoder override it."""
        return [self.encode_word(word) for word in words]

    def encode_word_arrays(self, words: Sequence[str]) -> WordEncodings:
        """``encode_words`` as flat arrays (``WordEncodings``): the same ids and spans without an ``Encoding``
        per word, for callers that scan every token; families that can skip those objects override it."""
        return WordEncodings.of(self.encode_words(words))

    # -- encode-time options (inference method, sampling) -----------------
    @property
    def samples(self) -> bool:
        """True when encoding is stochastic (BPE-dropout, unigram sampling); never by default."""
        return False

    def encode_options(self) -> dict[str, Any]:
        """The encode-time options this tokenizer takes and their values (``bpe.options``; none for a
        pretrained tokenizer)."""
        return {}

    def with_encode_options(self, **options: Any) -> Tokenizer:
        """The same vocabulary with other encode-time options (an option not given keeps its value);
        families that have some override this."""
        given = sorted(name for name, value in options.items() if value is not None)
        if given:
            raise TokenizerError(f"{self.name} does not take encode option(s): {', '.join(given)} (it takes: none)",
                                 code="not_encode_option", value=given[0])  # fmt: skip
        return self

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    # -- decoding ---------------------------------------------------------
    @abstractmethod
    def id_to_bytes(self, token_id: int) -> bytes:
        """The text bytes a token stands for (markers removed; b"" for a bare marker)."""

    def decode(self, ids: Sequence[int]) -> str:
        """Join the byte table entries; a cut multi-byte sequence never raises
        (invalid UTF-8 decodes to U+FFFD)."""
        return b"".join(self.id_to_bytes(i) for i in ids).decode("utf-8", errors="replace")

    def all_token_bytes(self) -> tuple[bytes, ...]:
        """``id_to_bytes`` of every id, in id order: read once per tokenizer object (a tokenizer's vocabulary
        never changes), for the callers that scan the whole vocabulary."""
        table = self.__dict__.get("_all_token_bytes")
        if table is None:
            table = self.__dict__["_all_token_bytes"] = tuple(self.id_to_bytes(i) for i in range(self.vocab_size))
        return table

    @abstractmethod
    def id_to_piece(self, token_id: int) -> str:
        """A printable form of a token, with the family's own markers (``</w>``, ``Ġ``, ``▁``)."""

    def pieces(self, ids: Sequence[int]) -> list[str]:
        return [self.id_to_piece(i) for i in ids]

    # -- vocabulary -------------------------------------------------------
    @property
    @abstractmethod
    def vocab_size(self) -> int:
        """Number of ids actually in the vocabulary (may be below the requested size)."""

    @property
    def unk_id(self) -> int | None:
        """Id of ``<unk>``, or None when the family cannot produce unknowns."""
        return None


class TrainableTokenizer(Tokenizer):
    """Base of every family trained here: it declares its facts (``FamilyFacts``, where they differ from
    the defaults) and its options model, trains and saves.  Subclasses set ``family`` and
    ``options_model`` and implement the abstract methods."""

    trainable: ClassVar[bool] = True
    #: the family's options (a ``bpe.options.FamilyOptions`` model, declared in the family's module)
    options_model: ClassVar[type]
    facts: ClassVar[FamilyFacts] = FamilyFacts()

    # -- training ---------------------------------------------------------
    @classmethod
    @abstractmethod
    def train(cls, texts: Iterable[str], vocab_size: int, **options: Any) -> Tokenizer:
        """Learn a tokenizer from ``texts`` (one document/sentence/line each)."""

    @classmethod
    @abstractmethod
    def vocab_floor(cls, texts: Iterable[str] | None = None, **options: Any) -> VocabFloor:
        """The smallest ``vocab_size`` that ``train`` accepts with these options: on ``texts``, or with
        None on any text (what a config is checked against before any text is read).  ``train``
        refuses a smaller size with the same message (``VocabFloor.check``)."""

    @classmethod
    def train_sweep(cls, texts: Iterable[str], vocab_sizes: Sequence[int], **options: Any) -> dict[int, Tokenizer]:
        """Tokenizers at every size of ``vocab_sizes`` (checked, largest first) as if each were trained
        on ``texts``: a derivable family (``facts.derivable``) trains the largest and cuts the others from
        it (``derived``), the others train each size."""
        if not cls.facts.derivable:
            texts = list(texts)
            return {size: cls.train(texts, size, **options) for size in vocab_sizes}
        largest = cls.train(texts, vocab_sizes[0], **options)
        return {size: largest.derived(size) for size in vocab_sizes}

    def derived(self, vocab_size: int) -> Tokenizer:
        """The tokenizer training at a ``vocab_size`` no larger than this one's would give, on the same
        text with the same options: only a derivable family (``facts.derivable``) knows it."""
        raise TokenizerError(f"{self.family} tokenizers cannot be derived from a larger one", code="not_derivable",
                             value=self.family)  # fmt: skip

    # -- persistence ------------------------------------------------------
    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """Family-specific JSON body: ``config``, ``vocab``, ``merges`` ... (no envelope)."""

    @classmethod
    @abstractmethod
    def from_dict(cls, body: dict[str, Any]) -> Tokenizer:
        """Inverse of ``to_dict``; raise ``TokenizerError`` on a malformed body."""

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write one human-readable JSON file atomically (never half-written)."""
        document = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "family": self.family}
        document.update(self.to_dict())
        atomic_write_text(Path(path), json.dumps(document, ensure_ascii=False, indent=1) + "\n")


def ids_in_range(ids: Sequence[int], vocab_size: int) -> bool:
    """Whether every id of ``ids`` is an ``int`` (not a bool) in ``0..vocab_size-1``, checked in a few passes
    in C; a decoder that gets False checks id by id, to name the first bad one."""
    return set(map(type, ids)) <= {int} and (not ids or (min(ids) >= 0 and max(ids) < vocab_size))


def utf8(text: str, what: str = "the text to encode") -> bytes:
    """The UTF-8 bytes of ``text``: the one check that a text is a string with a UTF-8 form (a lone
    surrogate such as ``"\\ud800"`` has none), a TokenizerError naming ``what`` otherwise."""
    if not isinstance(text, str):
        raise TokenizerError(f"can only encode a string, got {type(text).__name__}", code="wrong_type", value=text)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TokenizerError(
            f"{what} is not valid Unicode: lone surrogate {text[exc.start]!r} at index {exc.start}",
            code="lone_surrogate",
            value=text[exc.start],
        ) from None


def check_tokenizer_document(document: Any, path: str | os.PathLike[str]) -> dict[str, Any]:
    """Check the envelope of a saved tokenizer read from ``path``; clear errors for foreign files."""
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise TokenizerError(f'{path}: not a tokbench tokenizer (expected "format": "{FORMAT_NAME}")',
                             code="bad_tokenizer_file", value=path, field="format")  # fmt: skip
    version = document.get("format_version")
    if version != FORMAT_VERSION:
        raise TokenizerError(f"{path}: format_version {version!r} is not supported (expected {FORMAT_VERSION})",
                             code="unsupported_version", value=version, field="format_version")  # fmt: skip
    if not isinstance(document.get("family"), str):
        raise TokenizerError(f'{path}: field "family" is missing or not a string', code="bad_tokenizer_file",
                             value=document.get("family"), field="family")  # fmt: skip
    return document
