"""Silver analyzers (real installed models) and their agreement with the gold references."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from corpora import silver
from corpora.errors import CorpusError
from corpora.morph import CITATIONS, Coverage, MorphReference, read_reference
from corpora.silver import (
    SILVER,
    Prefetch,
    Preloaded,
    agreement,
    analyze,
    gold_references,
    kiwi_boundaries,
    turkish_lower,
)
from corpora.spec import list_corpora, parse_spec
from tests.conftest import DATA_ROOT, by_data

MC = "morph/{0}/morphochallenge2010_goldstd_combined.segmentation.{0}"


def reference(analyses: dict[str, tuple[frozenset[int], ...]], kind: str = "gold") -> MorphReference:
    return MorphReference("ref", "tr", kind, analyses, Coverage(len(analyses), len(analyses), {}), "test")


def spec(corpus_id: str, language: str, references: list[dict]) -> object:
    """A minimal valid corpus spec carrying ``references`` (its text source is never read here)."""
    return parse_spec(
        {
            "id": corpus_id,
            "language": language,
            "license": "test",
            "description": "test",
            "sources": [{"kind": "path", "role": "test", "format": "text", "files": "flores/tur_Latn.txt"}],
            "references": references,
        }
    )


# -- boundary mapping -------------------------------------------------------------------------------


def test_kiwi_fused_morphemes_never_cut_a_syllable() -> None:
    assert kiwi_boundaries([(0, 1), (0, 1), (1, 1)], 2) == {1}  # 했다 = 하 + 었 (fused in 했) + 다
    assert kiwi_boundaries([(0, 2), (2, 1), (2, 3)], 5) == {2}  # 서울입니다 = 서울 + 이 + ㅂ니다 (fused in 입)
    assert kiwi_boundaries([(0, 1), (1, 1), (2, 3)], 5) == {1, 2}  # 먹었습니다: nothing fused
    assert kiwi_boundaries([(0, 1), (2, 1)], 3) is None  # character 1 uncovered


def test_turkish_lower_keeps_offsets() -> None:
    assert turkish_lower("IŞIK") == "ışık"
    assert turkish_lower("İzmir") == "izmir"  # str.lower() would add a combining dot
    assert len(turkish_lower("İİİ")) == 3


# -- each analyzer on real words ------------------------------------------------------------------


def test_zemberek_segments_surface_morphemes() -> None:
    result = analyze("zemberek", ["kitaplarımızdan", "Kitaplarımızdan", "İstanbul'da", "xqzwvk"], "tr")
    assert result.analyses["kitaplarımızdan"] == (frozenset({5, 8, 12}),)  # kitap|lar|ımız|dan
    assert result.analyses["Kitaplarımızdan"] == (frozenset({5, 8, 12}),)  # offsets into the word as given
    assert result.coverage == Coverage(
        4, 2, {"analysis surfaces differ from the word": 1, "no analysis (unknown word)": 1}
    )
    assert result.kind == "silver" and "zemberek-python" in result.source


def test_zemberek_with_its_speedups_analyzes_as_the_library(embedded_text: dict[str, list[str]]) -> None:
    """Two fresh analyzers under the fixed hash seed, the library's own and one with the perceptron weights
    memoized and looked up by ``weight_lookup``, the surface cache read directly and the attribute sets copied
    directly, given the same 600 Turkish words in the same order, choose the same best analysis of every word
    (in a fresh process: the speedups are set on zemberek's classes and modules once this process loads it)."""
    import json
    import re
    import subprocess
    import sys

    words = list(dict.fromkeys(re.findall(r"\w+", " ".join(embedded_text["tur_Latn"][:80]))))[:600]
    assert len(words) == 600
    script = """
import json, sys, warnings
from zemberek import TurkishMorphology
from corpora import silver
words = json.loads(sys.stdin.read())
def best(morphology):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [morphology.analyze_and_disambiguate(word).best_analysis()[0].format_string() for word in words]
library = best(TurkishMorphology.Builder(silver.zemberek_lexicon()).build())
sped_up = TurkishMorphology.Builder(silver.zemberek_lexicon()).build()
silver._memoize_weights(sped_up)
silver._look_up_surfaces_directly()
silver._copy_attribute_sets_directly()
print(json.dumps([library, best(sped_up), sped_up.ambiguity_resolver.decoder.model.get_.cache_info().hits]))
"""
    run = subprocess.run([sys.executable, "-W", "ignore", "-c", script], input=json.dumps(words), text=True,
                         capture_output=True, env={**os.environ, "PYTHONHASHSEED": silver.HASH_SEED}, check=True)
    library, sped_up, hits = json.loads(run.stdout)
    assert sped_up == library
    assert hits > 0


def test_weight_lookup_gives_the_library_weight_of_every_key() -> None:
    """``weight_lookup`` against zemberek's ``LossyIntLookup.get_as_float`` on every feature the disambiguator
    asks for on a few sentences, and on keys of other shapes (empty, non-ASCII, long, outside the BMP)."""
    import random
    import warnings

    import numpy as np

    morphology = silver._zemberek()
    lookup = morphology.ambiguity_resolver.decoder.model.lookup
    asked: list[str] = []
    morphology.ambiguity_resolver.decoder.model.get_ = lambda key: asked.append(key) or 0.0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for word in ("kitaplarımızdan", "görmedilerdi", "evde", "gelecekmişsiniz", "İstanbul'da", "koşuyorum"):
                morphology.analyze_and_disambiguate(word)
    finally:
        silver._memoize_weights(morphology)
    generator, letters = random.Random(7), "abcçdefgğhıijklmnoöprsştuüvyz:+_|0123456789"
    others = ["", "a", "ğüşıöç", "😀x", "x" * 300] + [
        "".join(generator.choice(letters) for _ in range(generator.randint(1, 40))) for _ in range(2000)
    ]
    keys = list(dict.fromkeys(asked + others))
    assert len(asked) > 100
    fast = silver.weight_lookup(lookup)
    expected = [lookup.get_as_float(key) for key in keys]
    found = [fast(key) for key in keys]
    assert all(isinstance(weight, np.float32) for weight in found)
    assert np.array_equal(np.array(found), np.array(expected))
    assert sum(weight != 0 for weight in found) > 50  # keys the model holds, not only misses


def _lexicon_items(lexicon: object) -> list[tuple]:
    """Every item of a zemberek RootLexicon, in order, as plain values (its reference item's too)."""

    def values(item: object) -> tuple:
        return tuple((name, values(value) if name == "reference_item" and value is not None
                      else sorted(map(str, value)) if isinstance(value, set) else value)
                     for name, value in sorted(vars(item).items()))  # fmt: skip

    return [(key, [values(item) for item in items]) for key, items in lexicon.item_map.items()]  # type: ignore[attr-defined]


def test_zemberek_lexicon_reads_as_the_library_reads(tmp_path: Path) -> None:
    """On an excerpt of the packaged lexicon holding every referencing line and the lines they refer to, plus
    a second line of a referenced id (the first one is the reference, as in the library's scan)."""
    import csv
    import importlib.resources

    from zemberek.morphology.lexicon.root_lexicon import DictionaryReader

    packaged = importlib.resources.files("zemberek") / "resources" / "lexicon.csv"
    rows = packaged.read_text(encoding="utf-8").splitlines()
    fields = [row.split("\t") for row in rows]
    referenced = {row[7] for row in fields if row[7] != "null"}
    kept = [row for number, (row, split) in enumerate(zip(rows, fields, strict=True))
            if number < 500 or split[7] != "null" or split[0] in referenced]  # fmt: skip
    target = next(row for row in kept if row.split("\t")[0] in referenced).split("\t")
    kept.append("\t".join([target[0], target[1] + "x", *target[2:]]))
    excerpt = tmp_path / "lexicon.csv"
    excerpt.write_text("\n".join(kept) + "\n", encoding="utf-8")
    assert sum(row.split("\t")[7] != "null" for row in kept) > 1000
    ours = silver.zemberek_lexicon(excerpt)
    assert _lexicon_items(ours) == _lexicon_items(DictionaryReader.load_from_resources(str(excerpt)))
    assert csv.field_size_limit() == 100_000_000  # set as the library sets it
    assert len(ours) == len(kept)


def test_kiwi_segments_with_syllable_boundaries() -> None:
    result = analyze("kiwi", ["했다", "서울입니다", "먹었습니다", "학교에서"], "ko")
    assert result.analyses == {
        "했다": (frozenset({1}),),
        "서울입니다": (frozenset({2}),),
        "먹었습니다": (frozenset({1, 2}),),
        "학교에서": (frozenset({2}),),
    }


def test_pymorphy_splits_stem_and_paradigm_ending() -> None:
    result = analyze("pymorphy", ["столами", "наибольший", "кошки-мышки"], "ru")
    assert result.analyses["столами"] == (frozenset({4}),)  # стол|ами
    assert result.analyses["наибольший"] == (frozenset({3, 8}),)  # paradigm prefix наи, ending ий
    assert result.coverage.dropped == {"no paradigm in the best parse": 1}  # hyphenated compound


def test_lemminflect_splits_inflection_only() -> None:
    result = analyze("lemminflect", ["studies", "walked", "ran", "accents'", "children's", "qwzxvk"], "en")
    assert result.analyses["studies"] == (frozenset({4}),)  # stud|ies (lemma study less its last letter)
    assert result.analyses["walked"] == (frozenset({4}),)
    assert result.analyses["ran"] == (frozenset(),)  # run: vowel change, no boundary
    assert result.analyses["accents'"] == (frozenset({6, 7}),)
    assert result.analyses["children's"] == (frozenset({5, 8}),)
    assert result.coverage.dropped == {"not in the lemma dictionary": 1}


def test_analyze_normalizes_deduplicates_and_is_repeatable() -> None:
    decomposed = unicodedata.normalize("NFD", "görmedilerdi")
    first = analyze("zemberek", [decomposed, "görmedilerdi", "görmedilerdi"], "tr")
    assert list(first.analyses) == ["görmedilerdi"]
    assert first.coverage.total == 1
    assert analyze("zemberek", ["görmedilerdi"], "tr").analyses == first.analyses


def test_prefetch_on_processes_answers_as_analyze(monkeypatch: pytest.MonkeyPatch, embedded_text,
                                                  tmp_path) -> None:  # fmt: skip
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path))  # an empty cache: the analyzers run on the workers
    # analyzers without state between words (zemberek has some: a fresh process may answer a word
    # differently from this test process, which analyzed other words before)
    words = {"kiwi": " ".join(embedded_text["kor_Hang"][:40]).split(),
             "lemminflect": " ".join(embedded_text["eng_Latn"][:10]).split()}  # fmt: skip
    languages = {"kiwi": "ko", "lemminflect": "en"}
    monkeypatch.setattr(silver, "_CACHE", {})
    serial = {name: analyze(name, words[name], languages[name]) for name in words}
    monkeypatch.setattr(silver, "_CACHE", {})
    prefetching = Prefetch(words, processes=2)
    prefetching.wait(["kiwi"])  # one analyzer's words, while the other may still run
    assert set(silver._CACHE["kiwi"]) == set(words["kiwi"])
    prefetching.wait()
    assert prefetching.ready()
    assert sorted(prefetching.seconds) == ["kiwi", "lemminflect"] and all(s > 0 for s in prefetching.seconds.values())
    assert sum(len(answers) for answers in silver._CACHE.values()) >= 300
    monkeypatch.setattr(silver, "_CACHE", {})
    assert Prefetch(words, processes=2).seconds == {}  # every answer from the disk cache: nothing analyzed
    assert {name: analyze(name, words[name], languages[name]) for name in words} == serial
    with pytest.raises(CorpusError, match="unknown silver analyzer 'mecab'"):
        Prefetch({"mecab": ["a"]}, processes=2)


