"""Export to a Hugging Face ``tokenizers`` ``tokenizer.json`` that gives the same ids.

An independent cross-check of our BPE: the exported file, loaded with
``tokenizers.Tokenizer.from_file``, must encode text to exactly our ids
(tests/bpe/export/test_hf_export.py checks every FLORES line of four languages).

Exportable:

* ``byte-bpe`` (any pre-tokenizer): BPE over GPT-2 byte aliases.  Pre-tokenizer
  ``gpt2`` becomes HF's ``ByteLevel(use_regex=True)`` (its built-in GPT-2 regex,
  equivalent to tiktoken's); other patterns become a ``Split`` with our regex
  (behaviour ``Isolated``: every match is one pre-token; our patterns tile the
  text) followed by ``ByteLevel(use_regex=False)``.  ``add_prefix_space`` is
  off: we never invent a leading space.
* ``char-bpe`` with ``end_of_word`` ``attached`` (HF's ``end_of_word_suffix="</w>"``
  glues the marker to a pre-token's last character, as we do) or ``none``;
  unknown characters become ``<unk>`` one by one (``fuse_unk`` off), as ours.

Both need ``encode_mode="merges"`` (HF applies the lowest-ranked merge first,
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
from bpe.pipeline.pretokenizers import PreTokenizer

EXPORTABLE = (
    "byte-bpe (any regex pre-tokenizer) and char-bpe with end_of_word 'attached' or 'none', in encode_mode 'merges', "
    "without normalizer or dropout"
)


def to_hf_json(tokenizer: Tokenizer) -> str:
    """The ``tokenizer.json`` text for ``tokenizer``, or a TokenizerError saying what is exportable."""
    return json.dumps(to_hf_dict(tokenizer), ensure_ascii=False, indent=1) + "\n"


def to_hf_dict(tokenizer: Tokenizer) -> dict[str, Any]:
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
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": decoder,
        "model": {
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
        },
    }


def _unique_vocab(pieces: list[str], family: str) -> dict[str, int]:
    """piece -> id; HF finds a merge's result by its string, so two ids spelled alike cannot be exported."""
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
