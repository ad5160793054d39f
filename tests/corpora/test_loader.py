"""Loading real corpora: embedded package text, the paper corpora from a data root (the full one when
present, else the shipped sample), hub fallback, split, cache, bad input."""

from __future__ import annotations

import unicodedata
import warnings
from pathlib import Path

import pytest

from corpora import CorpusError, CorpusWarning, load_corpus, load_spec
from corpora.loader import split_role
from corpora.spec import parse_spec
from tests.conftest import DATA_ROOT, by_data, read_flores
from tests.errors import raises_code

FLORES = ("eng_Latn", "tur_Latn", "rus_Cyrl", "kor_Hang")
#: measured sizes of the embedded defaults (documents, characters over train + test)
EMBEDDED_SIZES = {
    "embedded-tur": (4_851, 432_835),
    "embedded-kor": (2_480, 57_587),
    "embedded-eng": (300, 359_783),
    "embedded-rus": (9_302, 1_554_447),
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("corpus-cache")


@pytest.fixture(autouse=True)
def no_env_data_root(monkeypatch):
    monkeypatch.delenv("TOKBENCH_DATA", raising=False)


def spec_for(tmp_path: Path, body: str, language: str = "tur_Latn", extra: str = ""):
    text = f'id = "t"\nlanguage = "{language}"\nlicense = "CC0"\ndescription = "test"\n{extra}\n{body}'
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    return load_spec(path)


TEXT_SOURCE = '[[sources]]\nkind = "path"\nrole = "{role}"\nformat = "text"\nfiles = "{files}"\n'


@pytest.mark.parametrize("corpus_id", sorted(EMBEDDED_SIZES))
def test_embedded_corpora_load_offline_with_a_hash_split(corpus_id, cache):
    corpus = load_corpus(corpus_id, cache_dir=cache)
    assert corpus.roles() == ["train", "test"] and corpus.documents("eval") == []
    train, test = corpus.documents("train"), corpus.documents("test")
    documents = len(train) + len(test)
    characters = sum(len(d.text) for d in train + test)
    assert (documents, characters) == EMBEDDED_SIZES[corpus_id]
    assert 0.07 < len(test) / documents < 0.13  # test_fraction 0.1
    assert all(split_role(d.id, 0.1) == "test" for d in test) and all(split_role(d.id, 0.1) == "train" for d in train)
    assert not {d.id for d in train} & {d.id for d in test}
    assert all(unicodedata.is_normalized("NFC", d.text) and d.text.strip() for d in train + test)


def test_embedded_korean_has_no_carriage_returns_and_russian_snippets_are_joined(cache):
    korean = load_corpus("embedded-kor", cache_dir=cache)
    assert not any("\r" in d.text for d in korean.documents("train"))
    assert korean.documents("train")[0].text == "대한민국헌법"  # constitution.txt line 1, CRLF removed
    russian = load_corpus("embedded-rus", cache_dir=cache).documents("train")
    assert russian[0].text.startswith("тысячелетнего рабства. авторитетные; да,")  # left + " target" + right


def test_second_load_comes_from_the_cache_with_the_same_fingerprint(cache):
    first = load_corpus("embedded-eng", cache_dir=cache)
    second = load_corpus("embedded-eng", cache_dir=cache)
    assert second.cached and second.fingerprint == first.fingerprint
    assert second.documents("test") == first.documents("test")


#: sentences per train file of each ud-* corpus; the sample data root holds every file of ud-eng, ud-rus
#: and ud-kor (ud-tur also reads UD Turkish-IMST, whose non-commercial license keeps it out of the sample)
SAMPLE_TRAIN = {
    "eng": {"ud/en/en_ewt-ud-dev.conllu": 15},
    "rus": {"ud/ru/ru_gsd-ud-dev.conllu": 15, "ud/ru/ru_taiga-ud-dev.conllu": 15},
    "kor": {"ud/ko/ko_kaist-ud-dev.conllu": 50, "ud/ko/ko_gsd-ud-dev.conllu": 15},
}
FULL_TRAIN = {
    "tur": {
        "ud/tr/tr_imst-ud-train.conllu": 3435,
        "ud/tr/tr_boun-ud-dev.conllu": 979,
        "ud/tr/tr_kenet-ud-dev.conllu": 1646,
    },
    "eng": {"ud/en/en_ewt-ud-dev.conllu": 2001},
    "rus": {"ud/ru/ru_gsd-ud-dev.conllu": 579, "ud/ru/ru_taiga-ud-dev.conllu": 1260},
    "kor": {"ud/ko/ko_kaist-ud-dev.conllu": 2066, "ud/ko/ko_gsd-ud-dev.conllu": 950},
}


@pytest.mark.parametrize(("language", "train_files"), by_data(SAMPLE_TRAIN, FULL_TRAIN).items())
def test_ud_corpora_from_a_data_root(language, train_files, cache):
    corpus = load_corpus(f"ud-{language}", data_dir=DATA_ROOT, cache_dir=cache)
    assert corpus.roles() == ["train", "test", "eval"]
    for role in ("train", "test"):
        assert all(d.words for d in corpus.documents(role)), "UD documents carry gold words"
    train_counts: dict[str, int] = {}
    for document in corpus.documents("train"):
        name = document.id.split(":")[0]
        train_counts[name] = train_counts.get(name, 0) + 1
    assert train_counts == train_files
    test_ids = {d.id.split(":")[0] for d in corpus.documents("test")}
    assert test_ids and all("-ud-test" in name for name in test_ids)
    evaluation = corpus.documents("eval")
    flores = next(code for code in FLORES if code.startswith(language))
    lines = read_flores(DATA_ROOT)[flores]
    assert [d.text for d in evaluation] == [unicodedata.normalize("NFC", line) for line in lines]
    assert [d.id for d in evaluation] == [f"flores/{flores}.txt:{i}" for i in range(1, len(lines) + 1)]
    assert evaluation[0].words is None


def test_data_root_from_the_environment(cache, monkeypatch):
    monkeypatch.setenv("TOKBENCH_DATA", str(DATA_ROOT))
    assert load_corpus("ud-eng", cache_dir=cache).data_dir == DATA_ROOT.resolve()


def test_ud_without_data_root_or_network_says_to_pass_a_data_root(cache, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with raises_code(CorpusError, "unreachable") as caught:  # the hub alternative, without a network
        load_corpus("ud-tur", cache_dir=cache)
    message = str(caught.value)
    assert message.startswith("ud-tur: ") and "--data-dir" in message  # the corpus, and the flag that helps


def test_references_gold_from_data_root_and_silver(tmp_path, cache):
    body = (
        '[[sources]]\nkind = "path"\nrole = "test"\nformat = "conllu"\nfiles = "ud/en/en_ewt-ud-test.conllu"\n'
        '[[references]]\nname = "sigmorphon"\nreader = "sigmorphon2022-word"\n'
        'files = "morph/eng/sigmorphon2022_eng.word.dev.tsv"\n'
        '[[references]]\nname = "lemminflect"\nanalyzer = "lemminflect"\n'
    )
    corpus = load_corpus(spec_for(tmp_path, body, language="eng_Latn"), data_dir=DATA_ROOT, cache_dir=cache)
    references = corpus.references()
    assert set(references) == {"sigmorphon", "lemminflect"}
    assert references["sigmorphon"].kind == "gold" and references["lemminflect"].kind == "silver"
    assert set(references["lemminflect"].analyses) <= set(corpus.word_types())
    assert references["lemminflect"].analyses


def test_gold_references_are_skipped_with_a_warning_without_data_root(tmp_path, cache):
    (tmp_path / "a.txt").write_text("Kitaplar masada.\n", encoding="utf-8")
    spec = spec_for(
        tmp_path,
        TEXT_SOURCE.format(role="test", files=tmp_path / "a.txt")
        + '[[references]]\nname = "mc"\nreader = "morphochallenge2010"\nfiles = "morph/x"\n',
    )
    corpus = load_corpus(spec, cache_dir=cache)
    with pytest.warns(CorpusWarning, match="'mc'"):  # the reference skipped is named
        assert corpus.references() == {}
    assert corpus.word_types() == ["Kitaplar", "masada"]


def test_path_source_falls_back_to_its_hub_alternative_without_a_data_root(tmp_path, cache):
    from tests.corpora.test_sources import local_hub

    hub = local_hub(tmp_path)
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "f.txt").write_text("yerel\n", encoding="utf-8")
    body = TEXT_SOURCE.format(role="eval", files="f.txt") + "".join(
        f'  [[sources.hub]]\n  dataset = "{hub}"\n  config = "tur_Latn"\n  split = "{split}"\n  column = "sentence"\n'
        for split in ("dev", "devtest")
    )
    spec = spec_for(tmp_path, body)
    from_hub = load_corpus(spec, cache_dir=cache).documents("eval")
    assert [d.text for d in from_hub] == ["bir", "iki", "üç"]
    assert from_hub[2].id == f"{hub}/tur_Latn/devtest:1"
    from_root = load_corpus(spec, data_dir=tmp_path / "root", cache_dir=cache).documents("eval")
    assert [(d.id, d.text) for d in from_root] == [("f.txt:1", "yerel")]


PARALLEL = '  [sources.parallel]\n  name = "flores-200"\n  key = "{key}"\n{more}'


def test_parallel_keys_are_line_numbers_running_on_across_hub_splits(tmp_path, cache):
    from tests.corpora.test_sources import local_hub

    hub = local_hub(tmp_path)  # dev: bir, iki; devtest: üç
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "f.txt").write_text("bir\n\niki\nüç\n", encoding="utf-8")  # a blank line keeps its number
    parallel = PARALLEL.format(key="line", more="  dev = [1, 2]\n")
    body = TEXT_SOURCE.format(role="eval", files="f.txt") + parallel + "".join(
        f'  [[sources.hub]]\n  dataset = "{hub}"\n  config = "tur_Latn"\n  split = "{split}"\n  column = "sentence"\n'
        for split in ("dev", "devtest")
    )
    spec = spec_for(tmp_path, body)
    assert spec.parallel is not None and spec.parallel.in_dev("2") and not spec.parallel.in_dev("3")
    from_hub = load_corpus(spec, cache_dir=cache).documents("eval")
    assert [(d.key, d.text) for d in from_hub] == [("1", "bir"), ("2", "iki"), ("3", "üç")]  # devtest row 1 = key 3
    from_root = load_corpus(spec, data_dir=tmp_path / "root", cache_dir=cache)
    assert [(d.key, d.text) for d in from_root.documents("eval")] == [("1", "bir"), ("3", "iki"), ("4", "üç")]
    cached = load_corpus(spec, data_dir=tmp_path / "root", cache_dir=cache)
    assert cached.cached and cached.documents("eval") == from_root.documents("eval")  # the keys survive the cache
    # the keys are not part of the content fingerprint (the tokenizer cache's key), but of the parallel one
    other = spec_for(tmp_path, body.replace("dev = [1, 2]", "dev = [1, 3]"))
    changed = load_corpus(other, data_dir=tmp_path / "root", cache_dir=cache)
    assert changed.fingerprint == from_root.fingerprint
    assert changed.parallel_fingerprint() not in ("", from_root.parallel_fingerprint())


