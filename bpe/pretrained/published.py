"""A published tokenizer by name (``bpe.pretrained.production``) or from a file (``bpe.pretrained.formats``), and the
pretrained rows of an experiment config: a registry name or a path, a relative path looked up in
given folders in order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bpe.base import Tokenizer, TokenizerError
from bpe.pretrained.formats import load_file
from bpe.pretrained.production import PRODUCTION


def load(
    source: str | Path, *, format: str | None = None, pattern: str | None = None, normalizer: str | None = None
) -> Tokenizer:
    """A tokenizer by name (``PRODUCTION``: ``cl100k``, ``mistral-v1``, ``bytes``, ...) or from a file.

    A file's format is detected from its content; ``format`` (a name of ``bpe.pretrained.formats.FORMATS``:
    ``tokbench``, ``hf``, ``sentencepiece``, ``tiktoken``, ``tekken``) makes it an error for the file
    to be anything else.  ``pattern`` is the pre-tokenizer of a tiktoken rank file: ``gpt2``/``r50k``,
    ``cl100k``, ``o200k``, ``qwen`` or a regular expression, and ``normalizer`` its normalizer (``nfc``).
    A registry name wins over a file of the same name.
    """
    if isinstance(source, str) and source in PRODUCTION:
        if format is not None or pattern is not None or normalizer is not None:
            raise TokenizerError(f"{source} is a tokenizer name: it takes no format, pattern or normalizer")
        return PRODUCTION[source].load()
    path = Path(source)
    if not path.exists() and isinstance(source, str) and not any(sep in source for sep in "/\\"):
        raise TokenizerError(
            f"{source!r} is neither a file nor a known tokenizer name; known names: {', '.join(PRODUCTION)}"
        )
    return load_file(path, format=format, pattern=pattern, normalizer=normalizer)


@dataclass(frozen=True)
class PretrainedSpec:
    """A pretrained tokenizer as a config row describes it.

    ``source`` is a registry name (``bpe.PRODUCTION``) or a file/directory path; ``format``,
    ``pattern`` and ``normalizer`` as in ``bpe.pretrained.formats.load_file``.
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
    try:
        if spec.source in PRODUCTION and spec.format is None and spec.pattern is None and spec.normalizer is None:
            return load(spec.source)
        return load_file(
            find_file(spec.source, search), format=spec.format, pattern=spec.pattern, normalizer=spec.normalizer
        )
    except TokenizerError as exc:
        raise TokenizerError(f"pretrained tokenizer {spec.label!r}: {exc}") from None
