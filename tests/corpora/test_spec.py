"""Spec validation: the shipped specs are valid, and every kind of bad spec is one clear CorpusError."""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

import pytest

from corpora import CorpusError, list_corpora, load_spec
from corpora.morph import READERS
from corpora.silver import SILVER
from corpora.sources import FILE_READERS, TRANSFORMS
from corpora.spec import FILE_FORMATS, SPEC_DIR, TRANSFORM_NAMES, parse_spec
from tests.errors import UNSET, raises_code

MINIMAL = """
id = "tiny"
language = "tur_Latn"
license = "CC0"
description = "a test corpus"

[[sources]]
kind = "path"
role = "all"
format = "text"
files = "tiny.txt"
"""


TAIL = 'role = "all"\nformat = "text"\nfiles = "tiny.txt"\n'


def tail(role: str, file_format: str, parallel: str) -> str:
    """The last source of MINIMAL with another role and format and a [sources.parallel] table."""
    return f'role = "{role}"\nformat = "{file_format}"\nfiles = "tiny.txt"\n[sources.parallel]\n{parallel}\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_specs_are_valid_and_named_after_their_id():
    specs = list_corpora()
    assert [s.id for s in specs] == sorted(s.id for s in specs)
    expected = {f"{kind}-{lang}" for kind in ("embedded", "ud") for lang in ("tur", "rus", "kor", "eng")}
    expected |= {"fineweb2-tur", "fineweb2-rus", "fineweb2-kor", "fineweb-eng"}  # the GPU-scale language models'
    assert {s.id for s in specs} == expected
    for spec in specs:
        assert spec.path == SPEC_DIR / f"{spec.id}.toml"
        assert spec.license and spec.description and spec.provenance
        for reference in spec.references:  # names must exist in H3b's registries
            assert reference.reader in READERS if reference.reader else reference.analyzer in SILVER


def test_embedded_specs_split_everything_by_hash():
    for lang in ("tur", "rus", "kor", "eng"):
        spec = load_spec(f"embedded-{lang}")
        assert {s.role for s in spec.sources} == {"all"} and {s.kind for s in spec.sources} == {"package"}
        assert spec.test_fraction == 0.1


def test_load_by_id_and_by_path_agree(tmp_path):
    by_id = load_spec("ud-tur")
    assert load_spec(SPEC_DIR / "ud-tur.toml") == by_id
    assert by_id.language_code == "tur" and by_id.script == "Latn" and by_id.short_language == "tr"


def test_minimal_spec_defaults(tmp_path):
    spec = load_spec(write(tmp_path, MINIMAL))
    assert spec.normalization == "NFC" and spec.test_fraction == 0.1
    assert spec.max_documents is None and spec.references == ()
    (source,) = spec.sources
    assert source.files == ("tiny.txt",) and source.transforms == () and source.hub == ()


