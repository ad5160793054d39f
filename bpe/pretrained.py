"""Published tokenizers from files, behind the Tokenizer interface (encode-only).

Accepted files (``docs/formats.md``), recognised from their content, or named with ``format=``:

``tokbench``
    a tokenizer saved by ``Tokenizer.save`` / ``tokbench train`` (a trainable family);
``hf``
    a Hugging Face ``tokenizers`` ``tokenizer.json``, or a directory holding one; this includes
    the files ``tokbench export`` writes (``bpe.hf``);
``sentencepiece``
    a sentencepiece ``.model`` file (``bpe.spm``);
``tiktoken``
    a tiktoken rank file, ``<base64 token bytes> <rank>`` per line, with a pre-tokenizer ``pattern``
    (``bpe.tiktoken_bpe``);
``tekken``
    a Mistral tekken JSON, as ``mistral-common`` ships them (``bpe.tiktoken_bpe``).

What every pretrained tokenizer guarantees:

* **No special tokens are added** to plain text: no BOS/EOS, no ``[CLS]``/``[SEP]``; special-token
  strings in the text (``<s>``, ``<|endoftext|>``) are encoded as ordinary text.  A lone ``▁`` that
  a sentencepiece model emits is a real token of its sequence and is counted; its span is empty
  when it stands for the dummy prefix, which covers no input.
* **Byte spans** are in order and never overlap; for lossless tokenizers (byte-level BPE,
  sentencepiece with identity normalization and byte fallback) they tile the text's bytes.
* **Ids** are the owning library's own (``tests/bpe/test_pretrained.py`` compares them with
  ``tokenizers``, ``sentencepiece``, ``tiktoken`` and ``mistral-common`` on every FLORES line).

``load_file`` reads one file; ``PretrainedSpec`` and ``load_pretrained`` resolve a row of an
experiment config: a registry name or a path, a relative path looked up in given folders in order.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from bpe.base import Tokenizer, TokenizerError
from bpe.production import PRODUCTION

#: accepted file formats: name -> what it is
FORMATS: dict[str, str] = {
    "tokbench": "a tokbench tokenizer JSON",
    "hf": "a Hugging Face tokenizer.json",
    "sentencepiece": "a sentencepiece .model file",
    "tiktoken": "a tiktoken rank file",
    "tekken": "a Mistral tekken JSON",
}
HF_FILE = "tokenizer.json"


class PretrainedTokenizer(Tokenizer):
    """A published tokenizer used as is: it cannot be trained or saved."""

    trainable: ClassVar[bool] = False

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        """The registry name or the file it was read from."""
        return self._name

    @classmethod
    def _encode_only(cls, what: str) -> NoReturn:
        raise TokenizerError(f"{what} is a pretrained tokenizer: encode-only (it cannot be trained or saved)")

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, **options: Any) -> NoReturn:
        cls._encode_only(cls.family)

    @classmethod
    def vocab_floor(cls, texts: Iterable[str] | None = None, **options: Any) -> NoReturn:
        cls._encode_only(cls.family)

    def to_dict(self) -> NoReturn:
        self._encode_only(self.name)

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> NoReturn:
        cls._encode_only(cls.family)

    def _check_id(self, token_id: int) -> None:
        check_token_id(token_id, self.vocab_size, self.name)


def check_token_id(token_id: int, vocab_size: int, name: str) -> None:
    """A TokenizerError unless ``token_id`` is an int in ``0..vocab_size-1``."""
    if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < vocab_size:
        raise TokenizerError(f"token id {token_id!r} is out of range for {name} (0..{vocab_size - 1})")


def utf8(text: str) -> bytes:
    """The UTF-8 bytes of ``text``; a string with a lone surrogate is an error (it has none)."""
    if not isinstance(text, str):
        raise TokenizerError(f"can only encode a string, got {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TokenizerError(
            f"the text to encode is not valid Unicode: lone surrogate {text[exc.start]!r} at index {exc.start}"
        ) from None


def running_spans(lengths: Iterable[int]) -> list[tuple[int, int]]:
    """Spans of consecutive tokens of the given byte lengths, starting at byte 0."""
    ends = list(accumulate(lengths))
    return list(zip([0, *ends][: len(ends)], ends, strict=True))


# -- reading a file ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Contents:
    """A tokenizer file as read once: its detected format and its bytes or parsed JSON."""

    path: Path
    format: str | None  # None: no known format
    data: bytes
    document: Any = None


def read_regular_file(path: Path) -> bytes:
    """The bytes of ``path``, refused unless it is a regular file: a device or FIFO (``/dev/zero``, a
    pipe) may never end, and nothing is read from it before the refusal."""
    with open(path, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise TokenizerError(f"{path}: not a regular file (a device, pipe or socket); give a tokenizer file")
        return handle.read()


def _read(path: Path) -> _Contents:
    if path.is_dir():
        if not (path / HF_FILE).is_file():
            raise TokenizerError(
                f"{path}: a directory without {HF_FILE} (a Hugging Face tokenizer directory holds one; "
                "other formats are single files)"
            )
        path = path / HF_FILE
    try:
        data = read_regular_file(path)
    except FileNotFoundError:
        raise TokenizerError(f"{path}: no such tokenizer file") from None
    except OSError as exc:
        raise TokenizerError(f"{path}: cannot read tokenizer file ({exc.strerror or exc})") from None
    if data.lstrip()[:1] == b"{":
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise TokenizerError(f"{path}: not a JSON file ({exc})") from None
        except RecursionError:  # Python's parser recurses once per level of nesting
            raise TokenizerError(
                f"{path}: not a tokenizer file: its JSON is nested too deeply to read (no tokenizer format nests "
                "more than a few levels)"
            ) from None
        return _Contents(path, _json_format(document), data, document)
    from bpe.spm import looks_like_model
    from bpe.tiktoken_bpe import looks_like_rank_file

    if looks_like_rank_file(data):
        return _Contents(path, "tiktoken", data)
    if looks_like_model(data):
        return _Contents(path, "sentencepiece", data)
    return _Contents(path, None, data)


def _json_format(document: Any) -> str | None:
    if not isinstance(document, dict):
        return None
    if "format" in document:  # tokbench's envelope, which check_tokenizer_document checks
        return "tokbench"
    if isinstance(document.get("model"), dict) and "pre_tokenizer" in document:
        return "hf"
    if isinstance(document.get("config"), dict) and "pattern" in document["config"] and "vocab" in document:
        return "tekken"
    return None


def detect_format(path: str | Path) -> str:
    """The format of a tokenizer file or directory, or a TokenizerError saying it has none known."""
    contents = _read(Path(path))
    if contents.format is None:
        _unknown(contents)
    return contents.format


def _unknown(contents: _Contents) -> NoReturn:
    kind = "a JSON file" if contents.document is not None else "a file"
    known = list(FORMATS.values())
    raise TokenizerError(
        f"{contents.path}: {kind} in no known tokenizer format; expected {', '.join(known[:-1])} or {known[-1]} "
        "(or a directory holding a tokenizer.json)"
    )


def load_file(
    path: str | Path, *, format: str | None = None, pattern: str | None = None, normalizer: str | None = None
) -> Tokenizer:
    """Load a tokenizer file of any accepted format (detected, or checked against ``format``).

    ``pattern`` is the pre-tokenizer of a tiktoken rank file (a name or a regex) and ``normalizer``
    its normalizer (``bpe.normalizers``, e.g. ``nfc``); the other formats carry their own and refuse
    either.
    """
    if format is not None and format not in FORMATS:
        raise TokenizerError(f"unknown tokenizer format {format!r}; known: {', '.join(FORMATS)}")
    contents = _read(Path(path))
    if contents.format is None:
        _unknown(contents)
    if format is not None and format != contents.format:
        raise TokenizerError(
            f"{contents.path}: expected {FORMATS[format]}, but this is {FORMATS[contents.format]} "
            f"(format {contents.format!r})"
        )
    if pattern is not None and contents.format != "tiktoken":
        raise TokenizerError(
            f"{contents.path}: a pattern applies to tiktoken rank files only; {FORMATS[contents.format]} "
            "carries its own pre-tokenizer"
        )
    if normalizer is not None and contents.format != "tiktoken":
        raise TokenizerError(
            f"{contents.path}: a normalizer applies to tiktoken rank files only; {FORMATS[contents.format]} "
            "carries its own"
        )
    name = str(path)
    if contents.format == "tokbench":
        from bpe import tokenizer_from_document  # the family registry lives in the package

        return tokenizer_from_document(contents.document, contents.path)
    if contents.format == "hf":
        from bpe.hf import load_hf

        return load_hf(contents.data, name)
    if contents.format == "sentencepiece":
        from bpe.spm import SentencePieceModelTokenizer

        return SentencePieceModelTokenizer(contents.data, name)
    from bpe.tiktoken_bpe import load_rank_file, load_tekken

    if contents.format == "tiktoken":
        return load_rank_file(contents.data, name, pattern, normalizer)
    return load_tekken(contents.document, name)


# -- a pretrained row of a config ----------------------------------------------------------------------


@dataclass(frozen=True)
class PretrainedSpec:
    """A pretrained tokenizer as a config row describes it.

    ``source`` is a registry name (``bpe.PRODUCTION``) or a file/directory path; ``format``,
    ``pattern`` and ``normalizer`` as in ``load_file``.
    """

    label: str
    source: str
    format: str | None = None
    pattern: str | None = None
    normalizer: str | None = None


def find_file(source: str, search: Sequence[tuple[str, Path]]) -> Path:
    """``source`` as a path: absolute as is; relative, the first of ``search`` (``(what, folder)``
    pairs, tried in order) where it exists, else an error naming every place looked at."""
    path = Path(source).expanduser()
    if path.is_absolute() or not search:
        return path
    for _what, folder in search:
        if (folder / path).exists():
            return folder / path
    looked = ", then ".join(f"the {what} ({folder / path})" for what, folder in search)
    names = "" if len(path.parts) > 1 else f"; known names: {', '.join(PRODUCTION)}"
    raise TokenizerError(f"{source}: not found; looked in {looked}{names}")


def load_pretrained(spec: PretrainedSpec, search: Sequence[tuple[str, Path]] = ()) -> Tokenizer:
    """The tokenizer a config row describes.

    A registry name is loaded by name (with no format or pattern).  Anything else is a path; a
    relative path is looked up in ``search``: e.g. ``[("data root", root), ("config folder", folder)]``.
    Every error names the row's label.
    """
    from bpe import load  # the package's entry point: names and files

    try:
        if spec.source in PRODUCTION and spec.format is None and spec.pattern is None and spec.normalizer is None:
            return load(spec.source)
        return load_file(
            find_file(spec.source, search), format=spec.format, pattern=spec.pattern, normalizer=spec.normalizer
        )
    except TokenizerError as exc:
        raise TokenizerError(f"pretrained tokenizer {spec.label!r}: {exc}") from None
