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
            raise TokenizerError(f"{source} is a tokenizer name: it takes no format, pattern or normalizer",
                                 code="option_not_applicable", value=source)  # fmt: skip
        return PRODUCTION[source].load()
    path = Path(source)
    if not path.exists() and isinstance(source, str) and not any(sep in source for sep in "/\\"):
        raise TokenizerError(f"{source!r} is neither a file nor a known tokenizer name; known names: "
                             f"{', '.join(PRODUCTION)} (and, in a data root: {', '.join(PUBLISHED_FILES)})",
                             code="unknown_tokenizer", value=source)  # fmt: skip
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


#: published tokenizer files a data root holds (``tokenizers/``), by name, with what loading each needs: the
#: pattern and normalizer of the encoding they were published with (tiktoken's ``gpt2``/``r50k_base``,
#: ``p50k_base`` and ``o200k_base``; Qwen's ranks with its pattern, NFC first; Llama 2's sentencepiece model).
#: ``cl100k`` and the Mistral files ship with their packages (``PRODUCTION``): no data root needed.
PUBLISHED_FILES: dict[str, PretrainedSpec] = {
    "gpt2": PretrainedSpec("gpt2", "tokenizers/gpt2.tiktoken", "tiktoken", "gpt2"),
    "r50k": PretrainedSpec("r50k", "tokenizers/gpt2.tiktoken", "tiktoken", "gpt2"),
    "p50k": PretrainedSpec("p50k", "tokenizers/p50k_base.tiktoken", "tiktoken", "gpt2"),
    "o200k": PretrainedSpec("o200k", "tokenizers/o200k_base.tiktoken", "tiktoken", "o200k"),
    "qwen": PretrainedSpec("qwen", "tokenizers/qwen.tiktoken", "tiktoken", "qwen", "nfc"),
    "llama2": PretrainedSpec("llama2", "tokenizers/llama2-tokenizer.model", "sentencepiece"),
}


def published_file(spec: PretrainedSpec) -> PretrainedSpec:
    """A row naming a published file (``PUBLISHED_FILES``, with no settings of its own) as the file it names,
    under the row's label; any other row as it is."""
    named = PUBLISHED_FILES.get(spec.source)
    if named is None or (spec.format, spec.pattern, spec.normalizer) != (None, None, None):
        return spec
    return PretrainedSpec(spec.label, named.source, named.format, named.pattern, named.normalizer)


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
    raise TokenizerError(f"{source}: not found; looked in {looked}{names}", code="missing_file", value=source)


def load_pretrained(spec: PretrainedSpec, search: Sequence[tuple[str, Path]] = ()) -> Tokenizer:
    """The tokenizer a config row describes.

    A registry name is loaded by name (with no format or pattern).  Anything else is a path; a
    relative path is looked up in ``search``: e.g. ``[("data root", root), ("config folder", folder)]``.
    Every error names the row's label.
    """
    spec = published_file(spec)
    try:
        if spec.source in PRODUCTION and spec.format is None and spec.pattern is None and spec.normalizer is None:
            return load(spec.source)
        return load_file(
            find_file(spec.source, search), format=spec.format, pattern=spec.pattern, normalizer=spec.normalizer
        )
    except TokenizerError as exc:
        raise TokenizerError(f"pretrained tokenizer {spec.label!r}: {exc}", code=exc.code, value=exc.value,
                             field=exc.field) from None  # fmt: skip
