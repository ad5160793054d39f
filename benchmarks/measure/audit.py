"""Vocabulary audit: which entries of a tokenizer no text can produce, and which scripts its vocabulary serves.

**Reachability** (Land & Bartolo 2024, "Fishing for Magikarp: Automatically Detecting Under-trained Tokens in
Large Language Models", who use this check): an entry is *reachable* iff encoding its own text alone yields
exactly that entry, one token with its id.  An entry's *text* is the text it stands for,
``Tokenizer.id_to_bytes`` (markers removed: ``Ġ`` or ``▁`` as a space, no ``</w>``, no ``##``) decoded as UTF-8.
"Alone" is the text placed where the entry's markers say it stands, per family:

* **byte-level BPE** (byte-bpe, tiktoken rank files, tekken, Hugging Face ByteLevel files), **word**, **char**,
  **morfessor**, **bpe-knockout** over byte-bpe: the text encoded as it is (``Tokenizer.encode``), so the
  pre-tokenizer takes part: an entry that spans what the pre-tokenizer always splits is unreachable;
* **char-bpe** (and bpe-knockout over char-bpe) with an end-of-word marker: an entry ending in ``</w>`` is a
  word end: its text encoded as it is; an entry without it stands inside a word: char-bpe's merges applied to
  its characters with no marker after them (``CharBPETokenizer.encode_inside_word``); bpe-knockout's word-inner
  entries have no such check and are *unchecked*; with ``end_of_word = "none"``: the text as it is;
* **sentencepiece** (spm-bpe, spm-unigram, ``.model`` files, the Mistral models), always sentencepiece's own
  segmentation: an entry beginning with ``▁`` stands for a word start: its text without that space, which the
  model's dummy prefix puts back; any other entry (inside a word, or a model without a dummy prefix): its text
  with the dummy prefix turned off (``sentencepiece_ids(text, dummy_prefix=False)``), every other setting the
  model's; a byte-fallback piece ``<0x41>`` has the text of its byte;
* **Hugging Face** files of other kinds: a WordPiece continuation (``##ing``) or a Metaspace model's entry
  without ``▁`` stands inside a word, which no text alone can put it: *unchecked*; a Metaspace entry with
  ``▁`` is reachable when its text with or without the leading space encodes to exactly it; the rest as
  byte-level.

Entries that are not checked get their own status instead of reachable or unreachable:

* ``partial``: the entry's bytes are not UTF-8 text on their own (a byte-level piece holding part of a
  character, a byte-fallback piece of a byte >= 0x80): no text is exactly those bytes; such an entry is produced
  only inside longer text, which this audit does not search;
* ``special``: special and control tokens — a trained family's ``<pad> <unk> <s> </s>`` (and extra ones), the
  unknown token, a published file's control ids (``<s>``, ``</s>``, tekken's ``<SPECIAL_n>``) and the ids it
  reserves: tokbench never produces one from text (a special token's string is encoded as ordinary text), and
  ``<unk>`` stands for text outside the vocabulary;
* ``no-text``: a bare end-of-word marker (a separate ``</w>``): it stands for no text, and no text alone is
  empty;
* ``unchecked``: word-inner entries of the Hugging Face and bpe-knockout cases above.

**Script of an entry**: the script of the letters of its text (the characters ``\\p{L}`` of its complete UTF-8
characters; a cut character's bytes are ignored): ``Latin``, ``Cyrillic``, ``Hangul``, or ``CJK`` (Han,
Hiragana, Katakana, Bopomofo) when every letter belongs to that one script; ``other`` for any other script,
letters of several scripts, or no letter at all (spaces, digits, punctuation, bytes, specials).
"""

from __future__ import annotations

import csv
import functools
import io
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from benchmarks.files import csv_quoting
from bpe.base import Tokenizer
from bpe.render import render_bytes

