"""Declared tables: strict types, and each pydantic error kind in plain words (one problem, located, with its
kind: the code of the error raised from it, and the offending value)."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import Field, Strict, ValidationError, field_validator, model_validator

from bpe.validation import PositiveInt, Problem, Table, first_problem, in_interval, table_rule, validate


class Hub(Table):
    dataset: str
    split: str = "train"


class Entry(Table):
    kind: Literal["a", "b"]
    sizes: Annotated[tuple[PositiveInt, ...], Strict(False), Field(min_length=1)] = (1,)
    hubs: Annotated[tuple[Hub, ...], Strict(False)] = ()
    share: in_interval(0, 2) = 0.5
    flag: bool = True
    note: str = ""

    @field_validator("note")
    @classmethod
    def _no_shouting(cls, note: str) -> str:
        if note.isupper():
            raise ValueError(f"must not be upper case, got {note!r}")
        return note

    @model_validator(mode="after")
    def _b_needs_hubs(self) -> Entry:
        if self.kind == "b" and not self.hubs:
            raise table_rule("kind = 'b' needs at least one hub")
        return self


class Document(Table):
    name: str
    entries: Annotated[tuple[Entry, ...], Strict(False)] = ()


def problem(data: dict) -> Problem:
    with pytest.raises(ValidationError) as caught:
        Document.model_validate(data)
    return first_problem(caught.value)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, Problem((), (), "missing required key 'name'", "missing_key", "name")),
        (
            {"name": "x", "colour": 1},
            Problem((), (), "unknown key 'colour'; allowed keys: name, entries", "unknown_key", "colour"),
        ),
        ({"name": 3}, Problem((), ("name",), "must be a string, got 3", "wrong_type", 3)),
        (
            {"name": "x", "entries": {"kind": "a"}},
            Problem((), ("entries",), "must be a list, got {'kind': 'a'}", "wrong_type", {"kind": "a"}),
        ),
        ({"name": "x", "entries": ["a"]}, Problem((), ("entries", 0), "must be a table, got 'a'", "wrong_type", "a")),
        (
            {"name": "x", "entries": [{}]},
            Problem(("entries", 0), (), "missing required key 'kind'", "missing_key", "kind"),
        ),
        (
            {"name": "x", "entries": [{"kind": "c"}]},
            Problem(("entries", 0), ("kind",), "must be 'a' or 'b', got 'c'", "not_allowed", "c"),
        ),
        (
            {"name": "x", "entries": [{"kind": "a"}, {"kind": "a", "sizes": [3, 0]}]},
            Problem(("entries", 1), ("sizes", 1), "must be an integer >= 1, got 0", "out_of_range", 0),
        ),
        (
            {"name": "x", "entries": [{"kind": "a", "sizes": [True]}]},
            Problem(("entries", 0), ("sizes", 0), "must be an integer >= 1, got True", "wrong_type", True),
        ),
        (
            {"name": "x", "entries": [{"kind": "a", "sizes": []}]},
            Problem(("entries", 0), ("sizes",), "must hold at least 1 entry, got []", "too_short", []),
        ),
        (
            {"name": "x", "entries": [{"kind": "a", "share": 2}]},
            Problem(("entries", 0), ("share",), "must be a number in (0, 2), got 2", "out_of_range", 2),
        ),
        (
            {"name": "x", "entries": [{"kind": "a", "share": "half"}]},
            Problem(("entries", 0), ("share",), "must be a number in (0, 2), got 'half'", "wrong_type", "half"),
        ),
        (
            {"name": "x", "entries": [{"kind": "a", "flag": 1}]},
            Problem(("entries", 0), ("flag",), "must be true or false, got 1", "wrong_type", 1),
        ),
        (
            {"name": "x", "entries": [{"kind": "a", "note": "LOUD"}]},
            Problem(("entries", 0), ("note",), "must not be upper case, got 'LOUD'", "invalid", "LOUD"),
        ),
        (
            {"name": "x", "entries": [{"kind": "b"}]},
            Problem(("entries", 0), (), "kind = 'b' needs at least one hub", "table_rule"),
        ),
        (
            {"name": "x", "entries": [{"kind": "b", "hubs": [{"dataset": "d", "splt": "x"}]}]},
            Problem(
                ("entries", 0, "hubs", 0), (), "unknown key 'splt'; allowed keys: dataset, split", "unknown_key", "splt"
            ),
        ),
    ],
)
def test_each_problem_is_located_classified_and_in_plain_words(data: dict, expected: Problem) -> None:
    assert problem(data) == expected


def test_valid_documents_convert_lists_to_tuples_and_integers_to_numbers() -> None:
    document = Document.model_validate(
        {"name": "x", "entries": [{"kind": "b", "hubs": [{"dataset": "d"}], "share": 1}]}
    )
    (entry,) = document.entries
    assert entry.sizes == (1,) and entry.hubs == (Hub(dataset="d"),)
    assert entry.share == 1.0 and isinstance(entry.share, float)


def test_validate_raises_the_callers_error_type() -> None:
    with pytest.raises(KeyError, match="name"):
        validate(Document, {"name": 1}, lambda problem: KeyError(problem.key[0]))
    assert validate(Document, {"name": "x"}, KeyError).name == "x"
