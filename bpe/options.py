"""Training options of every family, declared once, and validation of saved JSON bodies.

Each trainable family declares its options as one model below (name, type, range, default):
``train`` validates what it is given against it, ``from_dict`` validates a saved tokenizer's
``"config"`` against it, and ``tokbench train`` builds its flags from these declarations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from typing_extensions import Self

from bpe.base import DEFAULT_SPECIAL_TOKENS, TokenizerError
from bpe.pretokenizers import PRETOKENIZERS
from bpe.validation import PositiveInt, Problem, Table, first_problem, in_interval, validate

T = TypeVar("T")

_TYPE_NAMES = {int: "an integer", str: "a string", list: "a list", dict: "an object", bool: "true or false"}

#: sentencepiece's own default: characters covering 99.95% of the text get a piece; the rarest
#: 0.05% are spelled with byte-fallback pieces.
DEFAULT_CHARACTER_COVERAGE = 0.9995

PreTokenizerName = Annotated[
    Literal[tuple(PRETOKENIZERS)],  # type: ignore[valid-type]
    Field(description="how text is cut into pre-tokens before the family sees it"),
]
MinFrequency = Annotated[
    PositiveInt,
    Field(description="minimum count: of a word (word), a character (char), a pair to merge (char-bpe, byte-bpe)"),
]
EncodeMode = Annotated[
    Literal["merges", "greedy"],
    Field(description="apply the merges in learned order, or greedy longest match (an ablation)"),
]
EndOfWord = Annotated[
    Literal["separate", "attached", "none"],
    Field(description="end-of-word marker </w>: its own symbol, glued to the last character, or none"),
]
LimitAlphabet = Annotated[
    PositiveInt | None, Field(description="keep only the N most frequent characters as base symbols (unset: all)")
]
CharacterCoverage = Annotated[
    in_interval(0, 1, closed_high=True),
    Field(description="share of the text whose characters get a piece; the rest use byte-fallback pieces"),
]


class FamilyOptions(Table):
    """A family's training options.  The fields, in order, are what a saved tokenizer's ``config`` holds."""

    @classmethod
    def parse(cls, family: str, options: Mapping[str, Any]) -> Self:
        """Options passed to ``family``'s ``train`` or constructor.  A value of None counts as not
        given, so a caller may pass every option of every family with None for "default"."""
        given = {name: value for name, value in options.items() if value is not None}
        unknown = sorted(set(given) - set(cls.model_fields))
        if unknown:
            takes = ", ".join(cls.model_fields) or "none"
            raise TokenizerError(f"{family} does not take option(s): {', '.join(unknown)} (it takes: {takes})")
        return validate(cls, given, _option_error)

    @classmethod
    def read_saved(cls, config: Mapping[str, Any]) -> Self:
        """The ``"config"`` object of a saved tokenizer file: every option must be present."""
        for name in cls.model_fields:
            if name not in config:
                raise TokenizerError(f'tokenizer file: field "config.{name}" is missing')
        return validate(cls, config, _saved_error)

    def replaced(self, family: str, **changes: Any) -> Self:
        """A copy with ``changes`` applied, validated like ``parse``."""
        return type(self).parse(family, {**self.model_dump(), **changes})


class WordOptions(FamilyOptions):
    pretokenizer: PreTokenizerName = "unicode"
    min_frequency: MinFrequency = 1


class CharOptions(FamilyOptions):
    min_frequency: MinFrequency = 1


class CharBPEOptions(FamilyOptions):
    pretokenizer: PreTokenizerName = "unicode"
    end_of_word: EndOfWord = "separate"
    min_frequency: MinFrequency = 2  # subword-nmt's default: a pair seen once is not merged
    limit_alphabet: LimitAlphabet = None
    encode_mode: EncodeMode = "merges"


class ByteBPEOptions(FamilyOptions):
    pretokenizer: PreTokenizerName = "gpt2"
    min_frequency: MinFrequency = 2
    encode_mode: EncodeMode = "merges"


class SentencePieceOptions(FamilyOptions):
    character_coverage: CharacterCoverage = DEFAULT_CHARACTER_COVERAGE


#: the options model of every trainable family (``bpe.FAMILIES``)
FAMILY_OPTIONS: dict[str, type[FamilyOptions]] = {
    "word": WordOptions,
    "char": CharOptions,
    "char-bpe": CharBPEOptions,
    "byte-bpe": ByteBPEOptions,
    "spm-bpe": SentencePieceOptions,
    "spm-unigram": SentencePieceOptions,
}


def options_by_name() -> dict[str, dict[str, FieldInfo]]:
    """Every option name -> {family taking it: its declaration}, in declaration order."""
    table: dict[str, dict[str, FieldInfo]] = {}
    for family, model in FAMILY_OPTIONS.items():
        for name, declaration in model.model_fields.items():
            table.setdefault(name, {})[family] = declaration
    return table


_VOCAB_SIZE = TypeAdapter(PositiveInt)


def checked_vocab_size(value: Any) -> int:
    """``value`` as a vocabulary size (an integer >= 1), or a TokenizerError."""
    try:
        return _VOCAB_SIZE.validate_python(value)
    except ValidationError as error:
        raise TokenizerError(f"vocab_size {first_problem(error).message}") from None


def _option_error(problem: Problem) -> TokenizerError:
    return TokenizerError(f"{problem.path} {problem.message}" if problem.key else problem.message)


def _saved_error(problem: Problem) -> TokenizerError:
    field = f"config.{problem.path}".rstrip(".")
    return TokenizerError(f'tokenizer file: field "{field}"{" " if problem.key else ": "}{problem.message}')


def special_tokens_with(extra: Iterable[str]) -> tuple[str, ...]:
    """The default specials (``<pad> <unk> <s> </s>`` at ids 0..3) followed by ``extra``."""
    if isinstance(extra, str):
        raise TokenizerError(f"special_tokens must be a list of strings, not the single string {extra!r}")
    specials = [*DEFAULT_SPECIAL_TOKENS]
    for token in extra:
        if not isinstance(token, str) or not token:
            raise TokenizerError(f"special token {token!r} must be a non-empty string")
        if token in specials:
            raise TokenizerError(f"special token {token!r} is given twice (the defaults are {DEFAULT_SPECIAL_TOKENS})")
        specials.append(token)
    return tuple(specials)


# -- reading saved bodies ----------------------------------------------------


def body_field(body: Mapping[str, Any], name: str, expected: type[T], where: str = "") -> T:
    """``body[name]`` if present and of type ``expected``; otherwise an error naming the field."""
    label = f"{where}.{name}" if where else name
    if name not in body:
        raise TokenizerError(f'tokenizer file: field "{label}" is missing')
    value = body[name]
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise TokenizerError(f'tokenizer file: field "{label}" must be {_TYPE_NAMES.get(expected, expected.__name__)}')
    return value


def string_list(body: Mapping[str, Any], name: str) -> list[str]:
    values = body_field(body, name, list)
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise TokenizerError(f'tokenizer file: field "{name}[{index}]" must be a string, got {value!r}')
    return values


def read_common_body(body: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...], list[str]]:
    """The ``config``, ``specials`` and ``vocab`` fields every family saves, checked for consistency."""
    if not isinstance(body, Mapping):
        raise TokenizerError("tokenizer file: the body must be a JSON object")
    config = body_field(body, "config", dict)
    specials = tuple(string_list(body, "specials"))
    if specials[: len(DEFAULT_SPECIAL_TOKENS)] != DEFAULT_SPECIAL_TOKENS or len(set(specials)) != len(specials):
        raise TokenizerError(
            f'tokenizer file: field "specials" must start with {list(DEFAULT_SPECIAL_TOKENS)} and hold no duplicates'
        )
    vocab = string_list(body, "vocab")
    if tuple(vocab[: len(specials)]) != specials:
        raise TokenizerError('tokenizer file: field "vocab" must start with the special tokens listed in "specials"')
    return config, specials, vocab
