"""Export to a Hugging Face ``tokenizers`` ``tokenizer.json`` that gives the same ids.

An independent cross-check of our encoders: the exported file, loaded with
``tokenizers.Tokenizer.from_file``, must encode text to exactly our ids
(tests/bpe/export/test_hf_export.py checks every FLORES line of four languages).

Exportable:

* ``byte-bpe`` and ``parity-bpe`` (a ``ByteBPETokenizer``; any regex pre-tokenizer): BPE over GPT-2 byte
  aliases.  Pre-tokenizer ``gpt2`` becomes HF's ``ByteLevel(use_regex=True)`` (its built-in GPT-2 regex,
  equivalent to tiktoken's); other patterns become a ``Split`` with our regex
  (behaviour ``Isolated``: every match is one pre-token; our patterns tile the
  text) followed by ``ByteLevel(use_regex=False)``.  ``add_prefix_space`` is
  off: we never invent a leading space.
* ``superbpe`` (a ``ByteBPETokenizer``): the same, its stage-2 chunk regex as the ``Split``, as the
  released SuperBPE tokenizers are built.
* ``char-bpe`` with ``end_of_word`` ``attached`` (HF's ``end_of_word_suffix="</w>"``
  glues the marker to a pre-token's last character, as we do) or ``none``;
  unknown characters become ``<unk>`` one by one (``fuse_unk`` off), as ours.

* ``unigram`` with a regex pre-tokenizer and no normalizer: HF's ``Unigram`` model over our (piece, score)
  list (``_unigram_dict``), whose Viterbi breaks ties as ours (the earliest start) and fuses a run of
  unknown characters into one ``<unk>`` scored the lowest score − 10, as ours.
* ``wordpiece`` with a regex pre-tokenizer and no normalizer: HF's ``WordPiece`` model (MaxMatch, as
  ours: the longest entry starting the word, then the longest ``##`` entry of the rest; a word it cannot
  cover, or longer than ``max_input_chars_per_word``, is one ``<unk>``) over our vocabulary and ids
  (``_wordpiece_dict``).  One difference by design: HF looks a word's first piece up among all entries,
  ours among the word-initial ones, so a word that begins with ``##`` (which may match a ``##`` entry) or
  with a special token's string (``<s>`` under a pre-tokenizer that keeps ``<`` with letters; never
  under the default ``unicode``) may get other ids.  Our word-initial pieces keep their attached space
  (`` cat``), so the decoder only strips a leading ``##`` from each piece; HF's ``WordPiece`` decoder
  would add a space before every word-initial piece.

The BPE families need ``encode_mode="merges"`` (HF applies the lowest-ranked merge first,
leftmost occurrence first, which is our order).  Special tokens stay plain
vocabulary entries, not HF "added tokens": like our default encoding, HF then
reads ``<s>`` in the text as three characters.  The file is written by hand
(no ``tokenizers`` import at run time); its layout is that of tokenizers 0.20+
(merges as pairs, so pieces may contain spaces).
"""

from __future__ import annotations

import json
import re
from typing import Any

from bpe.base import UNK, Tokenizer, TokenizerError
from bpe.models.byte_bpe import ByteBPETokenizer
from bpe.models.char_bpe import END_OF_WORD, CharBPETokenizer
from bpe.models.unigram import UnigramTokenizer
from bpe.models.wordpiece import CONTINUATION, WordPieceTokenizer
from bpe.pipeline.pretokenizers import PreTokenizer

EXPORTABLE = (
    "byte-bpe and parity-bpe (any regex pre-tokenizer), superbpe (its stage-2 chunks) and char-bpe with end_of_word "
    "'attached' or 'none', in encode_mode 'merges', without normalizer or dropout; unigram and wordpiece with a "
    "regex pre-tokenizer, without normalizer, in their own encode_mode (likelihood, longest-prefix)"
)


def to_hf_json(tokenizer: Tokenizer) -> str:
    """The ``tokenizer.json`` text for ``tokenizer``, or a TokenizerError saying what is exportable."""
    return json.dumps(to_hf_dict(tokenizer), ensure_ascii=False, indent=1) + "\n"