def test_a_preloaded_analyzer_answers_as_one_started_with_its_words(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:  # fmt: skip
    """zemberek loaded on its own worker before its words are known (``Preloaded``) gives the answers a worker
    started with them gives (both fresh, under the fixed hash seed), its seconds count the loading, and a
    preloaded analyzer whose words are all in the disk cache is stopped."""
    words = {"zemberek": ["kitaplarımızdan", "görmedilerdi", "jurnalliyormuş", "evde", "xqzwvk"],
             "kiwi": ["했다", "서울입니다"]}  # fmt: skip
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "plain"))
    monkeypatch.setattr(silver, "_CACHE", {})
    Prefetch(words, processes=2).wait()
    plain = {name: {word: silver._CACHE[name][word] for word in words[name]} for name in words}

    assert Preloaded.slowest(["kiwi", "zemberek", "kiwi"]).analyzer == "zemberek"  # type: ignore[union-attr]
    assert Preloaded.slowest([]) is None
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "preloaded"))
    monkeypatch.setattr(silver, "_CACHE", {})
    preloaded = Preloaded("zemberek")
    pool = preloaded.pool
    prefetching = Prefetch(words, processes=2, preloaded=preloaded)
    assert preloaded.pool is None and pool in prefetching._pools  # handed over: the prefetch stops it
    prefetching.wait()
    assert {name: {word: silver._CACHE[name][word] for word in words[name]} for name in words} == plain
    assert prefetching.seconds["zemberek"] > 1.0  # loading zemberek takes seconds; its words, milliseconds
    assert pool._state == "TERMINATE"  # type: ignore[attr-defined]

    idle = Preloaded("zemberek")
    pool = idle.pool
    assert Prefetch(words, processes=2, preloaded=idle).seconds == {}  # every answer from the disk cache
    assert idle.pool is None and pool._state == "TERMINATE"  # type: ignore[attr-defined]


