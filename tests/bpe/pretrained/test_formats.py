"""The published-format registry (``bpe.pretrained.formats.FORMATS``): each format claims its own files and no
other's, a format added at run time is detected, loaded and named in errors with no other edit, and
``docs/formats.md`` lists exactly the registry's formats."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models, pre_tokenizers

import bpe
from bpe.base import TokenizerError
from bpe.pretrained import formats
from bpe.pretrained.baselines import CodepointTokenizer
from bpe.pretrained.formats import FORMATS, TokenizerFile, detect_format, load_file
from tests.bpe.pretrained.test_pretrained import CL100K_FILE, mistral_file
from tests.errors import raises_code

DOCS = Path(__file__).resolve().parents[3] / "docs" / "formats.md"


@pytest.fixture(scope="module")
def sample_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One file of each format: written by tokbench and by ``tokenizers``, or shipped in pip packages."""
    folder = tmp_path_factory.mktemp("formats")
    bpe.train("char-bpe", ["a b ab abc " * 20], 40).save(folder / "saved.json")
    hf = HFTokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.save(str(folder / "tokenizer.json"))
    return {
        "tokbench": folder / "saved.json",
        "hf": folder / "tokenizer.json",
        "sentencepiece": mistral_file("tokenizer.model.v1"),
        "tiktoken": CL100K_FILE,
        "tekken": mistral_file("tekken_240718.json"),
    }


def test_every_format_claims_its_own_files_only(sample_files: dict[str, Path]) -> None:
    assert set(sample_files) == set(FORMATS)
    for name, path in sample_files.items():
        file = TokenizerFile.read(path)
        # every sniff is asked, not only the format's group: the formats claim disjoint files
        claimed = [other for other, module in FORMATS.items() if module.sniff(file)]
        assert claimed == [name], path
        assert file.is_json == FORMATS[name].JSON
        assert detect_format(path) == name


def test_every_format_module_declares_its_facts() -> None:
    for name, module in FORMATS.items():
        assert name == module.NAME
        assert isinstance(module.DESCRIPTION, str) and module.DESCRIPTION
        assert isinstance(module.RECOGNISED_BY, str) and module.RECOGNISED_BY
        assert isinstance(module.JSON, bool) and isinstance(module.OPTIONS, tuple)
        assert callable(module.sniff) and callable(module.load)
    assert formats.formats_taking("pattern") == ("tiktoken",)


def test_a_format_added_to_the_registry_is_detected_loaded_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One module (here built in the test) and one registry entry: nothing else to edit."""
    toy = types.SimpleNamespace(
        NAME="codepoints",
        DESCRIPTION="a code point list",
        RECOGNISED_BY="first line is #codepoints",
        JSON=False,
        OPTIONS=(),
        sniff=lambda file: file.data.startswith(b"#codepoints\n"),
        load=lambda file, **options: CodepointTokenizer(),
    )
    monkeypatch.setitem(FORMATS, "codepoints", toy)
    path = tmp_path / "toy.txt"
    path.write_bytes(b"#codepoints\n")
    assert detect_format(path) == "codepoints"
    assert bpe.load(path).encode("añ") == [ord("a"), ord("ñ")]
    assert load_file(path, format="codepoints").family == "chars"
    with raises_code(TokenizerError, "format_mismatch", value="tiktoken") as caught:
        load_file(CL100K_FILE, format="codepoints", pattern="cl100k")
    assert "a code point list" in str(caught.value)  # the registered format's description names what was expected
    with raises_code(TokenizerError, "option_not_applicable", value="pattern") as caught:
        load_file(path, pattern="gpt2")
    assert "a tiktoken rank file" in str(caught.value)  # the formats that take one
    other = tmp_path / "other.txt"
    other.write_bytes(b"plain words\n")
    with raises_code(TokenizerError, "unrecognized_file", value=other) as caught:
        bpe.load(other)
    assert "a code point list" in str(caught.value)  # the registered format is among those expected


def test_docs_list_the_registry(sample_files: dict[str, Path]) -> None:
    """The format table of docs/formats.md: the registry's names in its order, with what each sniff
    checks; the config's ``format`` key lists the same names."""
    text = DOCS.read_text(encoding="utf-8")
    table = text.split("| format | file | recognised by |", 1)[1].split("\n\n", 1)[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.strip().splitlines()[1:]]
    assert [row[0] for row in rows] == [f"`{name}`" for name in FORMATS]
    assert [row[-1] for row in rows] == [module.RECOGNISED_BY for module in FORMATS.values()]
    listed = re.search(r"\| `format` \| optional: (.+?); the file must be of that format \|", text)
    assert listed is not None
    assert re.findall(r"`([^`]+)`", listed.group(1)) == list(FORMATS)
    # the results' ``kind`` column of a pretrained file row is its format
    kinds = re.search(r"the format of its file \(([^)]+)\)", text)
    assert kinds is not None and set(re.findall(r"`([^`]+)`", kinds.group(1))) == set(FORMATS)


def test_the_config_documentation_lists_the_registry() -> None:
    import benchmarks.run.config

    assert f"optional: {'|'.join(FORMATS)} (default: detected)" in (benchmarks.run.config.__doc__ or "")
