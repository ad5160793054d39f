"""docs/errors.md against the code: its table of error codes is every code the packages raise (each
``code="..."`` literal of ``bpe/``, ``corpora/`` and ``benchmarks/``, each class's ``default_code`` and
each kind of a validation problem, ``bpe.validation.PROBLEM_KINDS``), each once, and nothing more."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from bpe.validation import PROBLEM_KINDS

REPO = Path(__file__).resolve().parents[1]
ERRORS_DOC = REPO / "docs" / "errors.md"
PACKAGES = ("bpe", "corpora", "benchmarks")
CODE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def literal_codes(source: str) -> set[str]:
    """The string literals given as ``code=`` to any call, and assigned to a class's ``default_code``
    (every literal inside the expression: ``code="a" if x else "b"`` gives both)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        expressions = []
        if isinstance(node, ast.Call):
            expressions = [keyword.value for keyword in node.keywords if keyword.arg == "code"]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(target, ast.Name) and target.id == "default_code" for target in targets):
                expressions = [node.value]
        for expression in expressions:
            found |= {part.value for part in ast.walk(expression)
                      if isinstance(part, ast.Constant) and isinstance(part.value, str)}  # fmt: skip
    return found


def used_codes() -> set[str]:
    codes = set(PROBLEM_KINDS)
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            codes |= literal_codes(path.read_text(encoding="utf-8"))
    return codes


def documented_codes(text: str) -> list[str]:
    """The first cell (a code span) of every body row of the doc's code table."""
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    return [re.match(r"\| `([^`]+)`", row)[1] for row in rows]  # type: ignore[index]


def test_the_code_table_is_the_codes_raised() -> None:
    documented = documented_codes(ERRORS_DOC.read_text(encoding="utf-8"))
    used = used_codes()
    assert len(used) > 20  # the walk sees the raise sites
    assert not {code for code in documented if documented.count(code) > 1}, "a code has two rows"
    assert not used - set(documented), f"codes raised without a row in docs/errors.md: {sorted(used - set(documented))}"
    assert not set(documented) - used, f"rows of docs/errors.md no code raises: {sorted(set(documented) - used)}"


def test_codes_are_snake_case() -> None:
    assert not [code for code in used_codes() if not CODE.match(code)]


def test_the_walk_finds_codes_in_calls_conditions_and_defaults() -> None:
    source = 'class E(X):\n    default_code = "e_default"\nraise E("m", code="a" if x else "b", value=1)\nf(code="c")\n'
    assert literal_codes(source) == {"e_default", "a", "b", "c"}
