"""Training a sentencepiece model for the reference rows ``spm-bpe`` and ``spm-unigram`` (``bpe.models.spm``,
whose docstring gives the settings and why).

The trainer's arguments are built in one place, ``trainer_arguments``: the families train with them, and so
does the speed harness of ``tokbench bench`` (on more threads), so its sentencepiece baseline is the model the
rows use.  Here too: the training record a saved ``config`` holds, and the vocabulary floor sentencepiece
reports.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

import sentencepiece

from bpe.base import DEFAULT_SPECIAL_TOKENS, TokenizerError, VocabFloor
from bpe.training.trainer import checked_texts

BYTE_PIECES = 256

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


def training_config(model_type: str, vocab_size: int, character_coverage: float) -> dict[str, Any]:
    """The ``config`` a trained model saves: its training record (``TRAINING_RECORD``) and character coverage."""
    return {
        "model_type": model_type,
        "vocab_size": vocab_size,
        "character_coverage": character_coverage,
        "byte_fallback": True,
        "normalization": "identity",
        "special_tokens": list(DEFAULT_SPECIAL_TOKENS),
        "sentencepiece_version": sentencepiece.__version__,
    }


def training_sentences(texts: Iterable[str]) -> list[str]:
    """The training sentences sentencepiece is given: every text with a non-blank character."""
    return [text for text in checked_texts(texts) if text.strip()]


def trainer_arguments(model_type: str, sentences: Sequence[str], vocab_size: int, character_coverage: float,
                      *, threads: int = 1, log_level: int = 2) -> dict[str, Any]:  # fmt: skip
    """The arguments of ``SentencePieceTrainer.train`` besides the input and output.  ``threads``: 1 for the
    families (the unigram EM sums floats per thread, so the thread count changes the model); ``log_level``:
    sentencepiece's ``minloglevel`` (2: errors only; 0: the progress lines the speed harness times)."""
    return dict(
        model_type=model_type,
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
        num_threads=threads,
        # never skip a long sentence silently (sentencepiece's default skips > 4192 bytes)
        max_sentence_length=max(4192, *(len(s.encode("utf-8")) + 1 for s in sentences)),
        minloglevel=log_level,
    )


def run_trainer(model_type: str, sentences: Sequence[str], vocab_size: int, character_coverage: float,
                *, threads: int = 1, log_level: int = 2) -> bytes:  # fmt: skip
    """The serialized model sentencepiece trains on ``sentences`` with ``trainer_arguments``, in memory (nothing
    is written to disk); sentencepiece's RuntimeError passes through."""
    model = io.BytesIO()
    arguments = trainer_arguments(model_type, sentences, vocab_size, character_coverage, threads=threads,
                                  log_level=log_level)  # fmt: skip
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(sentences), model_writer=model, **arguments)
    return model.getvalue()


def train_model(family: str, model_type: str, sentences: Sequence[str], vocab_size: int,
                character_coverage: float) -> bytes:  # fmt: skip
    """``run_trainer`` as a family trains: a size below the floor sentencepiece reports is a TokenizerError
    naming that minimum (``VocabFloor.check``), any other failure a TokenizerError."""
    try:
        return run_trainer(model_type, sentences, vocab_size, character_coverage)
    except RuntimeError as exc:
        if floor := _floor_in(str(exc), character_coverage):
            floor.check(family, vocab_size)
        raise TokenizerError(f"{family}: sentencepiece training failed: {exc}", code="training_failed") from None


def sentencepiece_floor(family: str, model_type: str, texts: Iterable[str] | None,
                        character_coverage: float) -> VocabFloor:  # fmt: skip
    """The specials, the 256 byte-fallback pieces and the characters covering ``character_coverage``
    of ``texts``, as sentencepiece counts them (asked of sentencepiece itself: a trainer run with no
    room for any character stops, before training, at the check that reports this number); on any
    text, at least one character."""
    if texts is None:
        return _floor(len(DEFAULT_SPECIAL_TOKENS) + BYTE_PIECES + 1, character_coverage, least=True)
    no_room = len(DEFAULT_SPECIAL_TOKENS) + BYTE_PIECES
    try:
        run_trainer(model_type, training_sentences(texts), no_room, character_coverage)
    except RuntimeError as exc:
        if floor := _floor_in(str(exc), character_coverage):
            return floor
        raise TokenizerError(f"{family}: sentencepiece training failed: {exc}", code="training_failed") from None
    return _floor(no_room, character_coverage)  # a text with no character at all


def _floor(required: int, character_coverage: float, least: bool = False) -> VocabFloor:
    base = f"{len(DEFAULT_SPECIAL_TOKENS)} specials + {BYTE_PIECES} byte-fallback pieces"
    if least:
        return VocabFloor(required, f"{base} + at least 1 character")
    characters = required - len(DEFAULT_SPECIAL_TOKENS) - BYTE_PIECES
    return VocabFloor(required, f"{base} + {characters} characters covering {character_coverage:.2%} of this text",
                      "; or use a lower character_coverage")  # fmt: skip


def _floor_in(message: str, character_coverage: float) -> VocabFloor | None:
    """The floor a sentencepiece "vocabulary size is smaller than required_chars" failure reports."""
    match = _TOO_SMALL.search(message)
    return _floor(int(match.group(2)), character_coverage) if match else None