def test_lines_select_a_range_and_first_key_aligns_a_partial_file(tmp_path, cache):
    """One FLORES-style file split by line range (dev to train, devtest to eval, keys as in the full file), and
    a devtest-only file whose first line is key 3: the same keys, with no padding."""
    (tmp_path / "full.txt").write_text("bir\niki\nüç\ndört\n", encoding="utf-8")
    (tmp_path / "devtest.txt").write_text("üç\ndört\n", encoding="utf-8")
    split = (TEXT_SOURCE.format(role="train", files="full.txt") + "lines = [1, 2]\n"
             + TEXT_SOURCE.format(role="eval", files="full.txt") + "lines = [3, 4]\n"
             + PARALLEL.format(key="line", more=""))  # fmt: skip
    corpus = load_corpus(spec_for(tmp_path, split), data_dir=tmp_path, cache_dir=cache)
    assert [d.text for d in corpus.documents("train")] == ["bir", "iki"]
    assert [(d.key, d.text) for d in corpus.documents("eval")] == [("3", "üç"), ("4", "dört")]
    partial = TEXT_SOURCE.format(role="eval", files="devtest.txt") + PARALLEL.format(key="line",
                                                                                     more="  first_key = 3\n")
    documents = load_corpus(spec_for(tmp_path, partial), data_dir=tmp_path, cache_dir=cache).documents("eval")
    assert [(d.key, d.text) for d in documents] == [("3", "üç"), ("4", "dört")]
    with raises_code(CorpusError, "table_rule", field="sources[0]", value=[4, 3]):
        spec_for(tmp_path, TEXT_SOURCE.format(role="eval", files="full.txt") + "lines = [4, 3]\n")
    with raises_code(CorpusError, "table_rule", field="sources[0].parallel", value="first_key"):
        spec_for(tmp_path, TEXT_SOURCE.format(role="eval", files="full.txt").replace('"text"', '"jsonl"')
                 + PARALLEL.format(key="column", more='  column = "id"\n  first_key = 3\n'))  # fmt: skip


