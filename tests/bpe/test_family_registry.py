"""A family is one module plus one line in ``bpe.FAMILIES``: its options model and its facts
(``bpe.base.FamilyFacts``, written only where they differ from the defaults) are declared on its class,
and a family registered at run time is trained, saved, loaded and used by the CLI with no other table
to edit."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import bpe
from benchmarks.cli import main
from benchmarks.measure import registry
from bpe.base import Capability, FamilyFacts
from bpe.models.char import CharOptions, CharTokenizer
from bpe.models.trained import TrainedTokenizer
from bpe.options import FamilyOptions

FACT_TYPES = {
    "row_type": str,
    "capabilities": frozenset,
    "derivable": bool,
    "boundary_baseline": (str, type(None)),
    "native_method": str,
    "trains_on_references": bool,
    "floor": tuple,
    "training_input": str,
    "variant_of": (str, type(None)),
}


def test_the_fact_types_are_the_declaration() -> None:
    assert [field.name for field in dataclasses.fields(FamilyFacts)] == list(FACT_TYPES)


@pytest.mark.parametrize("kind", list(bpe.FAMILIES))
def test_every_family_declares_its_options_and_facts_on_its_class(kind: str) -> None:
    family = bpe.family_class(kind)
    assert family.family == kind
    assert issubclass(family.options_model, FamilyOptions)
    assert family.options_model.__module__ == family.__module__, "a family's options live in its own module"
    assert isinstance(family.facts, FamilyFacts)
    for fact, expected in FACT_TYPES.items():
        assert isinstance(getattr(family.facts, fact), expected), (kind, fact)
    assert family.facts.row_type in ("family", "reference")
    assert family.facts.variant_of in (None, *bpe.FAMILIES)
    assert all(isinstance(capability, Capability) for capability in family.facts.capabilities)


def test_a_family_that_declares_no_facts_has_the_defaults() -> None:
    class Plain(TrainedTokenizer):
        family = "plain"
        options_model = CharOptions

    assert Plain.facts == FamilyFacts()
    assert Plain.vocab_floor().minimum == len(bpe.base.DEFAULT_SPECIAL_TOKENS) + 1


def test_the_benchmark_reads_the_facts_from_the_class() -> None:
    assert registry.capabilities_of("word") == {Capability.WHOLE_PRETOKENS}
    assert registry.capabilities_of("cl100k") == frozenset()
    assert registry.boundary_baseline_of("char") == "splits at every character"
    assert registry.boundary_baseline_of("bytes") == "splits at every byte"
    assert registry.boundary_baseline_of("byte-bpe") is None


class ToyTokenizer(CharTokenizer):
    """A family made in a test: character tokens under another name, declaring only how its facts
    differ from the defaults."""

    family = "toy"
    facts = FamilyFacts(capabilities=frozenset({Capability.CHARACTER_TOKENS}), native_method="characters")


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(bpe.FAMILIES, "toy", f"{__name__}:ToyTokenizer")


def test_a_family_added_in_one_line_trains_and_encodes_through_the_cli(
    toy_registered: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "train.txt"
    text.write_text("the cat sat\non the mat\n", encoding="utf-8")
    saved = tmp_path / "toy.json"
    assert main(["train", "--kind", "toy", "--vocab-size", "40", "--input", str(text), "--out", str(saved)]) == 0
    assert json.loads(saved.read_text(encoding="utf-8"))["family"] == "toy"
    capsys.readouterr()
    assert main(["encode", "--tokenizer", str(saved), "--input", str(text)]) == 0
    lines = capsys.readouterr().out.splitlines()
    loaded = bpe.load(saved)
    assert isinstance(loaded, ToyTokenizer)
    assert [json.loads(line) for line in lines] == [loaded.encode("the cat sat"), loaded.encode("on the mat")]
    assert loaded.decode(loaded.encode("the mat")) == "the mat"


ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def documented_families() -> dict[str, list[str]]:
    """The rows of the family table of docs/architecture.md, by family, code spans unquoted."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text.split("### The families and their facts", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    cells = [[cell.strip().strip("`") for cell in row.strip("|").split("|")] for row in rows]
    return {row[0]: row[1:] for row in cells}


def test_the_family_table_of_the_docs_is_the_registry() -> None:
    documented = documented_families()
    assert list(documented) == list(bpe.FAMILIES)
    for kind, target in bpe.FAMILIES.items():
        family = bpe.family_class(kind)
        capabilities = ", ".join(sorted(capability.name for capability in family.facts.capabilities)) or "-"
        yes_no = {True: "yes", False: "no"}
        assert documented[kind] == [
            target,
            family.options_model.__name__,
            family.facts.row_type,
            yes_no[family.facts.derivable],
            family.facts.native_method,
            capabilities,
            family.facts.boundary_baseline or "-",
            yes_no[family.facts.trains_on_references],
        ], kind