STATUSES = ("reachable", "unreachable", "partial", "special", "no-text", "unchecked")
SCRIPTS = ("Latin", "Cyrillic", "Hangul", "CJK", "other")
_SCRIPT_OF_LETTER = {
    "Latin": regex.compile(r"\p{Script=Latin}"),
    "Cyrillic": regex.compile(r"\p{Script=Cyrillic}"),
    "Hangul": regex.compile(r"\p{Script=Hangul}"),
    "CJK": regex.compile(r"[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Bopomofo}]"),
}
_LETTER = regex.compile(r"\p{L}")
_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")
END_OF_WORD = "</w>"
WORD_START = "▁"


def entry_script(data: bytes) -> str:
    """The script of an entry whose text is ``data`` (module docstring)."""
    letters = _LETTER.findall(data.decode("utf-8", errors="ignore"))
    if not letters:
        return "other"
    found = {_letter_script(letter) for letter in letters}
    return found.pop() if len(found) == 1 else "other"


@functools.cache
def _letter_script(letter: str) -> str:
    """The script of one letter (``_SCRIPT_OF_LETTER``, else ``other``); looked up once per distinct letter:
    a 200k-entry vocabulary holds a few thousand."""
    return next((name for name, pattern in _SCRIPT_OF_LETTER.items() if pattern.match(letter)), "other")


@dataclass(frozen=True)
class AuditEntry:
    """One vocabulary entry: its id, its piece (the family's own form), its bytes, its reachability status,
    its script, and the ids the check encoded its text to (empty when not checked)."""

    id: int
    piece: str
    data: bytes
    status: str
    script: str
    encoded: tuple[int, ...] = ()

    def row(self) -> list[Any]:
        """The entry as a CSV row of ``ENTRY_COLUMNS``; a lone surrogate in a piece (a tokenizer's own printing
        of an id) as ``<U+D800>``, so every row has a UTF-8 form."""
        piece = _LONE_SURROGATE.sub(lambda match: f"<U+{ord(match.group()):04X}>", self.piece)
        return [self.id, piece, self.data.hex(), render_bytes(self.data), self.status, self.script,
                " ".join(map(str, self.encoded))]  # fmt: skip


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: one audited entry as a CSV row: its text as ``tokbench show`` renders bytes, the ids it encoded to space-separated
ENTRY_COLUMNS = ["id", "piece", "hex", "text", "status", "script", "encoded"]


@dataclass(frozen=True)
class VocabularyAudit:
    """Every entry of a tokenizer's vocabulary, audited (module docstring)."""

    tokenizer: str
    entries: tuple[AuditEntry, ...]

    def status_counts(self) -> dict[str, int]:
        counts = Counter(entry.status for entry in self.entries)
        return {status: counts.get(status, 0) for status in STATUSES}

    def script_counts(self) -> dict[str, int]:
        counts = Counter(entry.script for entry in self.entries)
        return {script: counts.get(script, 0) for script in SCRIPTS}

    def unreachable_by_script(self) -> dict[str, int]:
        counts = Counter(entry.script for entry in self.entries if entry.status == "unreachable")
        return {script: counts.get(script, 0) for script in SCRIPTS}

    def csv_text(self) -> str:
        """One row per entry: id, piece, hex (its bytes), text (as ``tokbench show`` renders bytes), status,
        script, encoded (the ids its text encoded to, space-separated)."""
        out = io.StringIO()
        rows = [entry.row() for entry in self.entries]
        writer = csv.writer(out, lineterminator="\n", quoting=csv_quoting(field for row in rows for field in row))
        writer.writerow(ENTRY_COLUMNS)
        writer.writerows(rows)
        return out.getvalue()


#: how one entry's text is encoded alone: (id, piece, text) -> the candidate encodings, or None (unchecked)
Check = Callable[[int, str, str], list[Sequence[int]] | None]