def to_hf_dict(tokenizer: Tokenizer) -> dict[str, Any]:
    if isinstance(tokenizer, UnigramTokenizer):
        return _unigram_dict(tokenizer)
    if isinstance(tokenizer, WordPieceTokenizer):
        return _wordpiece_dict(tokenizer)
    if isinstance(tokenizer, ByteBPETokenizer):
        suffix = None
        pre_tokenizer = _byte_level_pre_tokenizer(tokenizer.pretokenizer)
        decoder: dict[str, Any] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False}
        unk_token = None  # every byte is in the vocabulary
    elif isinstance(tokenizer, CharBPETokenizer) and tokenizer.end_of_word in ("attached", "none"):
        suffix = END_OF_WORD if tokenizer.end_of_word == "attached" else None
        pre_tokenizer = _split(tokenizer.pretokenizer.pattern)
        decoder = {
            "type": "Sequence",
            "decoders": [{"type": "Replace", "pattern": {"String": END_OF_WORD}, "content": ""}, {"type": "Fuse"}],
        }
        unk_token = UNK
    else:
        detail = f" with end_of_word {tokenizer.end_of_word!r}" if isinstance(tokenizer, CharBPETokenizer) else ""
        raise TokenizerError(
            f"cannot export {tokenizer.family}{detail} to Hugging Face format; exportable: {EXPORTABLE}",
            code="not_exportable",
            value=tokenizer.family,
        )
    settings = {
        "encode_mode": (tokenizer.encode_mode, tokenizer.encode_mode == "merges"),
        # HF's BPE dropout skips merges popped from a queue, not per step as ours does
        "dropout": (tokenizer.options.dropout, tokenizer.options.dropout == 0),
        "normalizer": (tokenizer.normalizer.name, tokenizer.normalizer.name == "none"),
        "pretokenizer": (tokenizer.pretokenizer.name, tokenizer.pretokenizer.is_regex),
    }
    for name, (value, exportable) in settings.items():
        if not exportable:
            raise TokenizerError(f"cannot export {name} {value!r} to Hugging Face format; exportable: {EXPORTABLE}",
                                 code="not_exportable", value=value, field=name)  # fmt: skip
    pieces = tokenizer.vocab
    return _document(pre_tokenizer, decoder, {
            "type": "BPE",
            "dropout": None,
            "unk_token": unk_token,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": suffix,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": _unique_vocab(pieces, tokenizer.family),
            "merges": [[pieces[left], pieces[right]] for left, right in tokenizer.merges],
        })