def test_parallel_keys_from_sent_ids_and_key_columns(tmp_path, cache):
    (tmp_path / "p.conllu").write_text(
        "# sent_id = n02\n# text = iki\n1\tiki\t_\t_\t_\t_\t0\troot\t_\t_\n\n"
        "# sent_id = n01\n# text = bir\n1\tbir\t_\t_\t_\t_\t0\troot\t_\t_\n\n",
        encoding="utf-8",
    )
    conllu = '[[sources]]\nkind = "path"\nrole = "eval"\nformat = "conllu"\nfiles = "p.conllu"\n'
    documents = load_corpus(spec_for(tmp_path, conllu + PARALLEL.format(key="sent_id", more="")), data_dir=tmp_path,
                            cache_dir=cache).documents("eval")  # fmt: skip
    assert [(d.key, d.text) for d in documents] == [("n02", "iki"), ("n01", "bir")]
    (tmp_path / "p.jsonl").write_text('{"line": 7, "text": "yedi"}\n{"line": 3, "text": "üç"}\n', encoding="utf-8")
    table = '[[sources]]\nkind = "path"\nrole = "eval"\nformat = "jsonl"\nfiles = "p.jsonl"\n'
    spec = spec_for(tmp_path, table + PARALLEL.format(key="column", more='  column = "line"\n  dev = [1, 5]\n'))
    documents = load_corpus(spec, data_dir=tmp_path, cache_dir=cache).documents("eval")
    keyed = [(d.key, d.text, spec.parallel.in_dev(d.key)) for d in documents]
    assert keyed == [("7", "yedi", False), ("3", "üç", True)]


