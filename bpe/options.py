"""Validation of training options and of saved JSON bodies, with one clear TokenizerError each."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from bpe.base import DEFAULT_SPECIAL_TOKENS, TokenizerError

T = TypeVar("T")

_TYPE_NAMES = {int: "an integer", str: "a string", list: "a list", dict: "an object", bool: "true or false"}


def require_int(name: str, value: Any, minimum: int) -> int:
    """``value`` as an int >= ``minimum`` (bools are rejected: ``True`` is not a size)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TokenizerError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise TokenizerError(f"{name} must be an integer >= {minimum}, got {value}")
    return value


def require_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise TokenizerError(f"unknown {name} {value!r}; choose one of: {', '.join(choices)}")
    return value


def check_training_options(family: str, vocab_size: Any, min_frequency: Any, unknown: Mapping[str, Any]) -> None:
    """The checks every family's ``train`` starts with (before reading any text)."""
    reject_unknown_options(family, unknown)
    require_int("vocab_size", vocab_size, 1)
    require_int("min_frequency", min_frequency, 1)


def reject_unknown_options(family: str, options: Mapping[str, Any]) -> None:
    """Options a family does not take are an error, except those left unset (None),
    so a caller may pass every option of every family with None for "not given"."""
    unknown = sorted(name for name, value in options.items() if value is not None)
    if unknown:
        raise TokenizerError(f"{family} does not take option(s): {', '.join(unknown)}")


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


def check_vocab_minimum(family: str, vocab_size: int, minimum: int, parts: str, hint: str = "") -> None:
    """Raise when ``vocab_size`` cannot hold the specials and base symbols (``parts`` says which)."""
    if vocab_size < minimum:
        raise TokenizerError(f"vocab_size {vocab_size} is below the minimum {minimum} for {family} ({parts}){hint}")


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
