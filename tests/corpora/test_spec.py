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
    ("change", "message"),
    [
        (("", 'fromat = "x"\n'), "unknown key 'fromat'; allowed keys: id, language"),
        (('license = "CC0"\n', ""), "missing required key 'license'"),
        (('id = "tiny"', "id = 3"), "key 'id' must be a string, got 3"),
        (('id = "tiny"', 'id = "tiny"\ntest_fraction = true'), "key 'test_fraction' must be a number"),
        (('id = "tiny"', 'id = "tiny"\nmax_documents = 0'), "key 'max_documents' must be an integer >= 1, got 0"),
        (('id = "tiny"', 'id = "tiny"\nmax_chars = true'), "key 'max_chars' must be an integer >= 1, got True"),
        (
            ('id = "tiny"', 'id = "tiny"\ntest_fraction = 1.5'),
            "key 'test_fraction' must be a number in (0, 1), got 1.5",
        ),
        (('id = "tiny"', 'id = "tiny"\ntest_fraction = 0'), "key 'test_fraction' must be a number in (0, 1), got 0"),
        (
            ('id = "tiny"', 'id = "tiny"\nnormalization = "NFX"'),
            "key 'normalization' must be 'NFC', 'NFKC' or 'none', got 'NFX'",
        ),
        (('id = "tiny"', 'id = "Tiny!"'), "key 'id' must be lower-case letters, digits, '.', '_' or '-'"),
        (('id = "tiny"', 'id = "tiny"\npath = "elsewhere.toml"'), "unknown key 'path'; allowed keys: id, language"),
        (('"tur_Latn"', '"tr_Latn"'), "must be an ISO 639-3 code"),
        (('"tur_Latn"', '"xqz_Latn"'), "'xqz' is not an ISO 639-3 language code"),
        (('"tur_Latn"', '"tur_Lant"'), "'Lant' is not an ISO 15924 script code"),
        (
            ('role = "all"', 'role = "dev"'),
            "[[sources]] #1: key 'role' must be 'train', 'test', 'eval' or 'all', got 'dev'",
        ),
        (('format = "text"', 'format = "docx"'), "[[sources]] #1: key 'format' must be 'text', 'conllu', "),
        (('role = "all"', 'role = "all"\nindex = 3'), "[[sources]] #1: unknown key 'index'; allowed keys: kind, role"),
        (('kind = "path"', 'kind = "package"'), "kind = 'package' needs key 'package'"),
        (('files = "tiny.txt"', 'files = "tiny.txt"\ndataset = "x"'), "key 'dataset' does not apply to kind = 'path'"),
        (
            ('files = "tiny.txt"', 'files = "tiny.txt"\ntransforms = ["strip", "shout"]'),
            "[[sources]] #1: key 'transforms' entry #2 must be 'strip', got 'shout'",
        ),
        (('files = "tiny.txt"', 'files = "tiny.txt"\ncolumn = "x"'), "'column'/'words_column' apply to formats"),
        (('files = "tiny.txt"', 'files = "tiny.txt"\nwords = false'), "'words' applies to format 'conllu' only"),
        (('files = "tiny.txt"', "files = []"), "key 'files' must be a non-empty string or a list"),
        (('files = "tiny.txt"', 'files = ["a.txt", ""]'), "key 'files' must be a non-empty string or a list"),
        (('format = "text"', 'format = "conllu"\nwords = "no"'), "key 'words' must be true or false, got 'no'"),
        (("", "[[sources]]\n"), "[[sources]] #2: missing required key 'kind'"),
        ((TAIL, tail("all", "text", 'name = "f"')), "[[sources]] #1: 'parallel' applies to role = 'eval' only"),
        (
            (TAIL, tail("eval", "text", 'name = "f"\nkey = "sent_id"')),
            "[[sources]] #1: parallel key 'sent_id' applies to format 'conllu' only, got 'text'",
        ),
        (
            (TAIL, tail("eval", "text", 'name = "f"\nkey = "column"\ncolumn = "id"')),
            "[[sources]] #1: parallel key 'column' needs a table (formats jsonl, parquet, csv, tsv, or a hub source)",
        ),
        ((TAIL, tail("eval", "conllu", 'name = "f"')), "parallel key 'line' needs numbered lines or rows"),
        (
            (TAIL, tail("eval", "text", 'name = "f"\nkey = "row"')),
            "[[sources]] #1 [sources.parallel]: key 'key' must be 'line', 'sent_id' or 'column', got 'row'",
        ),
        (
            (TAIL, tail("eval", "text", 'name = "f"\ndev = [997, 1]')),
            "[[sources]] #1 [sources.parallel]: 'dev' must be [first, last] with first <= last, got [997, 1]",
        ),
        (
            (TAIL, tail("eval", "text", 'name = "f"\ndev = 997')),
            "key 'dev' must be a list [first, last] of two integers >= 1, got 997",
        ),
        (
            (TAIL, tail("eval", "text", 'name = "f"\ncolumn = "id"')),
            "key = 'column' needs 'column' (the column holding the key), and only it takes one",
        ),
        ((TAIL, tail("eval", "text", 'key = "line"')), "#1 [sources.parallel]: missing required key 'name'"),
        (("", '[[references]]\nname = "x"\n'), "give exactly one of 'reader' (gold files) or 'analyzer'"),
        (("", '[[references]]\nname = "x"\nreader = "tikhonov"\n'), "'reader' needs 'files'"),
        (
            ("", '[[references]]\nname = "x"\nanalyzer = "zemberek"\nfiles = "a.txt"\n'),
            "[[references]] #1: 'files' does not apply to an 'analyzer' reference",
        ),
        (
            ("", '[[references]]\nname = "x"\nanalyzer = "zemberek"\n[[references]]\nname = "x"\nanalyzer = "a"\n'),
            "key 'references' must have distinct names: 'x' is used twice",
        ),
    ],
)
def test_bad_specs_name_file_table_and_key(tmp_path, change, message):
    old, new = change
    text = MINIMAL.replace(old, new, 1) if old else MINIMAL + new
    if not old and not new.startswith("[["):
        text = new + MINIMAL  # a top-level key must come before the first table
    path = write(tmp_path, text)
    with pytest.raises(CorpusError) as caught:
        load_spec(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_one_parallel_source_per_spec(tmp_path):
    source = '[[sources]]\nkind = "path"\n' + tail("eval", "text", 'name = "f"').replace("tiny.txt", "{}")
    path = write(tmp_path, MINIMAL + source.format("a.txt") + source.format("b.txt"))
    with pytest.raises(CorpusError, match=r"may declare \[sources.parallel\] once, got it in sources #2 and #3"):
        load_spec(path)
    assert load_spec(write(tmp_path, MINIMAL + source.format("a.txt"))).parallel.name == "f"


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        ("tiny.txt", "<spec>: key 'sources' must be a list, got 'tiny.txt'"),
        ([], "<spec>: key 'sources' must hold at least 1 entry, got []"),
        (["tiny.txt"], "<spec>: key 'sources' entry #1 must be a table, got 'tiny.txt'"),
    ],
)
def test_sources_must_be_a_list_of_tables(sources, message):
    data = {"id": "tiny", "language": "tur_Latn", "license": "CC0", "description": "x", "sources": sources}
    with pytest.raises(CorpusError) as caught:
        parse_spec(data)
    assert str(caught.value) == message


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
    with pytest.raises(CorpusError, match=r"\[\[sources.hub\]\] #1: unknown key 'splt'"):
        load_spec(write(tmp_path, text))


def test_unknown_corpus_id_lists_the_shipped_ones():
    with pytest.raises(CorpusError, match=r"unknown corpus 'ud-xyz'; shipped corpora: embedded-eng"):
        load_spec("ud-xyz")


def test_unreadable_specs(tmp_path):
    with pytest.raises(CorpusError, match=r"no such corpus spec file"):
        load_spec(tmp_path / "missing.toml")
    with pytest.raises(CorpusError, match=r"not valid TOML"):
        load_spec(write(tmp_path, "id = "))