def _check_for(tokenizer: Tokenizer) -> Check:
    """The family's way of encoding an entry's text alone (module docstring)."""
    from bpe.models.char_bpe import CharBPETokenizer
    from bpe.models.knockout import KnockoutTokenizer
    from bpe.models.spm_encoding import SentencePieceBacked
    from bpe.pretrained.hf import HuggingFaceTokenizer

    def as_is(_: int, __: str, text: str) -> list[Sequence[int]]:
        return [tokenizer.encode(text)]

    if isinstance(tokenizer, SentencePieceBacked):
        prefixed = tokenizer.adds_dummy_prefix

        def sentencepiece(_: int, piece: str, text: str) -> list[Sequence[int]]:
            # a word start: its text without the space the dummy prefix puts back (a bare ``▁``: the empty text,
            # which encodes to nothing, so the bare mark is never a text's whole encoding)
            if prefixed and piece.startswith(WORD_START):
                return [tokenizer.sentencepiece_ids(text[1:])]
            return [tokenizer.sentencepiece_ids(text, dummy_prefix=False)]

        return sentencepiece
    if isinstance(tokenizer, CharBPETokenizer) and tokenizer.end_of_word != "none":

        def char_bpe(_: int, piece: str, text: str) -> list[Sequence[int]]:
            return [tokenizer.encode(text) if piece.endswith(END_OF_WORD) else tokenizer.encode_inside_word(text)]

        return char_bpe
    if isinstance(tokenizer, KnockoutTokenizer) and getattr(tokenizer.base, "end_of_word", "none") != "none":

        def knockout(_: int, piece: str, text: str) -> list[Sequence[int]] | None:
            return [tokenizer.encode(text)] if piece.endswith(END_OF_WORD) else None

        return knockout
    if isinstance(tokenizer, HuggingFaceTokenizer):
        prefix, marks = tokenizer.continuing_subword_prefix, tokenizer.word_start_marks

        def hugging_face(_: int, piece: str, text: str) -> list[Sequence[int]] | None:
            if prefix and piece.startswith(prefix) and len(piece) > len(prefix):
                return None
            if marks:
                if not any(piece.startswith(mark) for mark in marks):
                    return None
                texts = [text, text[1:]] if len(text) > 1 else [text]
                return [tokenizer.encode(candidate) for candidate in texts]
            return [tokenizer.encode(text)]

        return hugging_face
    return as_is


def audit_vocabulary(tokenizer: Tokenizer) -> VocabularyAudit:
    """Every entry of ``tokenizer``'s vocabulary with its reachability status and script (module docstring).
    Entries in id order; deterministic."""
    check = _check_for(tokenizer)
    specials = set(range(len(getattr(tokenizer, "special_tokens", ()))))
    if tokenizer.unk_id is not None:
        specials.add(tokenizer.unk_id)
    entries = []
    for token_id, data in enumerate(tokenizer.all_token_bytes()):
        piece = tokenizer.id_to_piece(token_id)
        script = entry_script(data)
        if token_id in specials:
            entries.append(AuditEntry(token_id, piece, data, "special", "other"))
            continue
        if not data:  # a bare end-of-word marker, or a control id (<s>, <|endoftext|>, an id a file reserves)
            entries.append(AuditEntry(token_id, piece, data, "no-text" if piece == END_OF_WORD else "special", script))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            entries.append(AuditEntry(token_id, piece, data, "partial", script))
            continue
        # a byte-fallback piece stands for its byte's character, inside a word or not
        placed = text if _BYTE_PIECE.fullmatch(piece) and len(data) == 1 else piece
        candidates = check(token_id, placed, text)
        if candidates is None:
            entries.append(AuditEntry(token_id, piece, data, "unchecked", script))
            continue
        hit = next((tuple(ids) for ids in candidates if list(ids) == [token_id]), None)
        status = "reachable" if hit is not None else "unreachable"
        encoded = hit if hit is not None else tuple(candidates[0])
        entries.append(AuditEntry(token_id, piece, data, status, script, encoded))
    return VocabularyAudit(tokenizer.name, tuple(entries))


