"""Options of every family, declared once, and validation of saved JSON bodies.

Each trainable family declares its options as one model below (name, type, range, default):
``train`` validates what it is given against it, ``from_dict`` validates a saved tokenizer's
``"config"`` against it, and ``tokbench train`` / ``tokbench encode`` build their flags from these
declarations.

Two kinds of option: *training* options shape the vocabulary; *encode-time* options (marked
``ENCODE_TIME``: the inference method, sampling and its seed) only change how a trained vocabulary
encodes, so tokenizers that differ only in them share one trained vocabulary
(``FamilyOptions.encode_option_names``, ``Tokenizer.with_encode_options``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import AfterValidator, Field, TypeAdapter, ValidationError, model_validator
from pydantic.fields import FieldInfo
from typing_extensions import Self

from bpe.base import DEFAULT_SPECIAL_TOKENS, TokenizerError
from bpe.models.inference import INFERENCE_METHODS, TIE_BREAKS
from bpe.pipeline.normalizers import NORMALIZERS
from bpe.pipeline.pretokenizers import PRETOKENIZERS
from bpe.validation import (
    NonNegativeInt,
    PositiveInt,
    Problem,
    Table,
    first_problem,
    in_interval,
    table_rule,
    validate,
)

T = TypeVar("T")

_TYPE_NAMES = {int: "an integer", str: "a string", list: "a list", dict: "an object", bool: "true or false"}

#: earlier names of encode modes, still accepted (saved files, configs) and read as the current name
ENCODE_MODE_ALIASES = {"greedy": "longest-prefix"}


class EncodeTime:
    """Marks an option that only changes encoding (``Annotated[..., ENCODE_TIME]``): training ignores it."""

    def __repr__(self) -> str:
        return "ENCODE_TIME"


ENCODE_TIME = EncodeTime()

PreTokenizerName = Annotated[
    Literal[tuple(PRETOKENIZERS)],  # type: ignore[valid-type]
    Field(description="how text is cut into pre-tokens before the family sees it"),
]
NormalizerName = Annotated[
    Literal[tuple(NORMALIZERS)],  # type: ignore[valid-type]
    Field(description="rewrite the text before training and encoding (jamo: Hangul syllables as conjoining jamo)"),
]
MinFrequency = Annotated[
    PositiveInt,
    Field(
        description="minimum count of what the family counts: a word or a character to keep, a pair to merge "
        "(docs/tokenizers.md)"
    ),
]
EndOfWord = Annotated[
    Literal["separate", "attached", "none"],
    Field(description="end-of-word marker </w>: its own symbol, glued to the last character, or none"),
]
LimitAlphabet = Annotated[
    PositiveInt | None, Field(description="keep only the N most frequent characters as base symbols (unset: all)")
]


def encode_mode_option(native: str, *aliases: str) -> Any:
    """The inference methods of a family whose own encoding is ``native`` (``bpe.models.inference``);
    ``aliases`` are earlier names, read as the current one."""
    return Annotated[
        Literal[(native, *INFERENCE_METHODS, *aliases)],  # type: ignore[valid-type]
        AfterValidator(lambda mode: ENCODE_MODE_ALIASES.get(mode, mode)),
        Field(
            description="inference method: the family's own encoding or one over its vocabulary (bpe.models.inference; "
            "greedy: earlier name of longest-prefix)"
        ),
        ENCODE_TIME,
    ]


MergesEncodeMode = encode_mode_option("merges", *ENCODE_MODE_ALIASES)
TieBreak = Annotated[
    Literal[TIE_BREAKS],  # type: ignore[valid-type]
    Field(
        description="fewest-tokens: which of the equally short segmentations (longest-first: longest first token, "
        "then second...; longest-last: longest last token, then the one before..., as Uzan et al.'s code)"
    ),
    ENCODE_TIME,
]
Dropout = Annotated[
    in_interval(0, 1, closed_low=True, closed_high=True),
    Field(description="BPE-dropout: probability of skipping each merge while encoding (0: off)"),
    ENCODE_TIME,
]
SamplingSeed = Annotated[
    NonNegativeInt, Field(description="seed of sampling: the same seed and text give the same tokens"), ENCODE_TIME
]


class FamilyOptions(Table):
    """A family's options.  The fields, in order, are what a saved tokenizer's ``config`` holds
    (sentencepiece families: besides their training record)."""

    #: the largest ``vocab_size`` the family trains at: token ids are 32-bit signed integers in the
    #: compiled merge kernels and in sentencepiece's trainer (a family with a lower limit overrides it)
    max_vocab_size: ClassVar[int] = 2**31 - 1

    @classmethod
    def parse(cls, family: str, options: Mapping[str, Any] | Self) -> Self:
        """Options passed to ``family``'s ``train`` or constructor.  A value of None counts as not
        given, so a caller may pass every option of every family with None for "default".  Options
        already parsed (an instance of this model, as a config or the CLI hands them on) are taken as
        they are: they are validated once, where they enter."""
        if type(options) is cls:
            return options
        given = {name: value for name, value in options.items() if value is not None}
        unknown = sorted(set(given) - set(cls.model_fields))
        if unknown:
            takes = ", ".join(cls.model_fields) or "none"
            raise TokenizerError(f"{family} does not take option(s): {', '.join(unknown)} (it takes: {takes})",
                                 code="unknown_option", value=unknown[0])  # fmt: skip
        return validate(cls, given, _option_error)

    @classmethod
    def read_saved(cls, config: Mapping[str, Any]) -> Self:
        """The ``"config"`` object of a saved tokenizer file.  An option missing from it (a file
        saved before the option existed) takes its default; an unknown key is an error."""
        return validate(cls, config, _saved_error)

    def replaced(self, family: str, **changes: Any) -> Self:
        """A copy with ``changes`` applied, validated like ``parse``."""
        return type(self).parse(family, {**self.model_dump(), **changes})

    # -- training vs encode-time options ---------------------------------
    @classmethod
    def encode_option_names(cls) -> tuple[str, ...]:
        """The options that only change encoding, in declaration order."""
        return tuple(name for name, field in cls.model_fields.items() if ENCODE_TIME in field.metadata)

    def encode_options(self) -> dict[str, Any]:
        return self.model_dump(include=set(self.encode_option_names()))

    def training_options(self) -> dict[str, Any]:
        return self.model_dump(exclude=set(self.encode_option_names()))

    def with_encode_options(self, family: str, changes: Mapping[str, Any]) -> Self:
        """A copy with other encode-time options (None keeps the current value); changing a
        training option is an error (it needs a new vocabulary)."""
        given = {name: value for name, value in changes.items() if value is not None}
        names = self.encode_option_names()
        refused = sorted(set(given) - set(names))
        if refused:
            takes = ", ".join(names) or "none"
            raise TokenizerError(f"{family} does not take encode option(s): {', '.join(refused)} (it takes: {takes})",
                                 code="not_encode_option", value=refused[0])  # fmt: skip
        return self.replaced(family, **given)

    @property
    def samples(self) -> bool:
        """True when encoding is stochastic (BPE-dropout, unigram sampling); never by default."""
        return False


class SamplingOptions(FamilyOptions):
    """Options of a family that encodes by its own method (``native_mode``) or an inference method,
    and can sample with its own method."""

    native_mode: ClassVar[str]

    @model_validator(mode="after")
    def _sampling_with_the_native_mode(self) -> Self:
        sampling, mode = self.sampling_option(), getattr(self, "encode_mode")  # noqa: B009 (declared by subclasses)
        if sampling and mode != self.native_mode:
            raise table_rule(
                f"{sampling} applies to encode_mode {self.native_mode!r} only, not {mode!r}", value=sampling
            )
        return self

    @model_validator(mode="after")
    def _tie_break_with_fewest_tokens(self) -> Self:
        tie_break, mode = getattr(self, "tie_break"), getattr(self, "encode_mode")  # noqa: B009 (declared by subclasses)
        if tie_break != TIE_BREAKS[0] and mode != "fewest-tokens":
            raise table_rule(f"tie_break applies to encode_mode 'fewest-tokens' only, not {mode!r}", value="tie_break")
        return self

    def sampling_option(self) -> str | None:
        """The option that makes encoding sample (``dropout`` > 0, ``alpha`` set), or None."""
        values = self.__dict__  # field values (asked on every encode: faster than a failing getattr)
        if values.get("dropout"):
            return "dropout"
        if values.get("alpha") is not None:
            return "alpha"
        return None

    @property
    def samples(self) -> bool:
        return self.sampling_option() is not None


class DeclaredOptions:
    """The encode-time option methods of ``bpe.base.Tokenizer`` for a family with declared options
    (``self.options``); mixed in before ``Tokenizer``."""

    options: FamilyOptions
    family: str

    @property
    def samples(self) -> bool:
        return self.options.samples

    def encode_options(self) -> dict[str, Any]:
        return self.options.encode_options()

    def with_encode_options(self, **options: Any) -> Self:
        """The same vocabulary with other encode-time options (an option not given keeps its value)."""
        clone = self._fresh_copy()
        clone.options = self.options.with_encode_options(self.family, options)
        return clone

    def _fresh_copy(self) -> Self:
        """A shallow copy sharing the vocabulary (a family that caches encodings gives it its own cache)."""
        return copy.copy(self)


def options_by_name(*, encode_time_only: bool = False) -> dict[str, dict[str, FieldInfo]]:
    """Every option name (or only the encode-time ones) -> {family taking it: its declaration}, in
    declaration order."""
    from bpe.families import FAMILIES, family_class  # the families import this module

    table: dict[str, dict[str, FieldInfo]] = {}
    for family in FAMILIES:
        model = family_class(family).options_model
        for name, declaration in model.model_fields.items():
            if not encode_time_only or ENCODE_TIME in declaration.metadata:
                table.setdefault(name, {})[family] = declaration
    return table


_VOCAB_SIZE = TypeAdapter(PositiveInt)


def checked_vocab_size(value: Any, options: type[FamilyOptions] = FamilyOptions) -> int:
    """``value`` as a vocabulary size (an integer from 1 to ``options.max_vocab_size``), or a TokenizerError."""
    try:
        size = _VOCAB_SIZE.validate_python(value)
    except ValidationError as error:
        problem = first_problem(error)
        message = f"vocab_size {problem.message}"
        raise TokenizerError(message, code=problem.kind, value=value, field="vocab_size") from None
    if size > options.max_vocab_size:
        raise TokenizerError(f"vocab_size must be at most {options.max_vocab_size} (token ids are 32-bit), got {size}",
                             code="vocab_above_max", value=size, field="vocab_size")  # fmt: skip
    return size


def _option_error(problem: Problem) -> TokenizerError:
    return TokenizerError(f"{problem.path} {problem.message}" if problem.key else problem.message,
                          code=problem.kind, value=problem.value, field=problem.path)  # fmt: skip


def _saved_error(problem: Problem) -> TokenizerError:
    field = f"config.{problem.path}".rstrip(".")
    return TokenizerError(f'tokenizer file: field "{field}"{" " if problem.key else ": "}{problem.message}',
                          code=problem.kind, value=problem.value, field=field)  # fmt: skip


def special_tokens_with(extra: Iterable[str]) -> tuple[str, ...]:
    """The default specials (``<pad> <unk> <s> </s>`` at ids 0..3) followed by ``extra``."""
    if isinstance(extra, str):
        raise TokenizerError(f"special_tokens must be a list of strings, not the single string {extra!r}",
                             code="bad_special_token", value=extra)  # fmt: skip
    specials = [*DEFAULT_SPECIAL_TOKENS]
    for token in extra:
        if not isinstance(token, str) or not token:
            raise TokenizerError(f"special token {token!r} must be a non-empty string", code="bad_special_token",
                                 value=token)  # fmt: skip
        if token in specials:
            raise TokenizerError(f"special token {token!r} is given twice (the defaults are {DEFAULT_SPECIAL_TOKENS})",
                                 code="duplicate_special_token", value=token)  # fmt: skip
        specials.append(token)
    return tuple(specials)


# -- reading saved bodies ----------------------------------------------------


def body_field(body: Mapping[str, Any], name: str, expected: type[T], where: str = "") -> T:
    """``body[name]`` if present and of type ``expected``; otherwise an error naming the field."""
    label = f"{where}.{name}" if where else name
    if name not in body:
        raise TokenizerError(f'tokenizer file: field "{label}" is missing', code="missing_key", value=name, field=label)
    value = body[name]
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise TokenizerError(f'tokenizer file: field "{label}" must be {_TYPE_NAMES.get(expected, expected.__name__)}',
                             code="wrong_type", value=value, field=label)  # fmt: skip
    return value


def string_list(body: Mapping[str, Any], name: str) -> list[str]:
    values = body_field(body, name, list)
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise TokenizerError(f'tokenizer file: field "{name}[{index}]" must be a string, got {value!r}',
                                 code="wrong_type", value=value, field=f"{name}[{index}]")  # fmt: skip
    return values


def read_common_body(body: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...], list[str]]:
    """The ``config``, ``specials`` and ``vocab`` fields every family saves, checked for consistency."""
    if not isinstance(body, Mapping):
        raise TokenizerError("tokenizer file: the body must be a JSON object", code="wrong_type", value=body)
    config = body_field(body, "config", dict)
    specials = tuple(string_list(body, "specials"))
    if specials[: len(DEFAULT_SPECIAL_TOKENS)] != DEFAULT_SPECIAL_TOKENS or len(set(specials)) != len(specials):
        raise TokenizerError(
            f'tokenizer file: field "specials" must start with {list(DEFAULT_SPECIAL_TOKENS)} and hold no duplicates',
            code="bad_tokenizer_file",
            value=list(specials),
            field="specials",
        )
    vocab = string_list(body, "vocab")
    if tuple(vocab[: len(specials)]) != specials:
        raise TokenizerError('tokenizer file: field "vocab" must start with the special tokens listed in "specials"',
                             code="bad_tokenizer_file", field="vocab")  # fmt: skip
    return config, specials, vocab
