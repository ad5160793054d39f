"""`tokbench corpora list | show | stats | validate | agreement` through the real entry point."""

from __future__ import annotations

import json
import re

import pytest

from benchmarks.cli import main
from corpora.silver import SILVER
from corpora.silver import agreement as silver_agreement  # the module: it looks up list_corpora
from corpora.spec import parse_spec
from tests.conftest import DATA_ROOT, FULL_DATA_ROOT, REPO_ROOT, SAMPLE_DATA_ROOT, by_data


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TOKBENCH_DATA", raising=False)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def text_table(out: str) -> list[dict[str, str]]:
    """The rows of a plain-text table (header, dashes, rows; columns two or more spaces apart) by header name."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if set(line) <= {"-", " "} and line) - 1
    header = re.split(r"\s{2,}", lines[start].strip())
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line.strip())
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def test_list_shows_every_shipped_corpus(capsys):
    status, out, _ = run(capsys, "corpora", "list")
    assert status == 0
    table = text_table(out)
    assert [row["id"] for row in table] == sorted(
        [f"{k}-{lang}" for k in ("embedded", "ud") for lang in ("eng", "kor", "rus", "tur")]
        + ["fineweb-eng", "fineweb2-kor", "fineweb2-rus", "fineweb2-tur"]
    )
    assert next(row for row in table if row["id"] == "fineweb2-tur")["roles"] == "eval,train"
    eng = next(row for row in table if row["id"] == "ud-eng")
    assert eng["language"] == "eng_Latn" and eng["roles"] == "eval,test,train"


def test_show_lists_sources_hub_alternatives_and_references(capsys):
    status, out, _ = run(capsys, "corpora", "show", "ud-kor")
    assert status == 0
    assert "language:      kor_Hang" in out
    assert "eval  source #5 (flores/kor_Hang.txt) format=text" in out
    assert "without a data root: hub openlanguagedata/flores_plus/kor_Hang/devtest column=text" in out
    assert "ud-korean-lemma      gold, reader ud-korean-lemma: ud/ko/ko_kaist-ud-test.conllu" in out


def test_stats_json_of_an_embedded_corpus(capsys):
    status, out, _ = run(capsys, "corpora", "stats", "embedded-eng", "--json")
    assert status == 0
    stats = json.loads(out)
    assert stats["language"] == "eng_Latn" and set(stats["roles"]) == {"train", "test"}
    train = stats["roles"]["train"]
    assert train["characters"] == train["utf8_bytes"]  # the Lee corpus is ASCII
    assert train["script_share"] == 1.0 and train["words"] > train["word_types"] > 0


def test_stats_reports_reference_coverage(capsys):
    status, out, _ = run(capsys, "corpora", "stats", "ud-eng", "--data-dir", str(DATA_ROOT), "--references", "--json")
    assert status == 0
    references = json.loads(out)["references"]
    sigmorphon = references["sigmorphon2022"]
    assert sigmorphon["kind"] == "gold"
    # underlying-form entries are dropped and counted: about 70% of the file is kept
    assert 0.6 < sigmorphon["share_kept"] < 0.8
    assert sigmorphon["entries_read"] == sigmorphon["entries_kept"] + sum(sigmorphon["dropped"].values())
    status, out, _ = run(capsys, "corpora", "stats", "ud-eng", "--data-dir", str(DATA_ROOT), "--references")
    assert "reference sigmorphon2022 (gold):" in out


def test_stats_table_with_a_data_root(capsys):
    status, out, _ = run(capsys, "corpora", "stats", "ud-eng", "--data-dir", str(DATA_ROOT))
    assert status == 0
    rows = {row["role"]: row for row in text_table(out)}
    documents = {role: row["documents"] for role, row in rows.items()}  # UD EWT dev and test sentences; FLORES lines
    assert documents == by_data({"train": "15", "test": "15", "eval": "100"},
                                {"train": "2,001", "test": "2,077", "eval": "2,009"})  # fmt: skip
    assert re.fullmatch(r"\d{1,3}(,\d{3})+", rows["eval"]["words"])  # thousands separated
    assert rows["eval"]["share Latn"].endswith("%")


def test_validate_a_spec_file_and_report_repairs(capsys, tmp_path):
    (tmp_path / "a.txt").write_bytes(b"Merhaba d\xfcnya\nnas\xc4\xb1ls\xc4\xb1n\n")
    spec = tmp_path / "mine.toml"
    spec.write_text(
        'id = "mine"\nlanguage = "tur_Latn"\nlicense = "CC0"\ndescription = "x"\n'
        f'[[sources]]\nkind = "path"\nrole = "train"\nformat = "text"\nfiles = "{tmp_path / "a.txt"}"\n',
        encoding="utf-8",
    )
    status, out, err = run(capsys, "corpora", "validate", str(spec))
    assert status == 0
    assert "spec 'mine' is valid" in out and "train" in out
    assert "1 bytes are not valid UTF-8 (first at byte 9); replaced by U+FFFD" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("corpora", "show", "nope"), "'nope'"),
        (("corpora", "validate", "missing.toml"), "missing.toml"),
        (("corpora", "stats", "ud-eng", "--data-dir", "/nonexistent/root"), "/nonexistent/root"),
    ],
)
def test_errors_exit_2_with_one_line(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.startswith("tokbench: error: ") and message in err and "Traceback" not in err


def test_validate_rejects_a_bad_spec(capsys, tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('id = "bad"\nlanguage = "xx_Latn"\nlicense = "x"\ndescription = "x"\nsources = []\n')
    status, _, err = run(capsys, "corpora", "validate", str(spec))
    assert status == 2 and all(name in err for name in ("bad.toml", "'language'", "'xx_Latn'"))


def test_agreement_subcommand_is_registered(capsys):
    with pytest.raises(SystemExit) as leaving:
        main(["corpora", "agreement", "--help"])
    assert leaving.value.code == 0 and "silver" in capsys.readouterr().out


# -- agreement of the silver analyzers with the gold references ------------------------------------


def test_agreement_command_prints_table_and_json(monkeypatch, capsys):
    korean = parse_spec(
        {
            "id": "t-kor",
            "language": "kor_Hang",
            "license": "test",
            "description": "test",
            "sources": [{"kind": "path", "role": "test", "format": "text", "files": "flores/kor_Hang.txt"}],
            "references": [
                {"name": "kaist", "reader": "ud-korean-lemma", "files": "ud/ko/ko_kaist-ud-dev.conllu"},
                {"name": "ms-kor", "reader": "morphscore", "files": "morph/kor/morphscore_korean_morph_data.csv"},
            ],
        }
    )
    monkeypatch.setattr(silver_agreement, "list_corpora", lambda: [korean])
    status, out, _ = run(capsys, "corpora", "agreement", "--data-dir", str(DATA_ROOT), "--json")
    assert status == 0
    records = json.loads(out)
    assert records["skipped"] == []
    by_gold = {record["gold"]: record for record in records["agreement"]}
    assert set(by_gold) == {"kaist", "ms-kor"}
    kaist = by_gold["kaist"]
    assert kaist["analyzer"] == "kiwi" and kaist["gold_kind"] == "gold" and kaist["words"] == kaist["gold_words"]
    assert kaist["f1"] == pytest.approx(kaist["tp"] / (kaist["tp"] + 0.5 * (kaist["fp"] + kaist["fn"])), abs=1e-4)
    assert by_gold["ms-kor"]["gold_kind"] == "morphscore" and "unreliable" in by_gold["ms-kor"]["gold_notes"]

    status, out, _ = run(capsys, "corpora", "agreement", "--data-dir", str(DATA_ROOT))
    assert status == 0
    row = next(row for row in text_table(out) if row["gold reference"] == "kaist")
    assert row["analyzer"] == "kiwi" and row["lang"] == "ko" and row["kind"] == "gold"
    assert row["words"] == f"{kaist['words']}/{kaist['gold_words']}"
    assert [row["P"], row["R"], row["F1"]] == [f"{kaist[key]:.3f}" for key in ("precision", "recall", "f1")]
    assert "only their recall is meaningful" in out
    assert "ms-kor (ko): unreliable" in out


def test_agreement_command_without_data_root_exits_2(capsys):
    status, out, err = run(capsys, "corpora", "agreement")
    assert status == 2 and out == ""
    assert "--data-dir" in err and "TOKBENCH_DATA" in err and "Traceback" not in err


@pytest.mark.slow
def test_agreement_command_over_the_shipped_specs(capsys):
    status, out, _ = run(capsys, "corpora", "agreement", "--json", "--data-dir", str(DATA_ROOT))
    assert status == 0
    records = json.loads(out)["agreement"]  # stdout holds the JSON only
    assert {record["analyzer"] for record in records} == set(SILVER)
    f1 = {(r["analyzer"], r["gold"]): r["f1"] for r in records if r["gold_kind"] == "gold"}
    assert f1[("kiwi", "ud-korean-lemma")] > 0.92  # data README: ~0.94 (the sample's Kaist excerpt too)
    if FULL_DATA_ROOT is not None:  # a figure of the whole Morpho Challenge file (the sample has 4 entries)
        assert f1[("zemberek", "morphochallenge2010")] > 0.90


UNSEEN = REPO_ROOT / "tests" / "fixtures" / "unseen-language" / "flores" / "bak_Cyrl.txt"


def test_a_language_with_flores_alone_is_added_in_two_commands_and_gets_parity(tmp_path, capsys):
    """Bashkir, which no other test reads: FLORES-shaped files (the 100 fixture lines repeated to 2,009 lines,
    each ending in its line number so no line repeats, and English's likewise, so line i of both is one
    sentence), `corpora new` without a treebank, then a run whose report has compression and parity against
    English on FLORES devtest, paired by line with no padding."""
    import pandas as pd

    root = tmp_path / "data"
    (root / "flores").mkdir(parents=True)
    for code, source in (("bak_Cyrl", UNSEEN), ("eng_Latn", SAMPLE_DATA_ROOT / "flores" / "eng_Latn.txt")):
        lines = source.read_text(encoding="utf-8").splitlines()
        numbered = [f"{line} {number}" for number, line in enumerate((lines * 21)[:2009], start=1)]
        (root / "flores" / f"{code}.txt").write_text("\n".join(numbered) + "\n", encoding="utf-8")
    for code in ("bak_Cyrl", "eng_Latn"):
        status = run(capsys, "corpora", "new", code, "--data-dir", str(root), "--out", str(tmp_path / f"{code}.toml"))
        assert status[0] == 0
    spec = (tmp_path / "bak_Cyrl.toml").read_text(encoding="utf-8")
    assert 'id = "bak-cyrl"' in spec and "lines = [998, 2009]" in spec and "lines = [1, 997]" in spec
    config = tmp_path / "bak.toml"
    config.write_text('name = "bak"\ncorpora = ["bak_Cyrl.toml", "eng_Latn.toml"]\nproduction = ["bytes"]\n'
                      '[[tokenizers]]\nkind = "byte-bpe"\nvocab_sizes = [300]\n[bootstrap]\nresamples = 20\n'
                      '[report]\nvocab_size = 300\n', encoding="utf-8")  # fmt: skip
    status, _, err = run(capsys, "run", str(config), "--data-dir", str(root), "--out", str(tmp_path / "out"),
                         "--quiet", "--jobs", "1")  # fmt: skip
    assert status == 0, err
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    bak = results[results["corpus"] == "bak-cyrl"].set_index(["tokenizer", "metric"])
    assert bak.loc[("bytes", "parity_vs_eng"), "n"] == 1012  # every devtest sentence paired by its line key
    english, bashkir = ((root / "flores" / f"{code}.txt").read_text(encoding="utf-8").splitlines()[997:]
                        for code in ("eng_Latn", "bak_Cyrl"))  # fmt: skip
    expected = sum(len(line.encode()) for line in bashkir) / sum(len(line.encode()) for line in english)
    assert bak.loc[("bytes", "parity_vs_eng"), "value"] == pytest.approx(expected)
    assert ("byte-bpe", "bytes_per_token") in bak.index
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "bak_Cyrl" in report and "parity" in report.lower()


def test_every_command_finds_the_fetched_data_root(tmp_path, capsys, monkeypatch):
    """No --data-dir, no TOKBENCH_DATA: the data root `tokbench data fetch` filled in the cache is the one
    `corpora stats` reads (as `run` and `reproduce` do), never the hub; --data-dir still comes first."""
    import shutil

    from corpora.sources import data_root, fetched_data_root

    assert data_root(None) is None  # the isolated cache holds no fetched data root
    shutil.copytree(SAMPLE_DATA_ROOT, fetched_data_root())  # holds SOURCES.tsv, as a fetch leaves it
    assert data_root(None) == fetched_data_root().resolve()
    assert data_root(tmp_path) == tmp_path.resolve()
    monkeypatch.setenv("TOKBENCH_DATA", str(SAMPLE_DATA_ROOT))
    assert data_root(None) == SAMPLE_DATA_ROOT.resolve()
    monkeypatch.delenv("TOKBENCH_DATA")
    status, out, err = run(capsys, "corpora", "stats", "ud-eng", "--json")
    assert status == 0, err
    assert json.loads(out)["roles"]["eval"]["documents"] == 100  # the sample's FLORES lines, read from the cache
