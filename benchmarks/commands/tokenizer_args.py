"""Command-line arguments that name a tokenizer (``--tokenizer``, ``--format``, ``--pattern``) or set a
family option (one flag per option of ``bpe.options``), shared by the commands that load or train one."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic.fields import FieldInfo

import bpe
from benchmarks.data.hub import hub_tokenizer_file, is_hub_source
from benchmarks.errors import BenchmarkError
from bpe.base import Tokenizer
from bpe.pretrained.formats import FORMATS, HF_FILE, format_descriptions
from bpe.pretrained.published import PUBLISHED_FILES, PretrainedSpec, load_pretrained
from bpe.pretrained.tiktoken_bpe import TIKTOKEN_PATTERNS
from corpora.sources import data_root


def _file_kinds() -> str:
    """The accepted tokenizer files, from the format registry, with the options a format needs."""
    kinds = [
        description + "".join(f" (with --{option})" for option in FORMATS[name].OPTIONS)
        for name, description in format_descriptions().items()
    ]
    return f"{', '.join(kinds[:-1])} or {kinds[-1]}, or a directory holding a {HF_FILE}"


TOKENIZER_HELP = textwrap.fill(
    f"TOKENIZER is a tokenizer name ({', '.join(bpe.PRODUCTION)}; from the data root: {', '.join(PUBLISHED_FILES)}; "
    f"`tokbench tokenizers` lists them), a Hugging Face Hub tokenizer (hf:ORG/NAME[@REVISION]: its tokenizer.json "
    f"or tokenizer.model, downloaded into the cache) or a file: {_file_kinds()}; the format is detected from the "
    "file's content (docs/formats.md).",
    width=100,
)


def add_tokenizer_option(parser: argparse.ArgumentParser) -> None:
    """--tokenizer plus the options of files that need them (--format, --pattern)."""
    parser.add_argument("--tokenizer", required=True, metavar="TOKENIZER", help="tokenizer name or file")
    parser.add_argument(
        "--format", choices=list(FORMATS), help="refuse the file unless it is in this format (default: detect)"
    )
    add_pattern_option(parser)


def add_pattern_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pattern",
        metavar="P",
        help=f"pre-tokenizer of a tiktoken rank file: {', '.join(TIKTOKEN_PATTERNS)} or a regular expression",
    )


def load_tokenizer(args: argparse.Namespace) -> Tokenizer:
    return load_by_name(args.tokenizer, format=args.format, pattern=args.pattern)


def load_by_name(source: str | Path, *, format: str | None = None, pattern: str | None = None) -> Tokenizer:
    """``bpe.load``, a published file of the data root by its name (``PUBLISHED_FILES``: ``gpt2``,
    ``o200k``, ...; its pattern and normalizer included), found in the data root as every command finds it
    (``TOKBENCH_DATA``, else the one ``tokbench data fetch`` filled), or a Hub tokenizer
    (``hf:ORG/NAME[@REVISION]``: ``benchmarks.data.hub``)."""
    if is_hub_source(source):
        source = hub_tokenizer_file(str(source))
    elif isinstance(source, str) and source in PUBLISHED_FILES and format is None and pattern is None:
        root = data_root(None)
        if root is None:
            raise BenchmarkError(f"{source} is the data root's {PUBLISHED_FILES[source].source}, and there is no data "
                                 "root: set TOKBENCH_DATA=DIR, or run `tokbench data fetch --only tokenizers`")
        return load_pretrained(PretrainedSpec(source, source), [("data root", root)])
    return bpe.load(source, format=format, pattern=pattern)


def option_flags(names: Iterable[str]) -> str:
    """``--a-b, --c`` for the option names ``a_b, c``."""
    return ", ".join(f"--{name.replace('_', '-')}" for name in names)


def option_flag(families: dict[str, FieldInfo], *, as_saved: bool = False) -> dict[str, Any]:
    """argparse settings of one family option, from its declarations in ``bpe.options``: the value's
    type (or every family's choices), the description(s), and the families taking it with their
    defaults (``as_saved``: the default is the value a saved tokenizer holds, for ``tokbench encode``)."""
    kinds = [_value_type(field) for field in families.values()]
    descriptions = _grouped({family: str(field.description) for family, field in families.items()})
    if len(descriptions) == 1:
        description = next(iter(descriptions))
    else:
        description = "; ".join(f"{', '.join(names)}: {text}" for text, names in descriptions.items())
    if as_saved:
        takers = f"{', '.join(families)}; default: as saved"
    else:
        defaults = _grouped({family: "unset" if field.default is None else str(field.default)
                             for family, field in families.items()})  # fmt: skip
        takers = "; ".join(f"{', '.join(names)}: default {default}" for default, names in defaults.items())
    settings: dict[str, Any] = {"help": f"{description} [{takers}]", "default": None}
    if all(get_origin(kind) is Literal for kind in kinds):
        return {**settings, "choices": list(dict.fromkeys(choice for kind in kinds for choice in get_args(kind)))}
    return {**settings, "type": kinds[0], "metavar": "N" if kinds[0] is int else "X"}


def _value_type(declaration: FieldInfo) -> Any:
    """The type of a declared option's value: a Literal, int, float or str."""
    kind = declaration.annotation
    if type(None) in get_args(kind):  # X | None: the option may be left unset
        kind = next(arg for arg in get_args(kind) if arg is not type(None))
    if get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    return kind


def _grouped(values: dict[str, str]) -> dict[str, list[str]]:
    """family -> value, as value -> the families with it (in order)."""
    grouped: dict[str, list[str]] = {}
    for family, value in values.items():
        grouped.setdefault(value, []).append(family)
    return grouped
