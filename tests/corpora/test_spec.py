"""Spec validation: the shipped specs are valid, and every kind of bad spec is one clear CorpusError."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpora import CorpusError, list_corpora, load_spec
from corpora.morph import READERS
from corpora.silver import SILVER
from corpora.spec import SPEC_DIR

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


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_specs_are_valid_and_named_after_their_id():
    specs = list_corpora()
    assert [s.id for s in specs] == sorted(s.id for s in specs)
    expected = {f"{kind}-{lang}" for kind in ("embedded", "ud") for lang in ("tur", "rus", "kor", "eng")}
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
        (('id = "tiny"', 'id = "tiny"\nmax_documents = 0'), "'max_documents' must be a positive integer"),
        (('id = "tiny"', 'id = "tiny"\ntest_fraction = 1.5'), "test_fraction must be between 0 and 1"),
        (('id = "tiny"', 'id = "tiny"\nnormalization = "NFX"'), "'normalization' = 'NFX' is not one of: NFC, NFKC"),
        (('"tur_Latn"', '"tr_Latn"'), "must be an ISO 639-3 code"),
        (('"tur_Latn"', '"xqz_Latn"'), "'xqz' is not an ISO 639-3 language code"),
        (('"tur_Latn"', '"tur_Lant"'), "'Lant' is not an ISO 15924 script code"),
        (('role = "all"', 'role = "dev"'), "[[sources]] #1: key 'role' = 'dev' is not one of: train, test, eval, all"),
        (('format = "text"', 'format = "docx"'), "key 'format' = 'docx' is not one of"),
        (('kind = "path"', 'kind = "package"'), "kind = 'package' needs key 'package'"),
        (('files = "tiny.txt"', 'files = "tiny.txt"\ndataset = "x"'), "key 'dataset' does not apply to kind = 'path'"),
        (('files = "tiny.txt"', 'files = "tiny.txt"\ntransforms = ["shout"]'), "unknown transform 'shout'"),
        (('files = "tiny.txt"', 'files = "tiny.txt"\ncolumn = "x"'), "'column'/'words_column' apply to formats"),
        (('files = "tiny.txt"', 'files = "tiny.txt"\nwords = false'), "'words' applies to format 'conllu' only"),
        (('files = "tiny.txt"', "files = []"), "key 'files' must be a non-empty string or a list"),
        (("", '[[references]]\nname = "x"\n'), "give exactly one of 'reader' (gold files) or 'analyzer'"),
        (("", '[[references]]\nname = "x"\nreader = "tikhonov"\n'), "'reader' needs 'files'"),
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