@pytest.mark.parametrize(
    ("change", "code", "field", "value"),
    [
        (("", 'fromat = "x"\n'), "unknown_key", "", "fromat"),
        (('license = "CC0"\n', ""), "missing_key", "", "license"),
        (('id = "tiny"', "id = 3"), "wrong_type", "id", 3),
        (('id = "tiny"', 'id = "tiny"\ntest_fraction = true'), "wrong_type", "test_fraction", True),
        (('id = "tiny"', 'id = "tiny"\nmax_documents = 0'), "out_of_range", "max_documents", 0),
        (('id = "tiny"', 'id = "tiny"\nmax_chars = true'), "wrong_type", "max_chars", True),
        (('id = "tiny"', 'id = "tiny"\ntest_fraction = 1.5'), "out_of_range", "test_fraction", 1.5),
        (('id = "tiny"', 'id = "tiny"\ntest_fraction = 0'), "out_of_range", "test_fraction", 0),
        (('id = "tiny"', 'id = "tiny"\nnormalization = "NFX"'), "not_allowed", "normalization", "NFX"),
        (('id = "tiny"', 'id = "Tiny!"'), "invalid", "id", "Tiny!"),
        (('id = "tiny"', 'id = "tiny"\npath = "elsewhere.toml"'), "unknown_key", "", "path"),
        (('"tur_Latn"', '"tr_Latn"'), "invalid", "language", "tr_Latn"),
        (('"tur_Latn"', '"xqz_Latn"'), "invalid", "language", "xqz_Latn"),
        (('"tur_Latn"', '"tur_Lant"'), "invalid", "language", "tur_Lant"),
        (('role = "all"', 'role = "dev"'), "not_allowed", "sources[0].role", "dev"),
        (('format = "text"', 'format = "docx"'), "not_allowed", "sources[0].format", "docx"),
        (('role = "all"', 'role = "all"\nindex = 3'), "unknown_key", "sources[0]", "index"),
        (('kind = "path"', 'kind = "package"'), "table_rule", "sources[0]", "package"),
        (('files = "tiny.txt"', 'files = "tiny.txt"\ndataset = "x"'), "table_rule", "sources[0]", "dataset"),
        (
            ('files = "tiny.txt"', 'files = "tiny.txt"\ntransforms = ["strip", "shout"]'),
            "not_allowed",
            "sources[0].transforms[1]",
            "shout",
        ),
        (('files = "tiny.txt"', 'files = "tiny.txt"\ncolumn = "x"'), "table_rule", "sources[0]", "column"),
        (('files = "tiny.txt"', 'files = "tiny.txt"\nwords = false'), "table_rule", "sources[0]", "words"),
        (('files = "tiny.txt"', "files = []"), "too_short", "sources[0].files", []),
        (('files = "tiny.txt"', 'files = ["a.txt", ""]'), "invalid", "sources[0].files", ["a.txt", ""]),
        (('format = "text"', 'format = "conllu"\nwords = "no"'), "wrong_type", "sources[0].words", "no"),
        (("", "[[sources]]\n"), "missing_key", "sources[1]", "kind"),
        ((TAIL, tail("all", "text", 'name = "f"')), "table_rule", "sources[0]", "parallel"),
        ((TAIL, tail("eval", "text", 'name = "f"\nkey = "sent_id"')), "table_rule", "sources[0]", "sent_id"),
        (
            (TAIL, tail("eval", "text", 'name = "f"\nkey = "column"\ncolumn = "id"')),
            "table_rule",
            "sources[0]",
            "column",
        ),
        ((TAIL, tail("eval", "conllu", 'name = "f"')), "table_rule", "sources[0]", "line"),
        ((TAIL, tail("eval", "text", 'name = "f"\nkey = "row"')), "not_allowed", "sources[0].parallel.key", "row"),
        ((TAIL, tail("eval", "text", 'name = "f"\ndev = [997, 1]')), "table_rule", "sources[0].parallel", [997, 1]),
        ((TAIL, tail("eval", "text", 'name = "f"\ndev = 997')), "wrong_type", "sources[0].parallel.dev", 997),
        ((TAIL, tail("eval", "text", 'name = "f"\ncolumn = "id"')), "table_rule", "sources[0].parallel", "column"),
        ((TAIL, tail("eval", "text", 'key = "line"')), "missing_key", "sources[0].parallel", "name"),
        (("", '[[references]]\nname = "x"\n'), "table_rule", "references[0]", "reader"),
        (("", '[[references]]\nname = "x"\nreader = "tikhonov"\n'), "table_rule", "references[0]", "files"),
        (
            ("", '[[references]]\nname = "x"\nanalyzer = "zemberek"\nfiles = "a.txt"\n'),
            "table_rule",
            "references[0]",
            "analyzer",
        ),
        (
            ("", '[[references]]\nname = "x"\nanalyzer = "zemberek"\n[[references]]\nname = "x"\nanalyzer = "a"\n'),
            "invalid",
            "references",
            [{"name": "x", "analyzer": "zemberek"}, {"name": "x", "analyzer": "a"}],
        ),
    ],
)
def test_bad_specs_name_file_field_and_value(tmp_path, change, code, field, value):
    old, new = change
    text = MINIMAL.replace(old, new, 1) if old else MINIMAL + new
    if not old and not new.startswith("[["):
        text = new + MINIMAL  # a top-level key must come before the first table
    path = write(tmp_path, text)
    with raises_code(CorpusError, code, field=field, value=value) as caught:
        load_spec(path)
    assert str(path) in str(caught.value)  # the file is named


@pytest.mark.parametrize(
    ("change", "location"),
    [
        (("", "[[sources]]\n"), "[[sources]] #2: "),
        (
            ('files = "tiny.txt"', 'files = "tiny.txt"\ntransforms = ["strip", "shout"]'),
            "[[sources]] #1: key 'transforms' entry #2 ",
        ),
        ((TAIL, tail("eval", "text", 'name = "f"\nkey = "row"')), "[[sources]] #1 [sources.parallel]: key 'key' "),
        ((TAIL, tail("eval", "text", 'name = "f"\ndev = [997, 1]')), "[[sources]] #1 [sources.parallel]: "),
    ],
)
def test_a_problem_is_located_as_a_toml_reader_counts(tmp_path, change, location):
    """Tables and list entries counted from 1, as the user sees the file."""
    old, new = change
    path = write(tmp_path, MINIMAL.replace(old, new, 1) if old else MINIMAL + new)
    with pytest.raises(CorpusError) as caught:
        load_spec(path)
    assert f"{path}: {location}" in str(caught.value)


