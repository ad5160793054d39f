"""Declared tables and one-line messages for their validation errors (pydantic v2).

Tokenizer options, corpus specs and experiment configs are pydantic models: their fields declare
names, types, ranges and defaults, their validators the rules that join several fields.  A
``pydantic.ValidationError`` lists every problem in pydantic's own words; ``first_problem`` turns
the first one into plain words (where, what was given, what is expected) so that each package can
raise its own one-line error (``TokenizerError``, ``CorpusError``, ``BenchmarkError``).

Field messages start with "must" and end with the value given (``must be a string, got 3``); the
caller puts the key in front.  Table messages (a missing or unknown key, a rule joining several
keys) are whole sentences about the table.  Each problem also has a ``kind`` (one of ``PROBLEM_KINDS``:
the error code the caller's error carries, docs/errors.md) and the offending ``value``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, WrapValidator, model_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from bpe.errors import CodedError

M = TypeVar("M", bound=BaseModel)

#: pydantic error types that say "this key holds the wrong type", and the expected type in words
_TYPE_NAMES = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "tuple_type": "a list",
    "list_type": "a list",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}
_BOUNDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
#: pydantic error type -> the kind of problem (the error code; an unlisted type is "invalid")
_KINDS = {
    "missing": "missing_key",
    "extra_forbidden": "unknown_key",
    "unknown_key": "unknown_key",
    "table_rule": "table_rule",
    "literal_error": "not_allowed",
    "too_short": "too_short",
    **{kind: "wrong_type" for kind in _TYPE_NAMES},
    **{kind: "out_of_range" for kind in _BOUNDS},
}
#: every kind a Problem can have: the codes of the errors raised from a validation problem
PROBLEM_KINDS = frozenset({*_KINDS.values(), "invalid"})


class Table(BaseModel):
    """Base of every declared table: typed strictly (a bool is not a number, a number is not a
    string; an integer is accepted where a float is expected), frozen, and unknown keys are errors
    that list the allowed keys.  TOML arrays arrive as lists, so tuple fields carry
    ``Strict(False)`` for the container only: their items stay strict."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys_only(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = [key for key in data if key not in cls.model_fields]
            if unknown:
                allowed = ", ".join(cls.model_fields)
                raise _error("unknown_key", f"unknown key {unknown[0]!r}; allowed keys: {allowed}", value=unknown[0])
        return data