def _stateful_analyzer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replace zemberek (fork-safe) by a fake whose answers say which process loaded it, which process
    answered and how many words it had seen before: a stateful analyzer whose every answer shows its history."""
    import dataclasses
    import os

    loaded: dict[str, int] = {}

    def segment(words: list[str]) -> list[str]:
        if not loaded:
            loaded.update(loader=os.getpid(), seen=0)
        answers = []
        for word in words:
            answers.append(f"{word}: loaded by {loaded['loader']}, answered by {os.getpid()}, after {loaded['seen']}")
            loaded["seen"] += 1
        return answers

    # its answers depend on nothing but its history: it may run in this process (not on a seeded worker)
    monkeypatch.setitem(SILVER, "zemberek", dataclasses.replace(SILVER["zemberek"], segment=segment,
                                                                hash_order_dependent=False))  # fmt: skip


def test_zemberek_answers_as_under_the_fixed_hash_seed_whatever_this_process_runs_under() -> None:
    """zemberek's answer to a word can change with the interpreter's hash seed (set iteration order): it is
    answered as a process started with ``PYTHONHASHSEED=HASH_SEED`` answers, whatever seed this one has."""
    import subprocess
    import sys

    word = "jurnalliyormuş"
    script = f"from corpora import silver; print(silver._segment_zemberek([{word!r}])[0])"
    runs = {seed: subprocess.Popen([sys.executable, "-W", "ignore", "-c", script], stdout=subprocess.PIPE, text=True,
                                   env={**os.environ, "PYTHONHASHSEED": seed}) for seed in (silver.HASH_SEED, "6")}
    answers = {seed: run.communicate()[0].strip() for seed, run in runs.items()}
    assert answers[silver.HASH_SEED] != answers["6"]  # the dependence this guards against (zemberek-python 0.2.3)
    (seeded,), _ = silver.segment_seeded("zemberek", [[word]])
    assert str(seeded[0]) == answers[silver.HASH_SEED]


def test_a_fork_safe_analyzer_is_loaded_once_and_answers_each_batch_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    _stateful_analyzer(monkeypatch)
    assert SILVER["zemberek"].fork_safe
    (first, later), seconds = silver._timed_segment("zemberek", [["a", "b"], ["c", "d"]])
    me = os.getpid()
    assert first == [f"{word}: loaded by {me}, answered by {me}, after {seen}" for seen, word in enumerate("ab")]
    child = later[0].split("answered by ")[1].split(",")[0]
    assert int(child) != me  # a forked copy, started from the analyzer loaded here but before it answered anything
    assert later == [f"{word}: loaded by {me}, answered by {child}, after {seen}" for seen, word in enumerate("cd")]
    assert seconds >= 0


def test_a_failing_forked_analysis_is_a_corpus_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    def segment(words: list[str]) -> list[str]:
        if words == ["bad"]:
            raise ValueError("no lexicon")
        return ["fine"] * len(words)

    monkeypatch.setitem(SILVER, "zemberek", dataclasses.replace(SILVER["zemberek"], segment=segment))
    with pytest.raises(CorpusError, match="silver analyzer 'zemberek' failed: ValueError: no lexicon"):
        silver._timed_segment("zemberek", [["a"], ["bad"]])


def test_no_forked_copy_outlives_a_failing_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    import os

    def segment(words: list[str]) -> list[str]:
        if words == ["bad"]:
            raise ValueError("no lexicon")
        return ["fine"] * len(words)

    started: list[int] = []
    fork = silver._fork_segment

    def recorded(*args: object) -> tuple[int, int]:
        child = fork(*args)  # type: ignore[arg-type]
        started.append(child[0])
        return child

    monkeypatch.setitem(SILVER, "zemberek", dataclasses.replace(SILVER["zemberek"], segment=segment))
    monkeypatch.setattr(silver, "_fork_segment", recorded)
    with pytest.raises(ValueError, match="no lexicon"):
        silver._timed_segment("zemberek", [["bad"], ["a"], ["b"]])
    assert len(started) == 2
    for pid in started:
        with pytest.raises(ChildProcessError):  # killed and reaped
            os.waitpid(pid, os.WNOHANG)


def test_prefetch_answers_afterwards_words_once_after_the_requests(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """On one process the words asked afterwards are answered by the analyzer that answered the requests (as
    this process would answer them later); a word of both is asked once."""
    import os

    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(silver, "_CACHE", {})
    _stateful_analyzer(monkeypatch)
    prefetching = Prefetch({"zemberek": ["a", "b"]}, processes=1, afterwards={"zemberek": ["b", "c"]})
    me = os.getpid()
    assert silver._CACHE["zemberek"] == {word: f"{word}: loaded by {me}, answered by {me}, after {seen}"
                                         for seen, word in enumerate("abc")}  # fmt: skip
    assert list(prefetching.seconds) == ["zemberek"]


def test_the_coverage_analyzes_nothing_after_a_prefetch_of_its_agreement_words(monkeypatch: pytest.MonkeyPatch,
                                                                                tmp_path) -> None:  # fmt: skip
    """``agreement_words`` are exactly the words the manifest's agreement asks for: prefetched with the corpus
    words, they leave the coverage nothing to analyze."""
    import dataclasses

    from corpora import load_corpus
    from corpora.stats import agreement_words, reference_coverage

    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(silver, "_CACHE", {})
    corpus = load_corpus("ud-eng", data_dir=DATA_ROOT)
    asked = agreement_words([corpus])
    golds = corpus.gold_references()
    assert list(asked) == ["lemminflect"]
    assert asked["lemminflect"] == [*golds["sigmorphon2022"].analyses, *golds["morphochallenge2010"].analyses]
    Prefetch(corpus.silver_words(), processes=1, afterwards=asked)

    def never(_: list[str]) -> list:
        raise AssertionError("analyzed although prefetched")

    monkeypatch.setitem(SILVER, "lemminflect", dataclasses.replace(SILVER["lemminflect"], segment=never))
    coverage = reference_coverage(corpus, agreement=True)
    assert [entry["gold"] for entry in coverage["lemminflect"]["agreement_measured"]] == [
        CITATIONS["sigmorphon2022-word"], CITATIONS["morphochallenge2010"]]


@pytest.mark.parametrize("name", list(SILVER))
def test_analyzers_survive_non_words(name: str) -> None:
    odd = ["", " ", "a b", "...", "123", "'s", "ab-cd", "😀"]
    result = analyze(name, odd, SILVER[name].language)
    assert result.coverage.total == len(odd)
    assert result.coverage.kept + sum(result.coverage.dropped.values()) == len(odd)
    assert result.coverage.dropped["not a word (empty or contains whitespace)"] == 3
    for word, (boundaries,) in result.analyses.items():
        assert all(0 < b < len(word) for b in boundaries)


def test_analyze_rejects_unknown_analyzer_and_wrong_language() -> None:
    with pytest.raises(CorpusError, match=r"unknown silver analyzer 'mecab'.*zemberek"):
        analyze("mecab", ["a"], "ko")
    with pytest.raises(CorpusError, match=r"'kiwi' analyzes language 'ko', not 'tr'"):
        analyze("kiwi", ["a"], "tr")


def test_every_analyzer_reports_its_installed_version() -> None:
    for analyzer in SILVER.values():
        assert analyzer.version() != "not installed", analyzer.distribution


# -- agreement --------------------------------------------------------------------------------------


def test_agreement_counts_the_best_alternative_on_covered_words() -> None:
    gold = reference({"ab": (frozenset({1}),), "abcd": (frozenset({1, 3}), frozenset({2})), "xyz": (frozenset(),)})
    predicted = reference({"ab": (frozenset({1}),), "abcd": (frozenset({2}),)}, kind="silver")
    result = agreement(predicted, gold)
    assert (result.words, result.gold_words) == (2, 3)  # xyz: not segmented by the analyzer, not scored
    assert (result.tp, result.fp, result.fn) == (2, 0, 0)  # abcd matches its second alternative exactly
    assert (result.precision, result.recall, result.f1) == (1.0, 1.0, 1.0)


def test_zemberek_agrees_with_morpho_challenge_turkish(data_root: Path) -> None:
    gold = read_reference("morphochallenge2010", [data_root / MC.format("tur")], "mc-tur", "tr")
    result = agreement(analyze("zemberek", gold.analyses, "tr"), gold)
    assert result.words >= 0.99 * result.gold_words
    assert result.f1 > 0.90  # data README: ~0.90; measured 0.953 with best-matching alternatives


def test_kiwi_agrees_with_kaist_lemmas() -> None:
    gold = read_reference("ud-korean-lemma", [DATA_ROOT / "ud/ko/ko_kaist-ud-dev.conllu"], "kaist", "ko")
    result = agreement(analyze("kiwi", gold.analyses, "ko"), gold)
    assert result.words == result.gold_words
    assert result.f1 > 0.92  # data README: ~0.94


def test_pymorphy_sees_inflection_only(data_root: Path) -> None:
    gold = read_reference("tikhonov", [data_root / "morph/rus/tikhonov_word2morph_rus.valid"], "tikhonov", "ru")
    result = agreement(analyze("pymorphy", gold.analyses, "ru"), gold)
    # one or two boundaries per word against a full segmentation: precise, low recall
    assert result.precision > 0.65 and result.recall < 0.35


# -- gold references from specs, and the command ----------------------------------------------------


def test_gold_references_read_spec_files_once_and_skip_missing() -> None:
    specs = [
        spec("a-tur", "tur_Latn", [{"name": "mc-tur", "reader": "morphochallenge2010", "files": MC.format("tur")}]),
        spec(
            "b-tur",
            "tur_Latn",
            [
                {"name": "mc-again", "reader": "morphochallenge2010", "files": MC.format("tur")},
                {"name": "absent", "reader": "morphscore", "files": "morph/tur/absent.csv"},
                {"name": "silver", "analyzer": "zemberek"},
            ],
        ),
    ]
    golds, skipped = gold_references(DATA_ROOT, specs)
    assert [(g.name, g.language, len(g.analyses)) for g in golds] == [("mc-tur", "tr", by_data(4, 1760))]
    assert len(skipped) == 1 and "'absent'" in skipped[0] and "absent.csv: no such file" in skipped[0]


def test_gold_references_need_a_data_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKBENCH_DATA", raising=False)
    with pytest.raises(CorpusError, match=r"needs a data root.*--data-dir"):
        gold_references(None, [])


# -- the documented agreement figures a run without gold prints ---------------------------------------


@pytest.fixture(scope="module")
def shipped_golds(data_root: Path) -> dict[tuple[str, str], MorphReference]:
    """The gold references the shipped corpus specs score tokenizers against, by (reader name, language)
    (not the ``role = "training"`` ones BPE-knockout learns from)."""
    golds, _ = gold_references(data_root)
    readers = {reference.name: reference.reader for spec in list_corpora() for reference in spec.references
               if reference.role == "evaluation"}  # fmt: skip
    return {(readers[gold.name], gold.language): gold for gold in golds if gold.name in readers}


def test_documented_agreement_is_what_the_analyzer_measures_now(shipped_golds) -> None:
    """A run on the embedded corpora (no gold) prints these figures beside each silver reference: they
    must be what `tokbench corpora agreement` measures with the installed analyzer. Every documented
    figure is measured (one test: they all need the full data root); the failures are reported together."""
    failures = []
    figures = [(name, figure) for name, analyzer in SILVER.items() for figure in analyzer.measured]
    assert figures
    for analyzer, measured in figures:
        spec = SILVER[analyzer]
        label = f"{analyzer} vs {measured.gold}"
        if spec.version() not in spec.measured_with:
            failures.append(f"{label}: the analyzer changed: measure again and update `measured`")
            continue
        gold = shipped_golds[measured.gold, spec.language]
        result = agreement(analyze(analyzer, gold.analyses, spec.language), gold)
        got = (result.words, result.gold_words, *(round(x, 3) for x in (result.precision, result.recall, result.f1)))
        documented = (measured.words, measured.gold_words, measured.precision, measured.recall, measured.f1)
        if got != documented:
            failures.append(f"{label}: measured (words, gold words, P, R, F1) {got}, documented {documented}")
        if not CITATIONS.get(measured.gold):  # the report cites the gold reference by this name
            failures.append(f"{label}: no citation for the gold reference")
    assert not failures, "\n".join(failures)


def test_prefetched_answers_are_kept_on_disk_and_read_back(monkeypatch: pytest.MonkeyPatch, embedded_text,
                                                           tmp_path) -> None:  # fmt: skip
    """A second run asking the same words (same analyzer, version and order) reads the answers from
    ``$TOKBENCH_CACHE/silver/`` without analyzing; other words are analyzed; a damaged entry is said and
    analyzed again."""
    import dataclasses

    from corpora.errors import CorpusWarning

    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path))
    words = {"lemminflect": " ".join(embedded_text["eng_Latn"][:20]).split()}
    monkeypatch.setattr(silver, "_CACHE", {})
    Prefetch(words, processes=1)
    analyzed = dict(silver._CACHE["lemminflect"])
    assert [path.name.split("-")[0] for path in (tmp_path / "silver").iterdir()] == ["lemminflect"]

    def never(_: list[str]) -> list:
        raise AssertionError("analyzed again although the answers are in the cache")

    spec = silver.SILVER["lemminflect"]
    monkeypatch.setitem(silver.SILVER, "lemminflect", dataclasses.replace(spec, segment=never))
    monkeypatch.setattr(silver, "_CACHE", {})
    Prefetch(words, processes=1)
    assert silver._CACHE["lemminflect"] == analyzed and any(isinstance(a, frozenset) for a in analyzed.values())
    monkeypatch.setattr(silver, "_CACHE", {})
    with pytest.raises(AssertionError, match="analyzed again"):  # other words: not in the cache
        Prefetch({"lemminflect": words["lemminflect"][1:]}, processes=1)

    monkeypatch.setitem(silver.SILVER, "lemminflect", spec)
    (entry,) = (tmp_path / "silver").iterdir()
    entry.write_text('{"analyzer": "lemminflect", "words": 3}', encoding="utf-8")
    monkeypatch.setattr(silver, "_CACHE", {})
    with pytest.warns(CorpusWarning, match="damaged silver analysis cache entry"):
        Prefetch(words, processes=1)
    assert silver._CACHE["lemminflect"] == analyzed