def _document(pre_tokenizer: dict[str, Any], decoder: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
    """A ``tokenizer.json`` document: no normalizer, post-processor or added tokens (our specials are plain
    vocabulary entries), the given pre-tokenizer, decoder and model."""
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": pre_tokenizer, "post_processor": None, "decoder": decoder, "model": model}


def _unique_vocab(pieces: list[str], family: str) -> dict[str, int]:
    """piece -> id; a HF vocabulary maps a piece to one id (and a BPE merge finds its result by its string), so
    two ids spelled alike cannot be exported."""
    vocab: dict[str, int] = {}
    for token_id, piece in enumerate(pieces):
        if piece in vocab:
            raise TokenizerError(
                f"cannot export this {family} tokenizer to Hugging Face format: ids {vocab[piece]} and {token_id} "
                f"are both spelled {piece!r}, and a HF vocabulary maps each piece to one id",
                code="not_exportable",
                value=piece,
            )
        vocab[piece] = token_id
    return vocab


#: how far below the lowest piece a special token is scored in an exported unigram: HF's Unigram matches
#: every vocabulary entry in the text, so a special must never win a segmentation (the unknown-character
#: score moves down with it, which changes no segmentation: every path pays it once per unknown character)
SPECIAL_SCORE_GAP = 1e6


def _unigram_dict(tokenizer: UnigramTokenizer) -> dict[str, Any]:
    """A HF ``Unigram`` model with our ids: the specials, scored ``SPECIAL_SCORE_GAP`` below every piece (a
    pre-token spelling a special's whole string with an unknown character in it would still encode to the
    special), then our (piece, score) list; our pre-tokenizer as a ``Split``; the pieces fused on decoding."""
    _check_pipeline(tokenizer)
    scored = tokenizer.scored_pieces
    special_score = min((score for _, score in scored), default=0.0) - SPECIAL_SCORE_GAP
    return _document(_split(tokenizer.pretokenizer.pattern), {"type": "Fuse"}, {
        "type": "Unigram",
        "unk_id": tokenizer.unk_id,
        "vocab": [*([special, special_score] for special in tokenizer.special_tokens), *map(list, scored)],
        "byte_fallback": False,
    })


def _wordpiece_dict(tokenizer: WordPieceTokenizer) -> dict[str, Any]:
    """A HF ``WordPiece`` model with our vocabulary and ids (the specials included: ``<unk>`` is the model's
    unknown token), our ``max_input_chars_per_word``, our pre-tokenizer as a ``Split``; decoding strips the
    ``##`` that starts a piece and joins the pieces as they are (the space is part of a word-initial piece)."""
    _check_pipeline(tokenizer)
    # \A: the start of the piece (a ^ would also match after a newline inside it)
    decoder = {"type": "Replace", "pattern": {"Regex": rf"\A{CONTINUATION}"}, "content": ""}
    return _document(_split(tokenizer.pretokenizer.pattern), decoder, {
        "type": "WordPiece",
        "unk_token": UNK,
        "continuing_subword_prefix": CONTINUATION,
        "max_input_chars_per_word": tokenizer.options.max_input_chars_per_word,
        "vocab": _unique_vocab(tokenizer.vocab, tokenizer.family),
    })


def _check_pipeline(tokenizer: UnigramTokenizer | WordPieceTokenizer) -> None:
    """Refuse what a ``Split`` pre-tokenizer without normalizer, and HF's own encoding of the model (Viterbi,
    MaxMatch), cannot express (``not_exportable``)."""
    for name, (value, exportable) in {
        "encode_mode": (tokenizer.options.encode_mode, tokenizer.options.encode_mode == tokenizer.options.native_mode),
        "normalizer": (tokenizer.normalizer.name, tokenizer.normalizer.name == "none"),
        "pretokenizer": (tokenizer.pretokenizer.name, tokenizer.pretokenizer.is_regex),
    }.items():
        if not exportable:
            raise TokenizerError(f"cannot export {name} {value!r} to Hugging Face format; exportable: {EXPORTABLE}",
                                 code="not_exportable", value=value, field=name)  # fmt: skip


def _split(pattern: str | None) -> dict[str, Any] | None:
    """Our pre-tokenizer regex as a HF ``Split``; None (no pre-tokenizer) for the whole-text ``none``."""
    if pattern is None:
        return None
    return {"type": "Split", "pattern": {"Regex": oniguruma_pattern(pattern)}, "behavior": "Isolated", "invert": False}


# an atom (\p{..} class, escape, [...] set or one character) followed by a possessive interval {n,m}+
_POSSESSIVE_INTERVAL = re.compile(r"(\\p\{\w+\}|\\.|\[[^\]]*\]|[^\\()])(\{\d+(?:,\d*)?\})\+")


def oniguruma_pattern(pattern: str) -> str:
    r"""``pattern`` (``regex`` module syntax) with the same meaning in HF's Oniguruma (Ruby syntax).

    The one difference our patterns meet: Ruby syntax has possessive ``++ *+ ?+``
    but reads ``X{1,3}+`` as ``(X{1,3})+`` (any number of digits, for cl100k's
    ``\p{N}{1,3}+``); the atomic group ``(?>X{1,3})`` is the possessive meaning.
    """
    return _POSSESSIVE_INTERVAL.sub(r"(?>\1\2)", pattern)


def _byte_level_pre_tokenizer(pretokenizer: PreTokenizer) -> dict[str, Any]:
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False}
    if pretokenizer.name == "gpt2":
        return {**byte_level, "use_regex": True}
    split = _split(pretokenizer.pattern)
    if split is None:
        return {**byte_level, "use_regex": False}
    return {"type": "Sequence", "pretokenizers": [split, {**byte_level, "use_regex": False}]}