def test_one_parallel_source_per_spec(tmp_path):
    source = '[[sources]]\nkind = "path"\n' + tail("eval", "text", 'name = "f"').replace("tiny.txt", "{}")
    path = write(tmp_path, MINIMAL + source.format("a.txt") + source.format("b.txt"))
    with raises_code(CorpusError, "invalid", field="sources") as caught:
        load_spec(path)
    assert "#2" in str(caught.value) and "#3" in str(caught.value)  # the two sources that declare one
    assert load_spec(write(tmp_path, MINIMAL + source.format("a.txt"))).parallel.name == "f"


@pytest.mark.parametrize(
    ("sources", "code", "field"),
    [
        ("tiny.txt", "wrong_type", "sources"),
        ([], "too_short", "sources"),
        (["tiny.txt"], "wrong_type", "sources[0]"),
    ],
)
def test_sources_must_be_a_list_of_tables(sources, code, field):
    data = {"id": "tiny", "language": "tur_Latn", "license": "CC0", "description": "x", "sources": sources}
    with raises_code(CorpusError, code, field=field, value=sources if isinstance(sources, str) else UNSET) as caught:
        parse_spec(data)
    assert str(caught.value).startswith("<spec>: ")  # a spec built in memory is named so


def test_hf_source_is_read_as_its_hub_split(tmp_path):
    text = MINIMAL.replace('kind = "path"', 'kind = "hf"').replace('format = "text"\nfiles = "tiny.txt"\n', "")
    text += 'dataset = "facebook/flores"\nconfig = "tur_Latn"\nsplit = "dev"\ncolumn = "sentence"\n'
    (source,) = load_spec(write(tmp_path, text)).sources
    assert (source.index, source.kind, source.format, source.files, source.column) == (1, "hf", None, (), "sentence")
    assert source.describe() == "source #1 (hub facebook/flores/tur_Latn/dev)"
    assert source.hub[0].column == "sentence" and source.hub[0].revision is None


#: the corpus cache key hangs on these (file contents aside): a change of the spec code must not move them
#: (the ud-* specs declare their FLORES eval source parallel, [sources.parallel], with FLORES+ as its hub alternative)
SHIPPED_LOADING_FIELDS = {
    "embedded-eng": "00cee536d5fb6b78",
    "embedded-kor": "d0a385fd1aefdea5",
    "embedded-rus": "2b4ae7d3effca512",
    "embedded-tur": "2374a03c80ebf643",
    "fineweb-eng": "923fffa5133a2ae6",
    "fineweb2-kor": "217d7deb46c4668f",
    "fineweb2-rus": "2cf05524619cf609",
    "fineweb2-tur": "355ec03815fa0fc8",
    "ud-eng": "fbf8b568f9d0add6",
    "ud-kor": "4be0d887459c0044",
    "ud-rus": "b58149a3771b094c",
    "ud-tur": "a49d7d363b14cc6b",
}


def test_loading_fields_of_the_shipped_specs_are_unchanged():
    for spec in list_corpora():
        blob = json.dumps(spec.loading_fields(), sort_keys=True, default=str).encode()
        assert hashlib.sha256(blob).hexdigest()[:16] == SHIPPED_LOADING_FIELDS[spec.id], spec.id
    numbered = [source.index for source in load_spec("ud-tur").sources]
    assert numbered == list(range(1, len(numbered) + 1))


def test_every_declared_format_and_transform_is_implemented():
    assert set(FILE_READERS) == set(FILE_FORMATS) and set(TRANSFORMS) == set(TRANSFORM_NAMES)


def test_spec_does_not_import_the_readers():
    """No import cycle, not even inside a function: corpora.sources reads specs, corpora.spec declares them."""
    tree = ast.parse((SPEC_DIR / "spec.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {name for name in imported if name.startswith("corpora.") and name != "corpora.errors"}


def test_hub_alternative_keys_are_checked(tmp_path):
    text = MINIMAL + '  [[sources.hub]]\n  dataset = "facebook/flores"\n  splt = "dev"\n'
    with raises_code(CorpusError, "unknown_key", field="sources[0].hub[0]", value="splt"):
        load_spec(write(tmp_path, text))


def test_unknown_corpus_id_lists_the_shipped_ones():
    with raises_code(CorpusError, "unknown_corpus", value="ud-xyz") as caught:
        load_spec("ud-xyz")
    assert all(spec.id in str(caught.value) for spec in list_corpora())  # the shipped ones


def test_unreadable_specs(tmp_path):
    with raises_code(CorpusError, "missing_file", value=tmp_path / "missing.toml"):
        load_spec(tmp_path / "missing.toml")
    with raises_code(CorpusError, "not_toml", value=tmp_path / "tiny.toml"):
        load_spec(write(tmp_path, "id = "))
