"""Published tokenizer file formats: one module each, listed once in ``FORMATS``.

A format module declares ``NAME`` (what ``format=`` / ``--format`` / a config's ``format`` take),
``DESCRIPTION`` (how messages name its files), ``RECOGNISED_BY`` (what ``docs/formats.md`` says
``sniff`` checks), ``JSON`` (whether its files are JSON documents), ``OPTIONS`` (the keyword
options its ``load`` takes, such as a tiktoken rank file's ``pattern``), and two functions:

``sniff(file) -> bool``
    whether a ``TokenizerFile`` (the file as read once: bytes, and parsed JSON for a JSON
    document) is of this format; cheap, and importing nothing heavy before it is needed;
``load(file, **options) -> Tokenizer``
    the tokenizer it holds, behind the ``bpe.base.Tokenizer`` interface (``bpe.pretrained.base``).

A file's format is the first in ``FORMATS`` whose ``sniff`` claims it, among the JSON formats for a
JSON document and the others for any other file (the formats of each group claim disjoint files on
every file the tests read).  Every list of format names — errors, ``--help``, the config schema,
``docs/formats.md`` — is read from ``FORMATS``.  Adding a format = one module here + one line in
``FORMATS`` + tests.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import NoReturn

from bpe.base import Tokenizer, TokenizerError
from bpe.pretrained.formats import hf_json, sentencepiece_model, tekken, tiktoken_ranks, tokbench
from bpe.pretrained.formats.file import HF_FILE, TokenizerFile, read_regular_file

#: the accepted file formats, name -> module, in the order files are tried and formats listed
FORMATS: dict[str, ModuleType] = {
    module.NAME: module for module in (tokbench, hf_json, sentencepiece_model, tiktoken_ranks, tekken)
}

__all__ = [
    "FORMATS",
    "HF_FILE",
    "TokenizerFile",
    "detect_format",
    "format_descriptions",
    "formats_taking",
    "load_file",
    "read_regular_file",
]


def format_descriptions() -> dict[str, str]:
    """Format name -> how messages name its files (``"a tiktoken rank file"``)."""
    return {name: module.DESCRIPTION for name, module in FORMATS.items()}


def formats_taking(option: str) -> tuple[str, ...]:
    """The formats whose ``load`` takes ``option`` (``"pattern"``: ``("tiktoken",)``)."""
    return tuple(name for name, module in FORMATS.items() if option in module.OPTIONS)


def _format_of(file: TokenizerFile) -> str | None:
    for name, module in FORMATS.items():
        if file.is_json == module.JSON and module.sniff(file):
            return name
    return None


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of a tokenizer file or directory, or a TokenizerError saying it has none known."""
    file = TokenizerFile.read(path)
    return _format_of(file) or _unknown(file)


def _unknown(file: TokenizerFile) -> NoReturn:
    kind = "a JSON file" if file.is_json else "a file"
    known = list(format_descriptions().values())
    raise TokenizerError(
        f"{file.path}: {kind} in no known tokenizer format; expected {', '.join(known[:-1])} or {known[-1]} "
        f"(or a directory holding a {HF_FILE})",
        code="unrecognized_file",
        value=file.path,
    )


def load_file(
    path: str | os.PathLike[str], *, format: str | None = None, pattern: str | None = None,
    normalizer: str | None = None,
) -> Tokenizer:
    """Load a tokenizer file of any accepted format (detected, or checked against ``format``).

    ``pattern`` is the pre-tokenizer of a tiktoken rank file (a name or a regex) and ``normalizer``
    its normalizer (``bpe.pipeline.normalizers``, e.g. ``nfc``); the other formats carry their own and refuse
    either.
    """
    if format is not None and format not in FORMATS:
        raise TokenizerError(f"unknown tokenizer format {format!r}; known: {', '.join(FORMATS)}", code="unknown_format",
                             value=format)  # fmt: skip
    file = TokenizerFile.read(path)
    detected = _format_of(file) or _unknown(file)
    module = FORMATS[detected]
    if format is not None and format != detected:
        raise TokenizerError(
            f"{file.path}: expected {FORMATS[format].DESCRIPTION}, but this is {module.DESCRIPTION} "
            f"(format {detected!r})",
            code="format_mismatch",
            value=detected,
        )
    given = {"pattern": pattern, "normalizer": normalizer}
    options = {name: value for name, value in given.items() if value is not None}
    for option in options:
        if option not in module.OPTIONS:
            takers = " or ".join(FORMATS[name].DESCRIPTION for name in formats_taking(option))
            raise TokenizerError(f"{file.path}: a {option} applies to {takers} only, not to {module.DESCRIPTION}",
                                 code="option_not_applicable", value=option)  # fmt: skip
    return module.load(file, **options)
