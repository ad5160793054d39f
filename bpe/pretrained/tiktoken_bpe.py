"""Byte-level BPE by tiktoken ranks: tiktoken rank files, Mistral tekken files and ``cl100k``.

A rank file (tiktoken's ``load_tiktoken_bpe`` format) lists ``<base64 token bytes> <rank>`` per
line; the rank is the token id and the merge priority.  It carries no pre-tokenizer, so a
``pattern`` is required: a name from ``TIKTOKEN_PATTERNS`` (tiktoken's own regexes, kept in
``bpe.pipeline.pretokenizers``) or a regular expression.  A value made only of letters, digits, ``-`` and
``_`` is always read as a name, so a misspelt name is an error rather than a regex.  A rank file may
also take a ``normalizer`` (``bpe.pipeline.normalizers``: ``nfc`` for Qwen, whose tokenizer composes the text to
NFC before encoding); spans still refer to the text as given.

Tekken files (``mistral-common``) hold ranks, a pattern and the number of control ids that
precede the ranks; ``mistral_common``'s ``Tekkenizer`` keeps the first ``default_vocab_size -
default_num_special_tokens`` ranks and shifts every id by the number of control ids, and so do we.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Sequence
from itertools import chain
from typing import Any

import regex
import tiktoken

from bpe.base import (
    Encoding,
    TokenizerError,
    WordEncodings,
    compiled_library,
    ids_in_range,
    utf8,
    word_after_space,
    words_after_space,
)
from bpe.pipeline.normalizers import get_normalizer
from bpe.pipeline.pretokenizers import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, QWEN_PATTERN
from bpe.pretrained.base import PretrainedTokenizer, running_spans

#: named pre-tokenizer patterns for rank files
TIKTOKEN_PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "r50k": GPT2_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
    "qwen": QWEN_PATTERN,
}
#: ids that a published rank file leaves to a special token inside its ranks, by the file's sha256 (the
#: ``expected_hash`` tiktoken pins in ``tiktoken_ext/openai_public.py``): p50k_base keeps 50256 for
#: ``<|endoftext|>`` and goes on with ranks 50257..50280.  Any other rank file must number its tokens 0..n-1.
RESERVED_RANKS: dict[str, frozenset[int]] = {
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069": frozenset({50256}),  # p50k_base
}
_PATTERN_NAME = re.compile(r"[A-Za-z0-9_-]+")
_RANK_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} [0-9]+")


class TiktokenTokenizer(PretrainedTokenizer):
    """Byte-level BPE through a ``tiktoken.Encoding`` whose ranks are the ids, after ``id_offset``
    leading control ids that text never produces (tekken's special tokens)."""

    family = "tiktoken"

    def __init__(
        self,
        encoding: tiktoken.Encoding,
        name: str,
        *,
        id_offset: int = 0,
        control_pieces: Sequence[str] = (),
        normalizer: str = "none",
    ) -> None:
        super().__init__(name)
        self._encoding = encoding
        self.normalizer = get_normalizer(normalizer)
        self._offset = id_offset
        generic = [f"<SPECIAL_{i}>" for i in range(len(control_pieces), id_offset)]
        self._control_pieces = [*control_pieces[:id_offset], *generic]
        self._size = id_offset + _rank_id_count(encoding)
        self._rank_lengths: dict[int, int] = {}  # byte length of each rank met so far (``encode_words``)

    def encode_with_spans(self, text: str) -> Encoding:
        """Spans are running sums of the tokens' byte lengths: the tokens spell the text exactly,
        unless the pattern skips part of it (tiktoken drops unmatched text), which is an error.  With a
        normalizer the tokens spell the normalized text and their spans are mapped back to ``text``."""
        normalized = self.normalizer.normalize(text) if self.normalizer.name != "none" else None
        model_text = text if normalized is None else normalized.text
        with compiled_library(self.name, "tiktoken"):
            ranks = self._encoding.encode_ordinary(model_text)
            lengths = [len(token) for token in self._encoding.decode_tokens_bytes(ranks)]
        if sum(lengths) != len(utf8(model_text)):
            raise TokenizerError(
                f"{self.name}: the pre-tokenizer pattern does not match all of the text, and tiktoken drops "
                "what it does not match; use a pattern whose matches cover any text",
                code="pattern_skips_text",
            )
        ids = [rank + self._offset for rank in ranks] if self._offset else ranks
        spans = running_spans(lengths)
        return Encoding(ids=ids, spans=spans if normalized is None else [normalized.original_span(s) for s in spans])

    def encode(self, text: str) -> list[int]:
        """Ids only: tiktoken's ranks of the (normalized) text, checked to spell it all as ``encode_with_spans``
        checks them."""
        model_text = text if self.normalizer.name == "none" else self.normalizer.normalize(text).text
        with compiled_library(self.name, "tiktoken"):
            ranks = self._encoding.encode_ordinary(model_text)
            lengths = self._lengths(ranks)
        if sum(lengths) != len(utf8(model_text)):
            return self.encode_with_spans(text).ids  # the error it names
        return [rank + self._offset for rank in ranks] if self._offset else ranks

    def _lengths(self, ranks: list[int]) -> list[int]:
        """The byte length of each rank, each rank looked up once per tokenizer."""
        lengths_of = self._rank_lengths
        for rank in ranks:
            if rank not in lengths_of:
                lengths_of[rank] = len(self._encoding.decode_single_token_bytes(rank))
        return [lengths_of[rank] for rank in ranks]

    def encode_words(self, words: Sequence[str]) -> list[Encoding]:
        """``encode_word`` of every word, the byte length of each rank looked up once per tokenizer."""
        if self.normalizer.name != "none":
            return super().encode_words(words)
        spaced = [" " + word for word in words]
        encodings = []
        with compiled_library(self.name, "tiktoken"):
            encoded = [self._encoding.encode_ordinary(text) for text in spaced]
            all_lengths = [self._lengths(ranks) for ranks in encoded]
        for text, ranks, lengths in zip(spaced, encoded, all_lengths, strict=True):
            if sum(lengths) != len(utf8(text)):
                return super().encode_words(words)  # the error encode_with_spans names
            ids = [rank + self._offset for rank in ranks] if self._offset else ranks
            encodings.append(word_after_space(Encoding(ids, running_spans(lengths))))
        return encodings

    def encode_word_arrays(self, words: Sequence[str]) -> WordEncodings:
        """``encode_words`` as flat arrays: the ranks of every ``" " + word``, each rank's byte length looked up
        once, the spans taken in one pass over all words (``words_after_space``).  A normalizer that changes a
        word, or ranks that do not spell a word, go through ``encode_words``."""
        spaced = [" " + word for word in words]
        if self.normalizer.name != "none" and any(self.normalizer.normalize(text).changes for text in spaced):
            return WordEncodings.of(self.encode_words(words))
        with compiled_library(self.name, "tiktoken"):
            encoded = [self._encoding.encode_ordinary(text) for text in spaced]
            ranks = list(chain.from_iterable(encoded))
            lengths = self._lengths(ranks)
        counts = [len(word_ranks) for word_ranks in encoded]
        if sum(lengths) != sum(len(utf8(text)) for text in spaced):  # a word's ranks never spell more than it
            return WordEncodings.of(self.encode_words(words))  # the error encode_with_spans names
        spelled = words_after_space(ranks, lengths, counts)
        if self._offset:
            return WordEncodings(spelled.ids + self._offset, spelled.spans, spelled.counts)
        return spelled

    def decode(self, ids: Sequence[int]) -> str:
        """As ``Tokenizer.decode``, the ranks' bytes joined by tiktoken in one call when every id is a rank it
        holds (control ids and ranks a file reserves stand for no bytes: looked up one by one)."""
        if ids_in_range(ids, self._size) and (not ids or min(ids) >= self._offset):
            try:
                return self._encoding.decode_bytes([token_id - self._offset for token_id in ids] if self._offset
                                                   else ids).decode("utf-8", errors="replace")  # fmt: skip
            except KeyError:
                pass
        return super().decode(ids)

    def id_to_bytes(self, token_id: int) -> bytes:
        self._check_id(token_id)
        if token_id < self._offset:
            return b""
        try:
            return self._encoding.decode_single_token_bytes(token_id - self._offset)
        except KeyError:  # an id reserved for a special token the file does not list: text never yields it
            return b""

    def id_to_piece(self, token_id: int) -> str:
        """The token's bytes as text (bytes that are not whole UTF-8 characters as ``\\xNN``);
        a control id's name (``<s>``, ``<SPECIAL_7>``)."""
        self._check_id(token_id)
        if token_id < self._offset:
            return self._control_pieces[token_id]
        return self.all_token_bytes()[token_id].decode("utf-8", errors="backslashreplace")

    @property
    def vocab_size(self) -> int:
        return self._size


def encoding_from_ranks(name: str, pattern: str, ranks: dict[bytes, int]) -> tiktoken.Encoding:
    """A ``tiktoken.Encoding`` without special tokens, or a TokenizerError for a pattern tiktoken refuses."""
    _check_pattern(pattern, name)
    try:
        return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    except ValueError as exc:
        raise TokenizerError(f"{name}: invalid pre-tokenizer pattern {pattern!r} ({exc})", code="invalid_pattern",
                             value=pattern) from None  # fmt: skip


def resolve_pattern(pattern: str | None, source: str) -> str:
    """The regex of a named pattern, an explicit regex as is; a missing pattern or unknown name is an error."""
    known = ", ".join(TIKTOKEN_PATTERNS)
    if pattern is None:
        raise TokenizerError(f"{source}: a tiktoken rank file has no pre-tokenizer; give a pattern: {known} or a regex",
                             code="missing_option", value="pattern")  # fmt: skip
    if not isinstance(pattern, str) or not pattern:
        raise TokenizerError(f"{source}: pattern must be a non-empty string ({known} or a regex), got {pattern!r}",
                             code="wrong_type", value=pattern, field="pattern")  # fmt: skip
    if _PATTERN_NAME.fullmatch(pattern):
        if pattern not in TIKTOKEN_PATTERNS:
            raise TokenizerError(f"{source}: unknown pattern {pattern!r}; known: {known} (or give a regex)",
                                 code="unknown_pattern", value=pattern)  # fmt: skip
        return TIKTOKEN_PATTERNS[pattern]
    return pattern


def looks_like_rank_file(data: bytes) -> bool:
    """True when the first non-empty line is ``<base64> <integer>``."""
    first = next((line.strip() for line in data[:4096].splitlines() if line.strip()), b"")
    return bool(_RANK_LINE.fullmatch(first))


def read_ranks(data: bytes, source: str) -> dict[bytes, int]:
    """Parse a rank file, with an error naming the first bad line."""
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        if not _RANK_LINE.fullmatch(line.strip()):
            raise TokenizerError(f"{source} line {number}: expected '<base64 token> <rank>', got {line[:60]!r}",
                                 code="bad_tokenizer_file", value=number, field="line")  # fmt: skip
        token, rank = line.split()
        decoded = base64.b64decode(token)
        if decoded in ranks:
            raise TokenizerError(f"{source} line {number}: token {decoded!r} is listed twice (ranks "
                                 f"{ranks[decoded]} and {int(rank)}); each token has one rank",
                                 code="bad_tokenizer_file", value=number, field="line")  # fmt: skip
        ranks[decoded] = int(rank)
    _check_ranks(ranks, source, RESERVED_RANKS.get(hashlib.sha256(data).hexdigest(), frozenset()))
    return ranks


def _rank_id_count(encoding: tiktoken.Encoding) -> int:
    """The ids the ranks span: n ranks are 0..n-1, or 0..n when one id is left to a special token
    (p50k_base's 50256); special tokens after the ranks (cl100k's 100257...) are not counted."""
    count = len(encoding.token_byte_values())
    try:
        token = encoding.decode_single_token_bytes(count)
    except KeyError:
        return count
    return count if token.decode("utf-8", "replace") in encoding.special_tokens_set else count + 1


def _check_ranks(ranks: dict[bytes, int], source: str, reserved: frozenset[int] = frozenset()) -> None:
    """The checks every rank file and tekken file passes at load time, for every command: the ranks are
    0..n-1, each once, apart from the ``reserved`` ids a published file leaves to a special token
    (``RESERVED_RANKS``: a gap anywhere else would be an id that text can never produce, and a sign of a
    damaged file), and there is a token for each of the 256 bytes (byte-level BPE starts from them;
    without one, tiktoken's compiled encoder panics on text holding that byte)."""
    values = set(ranks.values())
    expected = set(range(len(ranks) + len(reserved))) - reserved
    if values != expected:
        absent = sorted(expected - values)
        detail = f"; rank {absent[0]} is missing" if absent and len(values) == len(ranks) else ""
        raise TokenizerError(f"{source}: the ranks must be 0..{len(ranks) - 1}, each once, one per distinct "
                             f"token{detail}", code="bad_tokenizer_file", field="ranks")  # fmt: skip
    missing = [byte for byte in range(256) if bytes([byte]) not in ranks]
    if missing:
        raise TokenizerError(f"{source}: no token for byte {bytes([missing[0]])!r} (0x{missing[0]:02x})"
                             f"{f' and {len(missing) - 1} other byte(s)' if len(missing) > 1 else ''}; a byte-level "
                             "BPE must hold a token for each of the 256 bytes", code="bad_tokenizer_file",
                             value=bytes([missing[0]]), field="ranks")  # fmt: skip


def _check_pattern(pattern: str, source: str) -> None:
    """A pattern that matches the empty string makes tiktoken's compiled encoder panic (and would
    skip text): refused like a pattern that skips text."""
    try:
        matches_nothing = regex.fullmatch(pattern, "") is not None
    except regex.error as exc:
        raise TokenizerError(f"{source}: invalid pre-tokenizer pattern {pattern!r} ({exc})", code="invalid_pattern",
                             value=pattern) from None  # fmt: skip
    if matches_nothing:
        raise TokenizerError(
            f"{source}: the pre-tokenizer pattern {pattern!r} matches the empty string, so it does not match all of "
            "the text (tiktoken drops what it does not match); use a pattern whose matches cover any text",
            code="invalid_pattern",
            value=pattern,
        )


def load_rank_file(data: bytes, name: str, pattern: str | None, normalizer: str | None = None) -> TiktokenTokenizer:
    regex = resolve_pattern(pattern, name)
    normalizer = "none" if normalizer is None else normalizer
    get_normalizer(normalizer)  # an unknown name is an error before the ranks are read
    return TiktokenTokenizer(encoding_from_ranks(name, regex, read_ranks(data, name)), name, normalizer=normalizer)


def load_tekken(document: dict[str, Any], name: str) -> TiktokenTokenizer:
    try:
        config = document["config"]
        pattern, vocab_size = config["pattern"], int(config["default_vocab_size"])
        specials = int(config["default_num_special_tokens"])
        if not 0 <= specials <= vocab_size:
            raise ValueError(f"config.default_vocab_size {vocab_size} must be at least config."
                             f"default_num_special_tokens {specials} (the ranks follow the special ids), "
                             "and neither may be negative")  # fmt: skip
        entries = document["vocab"][: vocab_size - specials]
        ranks = {base64.b64decode(entry["token_bytes"], validate=True): int(entry["rank"]) for entry in entries}
        listed = sorted(document.get("special_tokens") or [], key=lambda entry: int(entry["rank"]))
        control = [str(entry["token_str"]) for entry in listed]
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise TokenizerError(f"{name}: malformed tekken file ({type(exc).__name__}: {exc})",
                             code="bad_tokenizer_file") from None  # fmt: skip
    _check_ranks(ranks, name)
    encoding = encoding_from_ranks(name, pattern, ranks)
    return TiktokenTokenizer(encoding, name, id_offset=specials, control_pieces=control)