@dataclass(frozen=True)
class UnusedEntries:
    """The entries a tokenizer never used on one language's text: ``never_used`` ids (sorted), and how many
    of them have each audit status (an unreachable entry is expected there; a reachable one is vocabulary the
    text did not need)."""

    language: str
    texts: int
    never_used: tuple[int, ...]
    by_status: dict[str, int]


def unused_entries(audit: VocabularyAudit, tokenizer: Tokenizer, texts_by_language: dict[str, Sequence[str]]
                   ) -> list[UnusedEntries]:  # fmt: skip
    """Per language (in the given order), the entries no token of ``tokenizer``'s encodings of its texts is:
    ``never used = {entry ids} - {ids of encode(text) for every text}``.  Special and no-text entries are
    included (they are never used on plain text).  ``audit`` must be this tokenizer's."""
    if len(audit.entries) != tokenizer.vocab_size:
        raise ValueError(f"the audit has {len(audit.entries)} entries, the tokenizer {tokenizer.vocab_size}")
    rows = []
    for language, texts in texts_by_language.items():
        used = {token for text in texts for token in tokenizer.encode(text)}
        never = tuple(entry.id for entry in audit.entries if entry.id not in used)
        counts = Counter(audit.entries[token].status for token in never)
        rows.append(UnusedEntries(language, len(texts), never, {status: counts.get(status, 0) for status in STATUSES}))
    return rows


# --------------------------------------------------------------------------- the audit of a run

#: the run's side tables: counts per tokenizer row and corpus, and one row per unreachable entry
AUDIT_FILE, AUDIT_ENTRIES_FILE = "audit.csv", "audit-entries.csv"
#: the evaluation set whose text "never used" counts are taken on
UNUSED_ROLE = "test"
#: the columns of a status count and a script count in ``audit.csv`` ("no-text" as a column name: ``no_text``)
STATUS_COLUMNS = {status: status.replace("-", "_") for status in STATUSES}
SCRIPT_COLUMNS = {script: f"script_{script.lower()}" for script in SCRIPTS}
AUDIT_COLUMNS = ["corpus", "language", "tokenizer", "kind", "row_type", "vocab_size", "entries",
                 *STATUS_COLUMNS.values(), *SCRIPT_COLUMNS.values(),
                 *(f"{column}_share" for column in SCRIPT_COLUMNS.values()),
                 "unused_eval_set", "unused_texts", "unused", "unused_reachable"]  # fmt: skip
AUDIT_ENTRY_COLUMNS = ["corpus", "tokenizer", *ENTRY_COLUMNS]


@dataclass(frozen=True)
class AuditSummary:
    """What a run's audit tables use of a ``VocabularyAudit``: how many entries, by status and by script, and the
    unreachable entries (the rows of ``audit-entries.csv``); small enough to hand from a worker process to
    the run's (a 200k-entry audit took a second to unpickle)."""

    entries: int
    statuses: dict[str, int]
    scripts: dict[str, int]
    unreachable: tuple[AuditEntry, ...]

    @classmethod
    def of(cls, audit: VocabularyAudit) -> AuditSummary:
        return cls(len(audit.entries), audit.status_counts(), audit.script_counts(),
                   tuple(entry for entry in audit.entries if entry.status == "unreachable"))  # fmt: skip


@dataclass(frozen=True)
class UnitAuditFacts:
    """What ``audit.csv`` says of one tokenizer row on one corpus: the ``AuditSummary`` of its tokenizer's
    ``audit_vocabulary`` and the entries it never used on the corpus's ``UNUSED_ROLE`` text (None: the corpus
    has none)."""

    audit: AuditSummary
    never: UnusedEntries | None

    @classmethod
    def of(cls, summary: AuditSummary, audit: VocabularyAudit, tokenizer: Tokenizer, language: str,
           texts: Sequence[str]) -> UnitAuditFacts:  # fmt: skip
        """The facts of one row: ``summary`` of its tokenizer's ``audit``, and the entries unused on ``texts``."""
        return cls(summary, unused_entries(audit, tokenizer, {language: list(texts)})[0] if texts else None)