def expecting(description: str) -> WrapValidator:
    """Annotate a type so that any failure (wrong type or out of range) reads "must be <description>"."""

    def validate(value: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(value)
        except ValidationError as error:
            # the kind of the wrapped failure (wrong type, out of range) stays the problem's kind
            raise _error("expected", description, cause=error.errors()[0]["type"]) from None

    return WrapValidator(validate)


#: a count or a size: an integer >= 1 (strict even outside a Table: a bool or "300" is not an integer)
PositiveInt = Annotated[int, Strict(), Field(ge=1), expecting("an integer >= 1")]
#: a seed or an index: an integer >= 0
NonNegativeInt = Annotated[int, Strict(), Field(ge=0), expecting("an integer >= 0")]
#: a weight or a scale: a number > 0, or >= 0
PositiveNumber = Annotated[float, Strict(), Field(gt=0), expecting("a number > 0")]
NonNegativeNumber = Annotated[float, Strict(), Field(ge=0), expecting("a number >= 0")]


def distinct(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """A list validator (``AfterValidator(distinct)``): no entry given twice."""
    repeated = next((value for value in values if values.count(value) > 1), None)
    if repeated is not None:
        raise ValueError(f"must not repeat an entry: {repeated!r} is given twice")
    return values


def in_interval(low: float, high: float, *, closed_low: bool = False, closed_high: bool = False) -> Any:
    """A number in the open interval (low, high); ``closed_low`` / ``closed_high`` include an end."""
    lower = Field(ge=low) if closed_low else Field(gt=low)
    upper = Field(le=high) if closed_high else Field(lt=high)
    interval = f"{'[' if closed_low else '('}{low}, {high}{']' if closed_high else ')'}"
    return Annotated[float, Strict(), lower, upper, expecting(f"a number in {interval}")]


@dataclass(frozen=True)
class Problem:
    """One validation problem in plain words.

    ``table`` is the path to the table it concerns (``()``: the document itself), ``key`` the key
    inside it followed by list positions (``("vocab_sizes", 1)``; ``()``: the table as a whole),
    ``message`` what is wrong: after the key for a key, a sentence of its own for a table.  ``kind``
    (one of ``PROBLEM_KINDS``) names the kind of problem, ``value`` the offending value: the value
    given, the key's name for a missing or unknown key, what a rule joining several keys refuses."""

    table: tuple[str | int, ...]
    key: tuple[str | int, ...]
    message: str
    kind: str = "invalid"
    value: Any = None

    @property
    def path(self) -> str:
        """Table and key as one path, e.g. ``tokenizers[0].vocab_sizes[1]`` (empty for the document)."""
        return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in (*self.table, *self.key))[1:]


def first_problem(error: ValidationError) -> Problem:
    """The first problem of ``error`` in plain words."""
    return _describe(error.errors(include_url=False)[0])


def _describe(detail: ErrorDetails) -> Problem:
    """One pydantic error detail in plain words."""
    loc, kind, value, context = tuple(detail["loc"]), detail["type"], detail["input"], detail.get("ctx", {})
    code = _KINDS.get(context.get("cause", kind), "invalid")
    if kind == "value_error" and isinstance(context.get("error"), CodedError):
        # a field validator that parses with a package's own checks (a family's options): its code and value
        code, value = context["error"].code, context["error"].value
    if kind == "missing":
        return Problem(loc[:-1], (), f"missing required key {loc[-1]!r}", code, loc[-1])
    if kind == "extra_forbidden":  # only for a model that is not a Table
        return Problem(loc[:-1], (), f"unknown key {loc[-1]!r}", code, loc[-1])
    if kind in ("unknown_key", "table_rule"):
        return Problem(loc, (), context["message"], code, context.get("value"))
    # a key's value: the key is the last name in the location, list positions may follow it
    names = [index for index, part in enumerate(loc) if isinstance(part, str)]
    split = names[-1] if names else len(loc)
    return Problem(loc[:split], loc[split:], _value_message(kind, value, context, detail["msg"]), code, value)


def _value_message(kind: str, value: Any, context: dict[str, Any], fallback: str) -> str:
    if kind == "expected":
        return f"must be {context['message']}, got {value!r}"
    if kind == "literal_error":
        return f"must be {context['expected']}, got {value!r}"
    if kind in _TYPE_NAMES:
        return f"must be {_TYPE_NAMES[kind]}, got {value!r}"
    if kind in _BOUNDS:
        limit = next(iter(context.values()))
        number = "an integer" if isinstance(limit, int) else "a number"
        return f"must be {number} {_BOUNDS[kind]} {limit}, got {value!r}"
    if kind == "too_short":
        least = context["min_length"]
        return f"must hold at least {least} {'entry' if least == 1 else 'entries'}, got {value!r}"
    if kind == "value_error":  # a field validator's ValueError: its text is the message
        return str(context["error"])
    return f"{fallback}, got {value!r}"


def table_rule(message: str, value: Any = None) -> PydanticCustomError:
    """The error a table's own validator raises for a rule joining several keys (``message``: a sentence;
    ``value``: what the rule refuses, named in the message: the key or the value given)."""
    return _error("table_rule", message, value=value)


def _error(kind: str, message: str, **context: Any) -> PydanticCustomError:
    # the text travels in the context: pydantic would read braces in a template as placeholders
    return PydanticCustomError(kind, "{message}", {"message": message, **context})


def validate(model: type[M], data: Any, fail: Callable[[Problem], Exception]) -> M:
    """``model`` validated from ``data``; on the first problem, raise ``fail(problem)``."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise fail(first_problem(error)) from None