def test_bad_parallel_keys_are_errors(tmp_path, cache):
    (tmp_path / "p.conllu").write_text("# text = bir\n1\tbir\t_\t_\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    conllu = '[[sources]]\nkind = "path"\nrole = "eval"\nformat = "conllu"\nfiles = "p.conllu"\n'
    with raises_code(CorpusError, "missing_parallel_key", value="sent_id") as caught:
        load_corpus(spec_for(tmp_path, conllu + PARALLEL.format(key="sent_id", more="")), data_dir=tmp_path,
                    cache_dir=cache)  # fmt: skip
    assert "p.conllu:1" in str(caught.value)  # the file and sentence
    (tmp_path / "p.jsonl").write_text('{"id": "a", "text": "bir"}\n{"id": "a", "text": "iki"}\n', encoding="utf-8")
    table = '[[sources]]\nkind = "path"\nrole = "eval"\nformat = "jsonl"\nfiles = "p.jsonl"\n'
    with raises_code(CorpusError, "duplicate_parallel_key", value="a") as caught:
        load_corpus(spec_for(tmp_path, table + PARALLEL.format(key="column", more='  column = "id"\n')),
                    data_dir=tmp_path, cache_dir=cache)  # fmt: skip
    assert "p.jsonl:2" in str(caught.value)  # where the second one is
    with raises_code(CorpusError, "bad_parallel_key", value="a"):
        load_corpus(spec_for(tmp_path, table + PARALLEL.format(key="column", more='  column = "id"\n  dev = [1, 2]\n')),
                    data_dir=tmp_path, cache_dir=cache)  # fmt: skip


def test_changed_source_is_detected_and_reloaded(tmp_path, cache):
    text = tmp_path / "a.txt"
    text.write_text("bir\niki\n", encoding="utf-8")
    spec = spec_for(tmp_path, TEXT_SOURCE.format(role="train", files="a.txt"))
    first = load_corpus(spec, data_dir=tmp_path, cache_dir=cache)
    assert load_corpus(spec, data_dir=tmp_path, cache_dir=cache).cached
    text.write_text("bir\nüç\n", encoding="utf-8")
    changed = load_corpus(spec, data_dir=tmp_path, cache_dir=cache)
    assert not changed.cached and changed.fingerprint != first.fingerprint
    assert [d.text for d in changed.documents("train")] == ["bir", "üç"]


def test_normalization_nfc_by_default_and_none_on_request(tmp_path, cache):
    (tmp_path / "a.txt").write_text(unicodedata.normalize("NFD", "çığ\n"), encoding="utf-8")
    body = TEXT_SOURCE.format(role="train", files="a.txt")
    assert load_corpus(spec_for(tmp_path, body), data_dir=tmp_path, cache_dir=cache).documents("train")[0].text == "çığ"
    raw = load_corpus(spec_for(tmp_path, body, extra='normalization = "none"'), data_dir=tmp_path, cache_dir=cache)
    assert raw.documents("train")[0].text == unicodedata.normalize("NFD", "çığ")


def test_size_caps_apply_per_role_in_reading_order(tmp_path, cache):
    (tmp_path / "a.txt").write_text("".join(f"satır {i}\n" for i in range(10)), encoding="utf-8")
    body = TEXT_SOURCE.format(role="train", files="a.txt")
    capped = load_corpus(spec_for(tmp_path, body, extra="max_documents = 3"), data_dir=tmp_path, cache_dir=cache)
    assert [d.text for d in capped.documents("train")] == ["satır 0", "satır 1", "satır 2"]
    by_chars = load_corpus(spec_for(tmp_path, body, extra="max_chars = 15"), data_dir=tmp_path, cache_dir=cache)
    assert [d.text for d in by_chars.documents("train")] == ["satır 0", "satır 1"]  # 7 + 7 <= 15 < 21


def test_invalid_utf8_warns_with_the_count_on_every_load(tmp_path, cache):
    (tmp_path / "a.txt").write_bytes(b"iyi\nk\xf6t\xfc\n")
    spec = spec_for(tmp_path, TEXT_SOURCE.format(role="train", files="a.txt"))
    for _ in range(2):  # built, then from the cache
        with pytest.warns(CorpusWarning, match=r"a\.txt\b.*\b2\b.*\b5\b"):  # the file, the count, the first byte
            corpus = load_corpus(spec, data_dir=tmp_path, cache_dir=cache)
    assert corpus.cached and corpus.documents("train")[1].text == "k\ufffdt\ufffd"


def entries(cache: Path, corpus_id: str = "t") -> list[Path]:
    return sorted(p for p in cache.iterdir() if p.name.startswith((f"{corpus_id}-", f".{corpus_id}-")))


@pytest.mark.parametrize(
    ("content", "code", "value", "where"),
    [
        (b"ok\n\x00\x00\n", "binary_file", "b.txt", "byte 3"),
        (b"a" * (10 * 1024 * 1024) + b"\n", "document_too_long", 10 * 1024 * 1024, "b.txt:1"),
        (b"\n  \n\n", "empty_source", 2, "b.txt"),
    ],
)
def test_bad_input_is_one_clear_error_and_nothing_is_cached(tmp_path, content, code, value, where):
    cache = tmp_path / "cache"
    (tmp_path / "a.txt").write_text("iyi\n", encoding="utf-8")
    (tmp_path / "b.txt").write_bytes(content)
    body = TEXT_SOURCE.format(role="train", files="a.txt") + TEXT_SOURCE.format(role="test", files="b.txt")
    with raises_code(CorpusError, code, value=value) as caught:
        load_corpus(spec_for(tmp_path, body), data_dir=tmp_path, cache_dir=cache)
    assert where in str(caught.value)
    assert not cache.exists() or entries(cache) == []


def test_the_same_file_in_two_roles_is_refused(tmp_path, cache):
    (tmp_path / "a.txt").write_text("iyi\n", encoding="utf-8")
    body = TEXT_SOURCE.format(role="train", files="a.txt") + TEXT_SOURCE.format(role="test", files="*.txt")
    with raises_code(CorpusError, "file_read_twice", value="a.txt"):
        load_corpus(spec_for(tmp_path, body), data_dir=tmp_path, cache_dir=cache)


def test_bad_data_root_and_unknown_role(tmp_path, cache):
    with raises_code(CorpusError, "not_a_directory", value=str(tmp_path / "nope")):
        load_corpus("ud-eng", data_dir=tmp_path / "nope", cache_dir=cache)
    corpus = load_corpus("embedded-eng", cache_dir=cache)
    with raises_code(CorpusError, "unknown_role", value="dev"):
        corpus.documents("dev")


def test_fingerprint_ignores_prose_but_not_loading_fields(tmp_path, cache):
    (tmp_path / "a.txt").write_text("bir iki\n", encoding="utf-8")
    base = {"id": "t", "language": "tur_Latn", "license": "CC0", "description": "x",
            "sources": [{"kind": "path", "role": "train", "format": "text", "files": "a.txt"}]}
    first = load_corpus(parse_spec(base), data_dir=tmp_path, cache_dir=cache)
    reworded = load_corpus(parse_spec({**base, "description": "other"}), data_dir=tmp_path, cache_dir=cache)
    assert reworded.cached and reworded.fingerprint == first.fingerprint
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nfkc = load_corpus(parse_spec({**base, "normalization": "NFKC"}), data_dir=tmp_path, cache_dir=cache)
    assert not nfkc.cached
