"""A family is one class plus one line in ``bpe.FAMILIES``: its facts are declared on the class
(``bpe.base.FAMILY_FACTS``), every family declares every fact, and a family registered at run time is
trained, saved, loaded and used by the CLI with no other table to edit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bpe
from benchmarks.cli import main
from benchmarks.measure import registry
from bpe.base import FAMILY_FACTS, Capability, Tokenizer, TrainableTokenizer
from bpe.models.char import CharTokenizer
from bpe.models.trained import TrainedTokenizer
from bpe.options import CharOptions, FamilyOptions

FACT_TYPES = {
    "capabilities": frozenset,
    "derivable": bool,
    "boundary_baseline": (str, type(None)),
    "row_type": str,
    "native_method": str,
    "trains_on_references": bool,
}


def declared_facts(family: type[Tokenizer]) -> set[str]:
    """The facts some class of ``family``'s hierarchy below ``TrainableTokenizer`` sets (the bases only
    annotate them, or declare ``vocab_floor`` abstract)."""
    bases = (Tokenizer, TrainableTokenizer)
    return {fact for fact in FAMILY_FACTS for cls in family.__mro__ if cls not in bases and fact in vars(cls)}


@pytest.mark.parametrize("kind", list(bpe.FAMILIES))
def test_every_family_declares_every_fact(kind: str) -> None:
    family = bpe.family_class(kind)
    assert family.family == kind
    assert declared_facts(family) == set(FAMILY_FACTS), f"{kind} misses {set(FAMILY_FACTS) - declared_facts(family)}"
    assert issubclass(family.options_model, FamilyOptions)
    for fact, expected in FACT_TYPES.items():
        assert isinstance(getattr(family, fact), expected), (kind, fact)
    assert family.row_type in ("family", "reference")
    assert all(isinstance(capability, Capability) for capability in family.capabilities)


def test_a_family_missing_a_fact_is_found() -> None:
    class Forgetful(TrainedTokenizer):
        family = "forgetful"
        options_model = CharOptions

    assert declared_facts(Forgetful) == {"options_model"}  # the bases declare none of the others


def test_the_benchmark_reads_the_facts_from_the_class() -> None:
    assert registry.capabilities_of("word") == {Capability.WHOLE_PRETOKENS}
    assert registry.capabilities_of("cl100k") == frozenset()
    assert registry.boundary_baseline_of("char") == "splits at every character"
    assert registry.boundary_baseline_of("bytes") == "splits at every byte"
    assert registry.boundary_baseline_of("byte-bpe") is None


class ToyTokenizer(CharTokenizer):
    """A family made in a test: character tokens under another name, with every fact declared."""

    family = "toy"
    options_model = CharOptions
    capabilities = frozenset({Capability.CHARACTER_TOKENS})
    derivable = False
    boundary_baseline = "splits at every character"
    row_type = "family"
    native_method = "characters"
    trains_on_references = False


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(bpe.FAMILIES, "toy", f"{__name__}:ToyTokenizer")


def test_a_family_added_in_one_line_trains_and_encodes_through_the_cli(
    toy_registered: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert declared_facts(ToyTokenizer) == set(FAMILY_FACTS)
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
        capabilities = ", ".join(sorted(capability.name for capability in family.capabilities)) or "-"
        yes_no = {True: "yes", False: "no"}
        assert documented[kind] == [
            target,
            family.options_model.__name__,
            family.row_type,
            yes_no[family.derivable],
            family.native_method,
            capabilities,
            family.boundary_baseline or "-",
            yes_no[family.trains_on_references],
        ], kind
