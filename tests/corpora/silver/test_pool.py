"""``analyze`` and its cache, and the worker processes that analyze ahead (``Prefetch``, ``Preloaded``,
forked copies of a loaded analyzer)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from corpora.errors import CorpusError
from corpora.morph import CITATIONS
from corpora.silver import SILVER, Prefetch, Preloaded, analyze, pool
from tests.conftest import DATA_ROOT
from tests.errors import raises_code


def test_analyze_normalizes_deduplicates_and_is_repeatable() -> None:
    decomposed = unicodedata.normalize("NFD", "görmedilerdi")
    first = analyze("zemberek", [decomposed, "görmedilerdi", "görmedilerdi"], "tr")
    assert list(first.analyses) == ["görmedilerdi"]
    assert first.coverage.total == 1
    assert analyze("zemberek", ["görmedilerdi"], "tr").analyses == first.analyses


def test_analyze_rejects_unknown_analyzer_and_wrong_language() -> None:
    with raises_code(CorpusError, "unknown_analyzer", value="mecab"):
        analyze("mecab", ["a"], "ko")
    with raises_code(CorpusError, "wrong_language", value="tr"):
        analyze("kiwi", ["a"], "tr")


def test_prefetch_on_processes_answers_as_analyze(monkeypatch: pytest.MonkeyPatch, embedded_text,
                                                  tmp_path) -> None:  # fmt: skip
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path))  # an empty cache: the analyzers run on the workers
    # analyzers without state between words (zemberek has some: a fresh process may answer a word
    # differently from this test process, which analyzed other words before)
    words = {"kiwi": " ".join(embedded_text["kor_Hang"][:40]).split(),
             "lemminflect": " ".join(embedded_text["eng_Latn"][:10]).split()}  # fmt: skip
    languages = {"kiwi": "ko", "lemminflect": "en"}
    monkeypatch.setattr(pool, "_CACHE", {})
    serial = {name: analyze(name, words[name], languages[name]) for name in words}
    monkeypatch.setattr(pool, "_CACHE", {})
    prefetching = Prefetch(words, processes=2)
    prefetching.wait(["kiwi"])  # one analyzer's words, while the other may still run
    assert set(pool._CACHE["kiwi"]) == set(words["kiwi"])
    prefetching.wait()
    assert prefetching.ready()
    assert sorted(prefetching.seconds) == ["kiwi", "lemminflect"] and all(s > 0 for s in prefetching.seconds.values())
    assert sum(len(answers) for answers in pool._CACHE.values()) >= 300
    monkeypatch.setattr(pool, "_CACHE", {})
    assert Prefetch(words, processes=2).seconds == {}  # every answer from the disk cache: nothing analyzed
    assert {name: analyze(name, words[name], languages[name]) for name in words} == serial
    with raises_code(CorpusError, "unknown_analyzer", value="mecab"):
        Prefetch({"mecab": ["a"]}, processes=2)


def test_a_preloaded_analyzer_answers_as_one_started_with_its_words(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:  # fmt: skip
    """zemberek loaded on its own worker before its words are known (``Preloaded``) gives the answers a worker
    started with them gives (both fresh, under the fixed hash seed), its seconds count the loading, and a
    preloaded analyzer whose words are all in the disk cache is stopped."""
    words = {"zemberek": ["kitaplarımızdan", "görmedilerdi", "jurnalliyormuş", "evde", "xqzwvk"],
             "kiwi": ["했다", "서울입니다"]}  # fmt: skip
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "plain"))
    monkeypatch.setattr(pool, "_CACHE", {})
    Prefetch(words, processes=2).wait()
    plain = {name: {word: pool._CACHE[name][word] for word in words[name]} for name in words}

    assert Preloaded.slowest(["kiwi", "zemberek", "kiwi"]).analyzer == "zemberek"  # type: ignore[union-attr]
    assert Preloaded.slowest([]) is None
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "preloaded"))
    monkeypatch.setattr(pool, "_CACHE", {})
    preloaded = Preloaded("zemberek")
    workers = preloaded.pool
    prefetching = Prefetch(words, processes=2, preloaded=preloaded)
    assert preloaded.pool is None and workers in prefetching._pools  # handed over: the prefetch stops it
    prefetching.wait()
    assert {name: {word: pool._CACHE[name][word] for word in words[name]} for name in words} == plain
    assert prefetching.seconds["zemberek"] > 1.0  # loading zemberek takes seconds; its words, milliseconds
    assert workers._state == "TERMINATE"  # type: ignore[attr-defined]

    idle = Preloaded("zemberek")
    workers = idle.pool
    assert Prefetch(words, processes=2, preloaded=idle).seconds == {}  # every answer from the disk cache
    assert idle.pool is None and workers._state == "TERMINATE"  # type: ignore[attr-defined]


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


def test_a_fork_safe_analyzer_is_loaded_once_and_answers_each_batch_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    _stateful_analyzer(monkeypatch)
    assert SILVER["zemberek"].fork_safe
    (first, later), seconds = pool._timed_segment("zemberek", [["a", "b"], ["c", "d"]])
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
    with raises_code(CorpusError, "library_failed", value="zemberek") as caught:
        pool._timed_segment("zemberek", [["a"], ["bad"]])
    assert "no lexicon" in str(caught.value)  # the analyzer's own reason is passed on


def test_no_forked_copy_outlives_a_failing_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    import os

    def segment(words: list[str]) -> list[str]:
        if words == ["bad"]:
            raise ValueError("no lexicon")
        return ["fine"] * len(words)

    started: list[int] = []
    fork = pool._fork_segment

    def recorded(*args: object) -> tuple[int, int]:
        child = fork(*args)  # type: ignore[arg-type]
        started.append(child[0])
        return child

    monkeypatch.setitem(SILVER, "zemberek", dataclasses.replace(SILVER["zemberek"], segment=segment))
    monkeypatch.setattr(pool, "_fork_segment", recorded)
    with pytest.raises(ValueError, match="no lexicon"):
        pool._timed_segment("zemberek", [["bad"], ["a"], ["b"]])
    assert len(started) == 2
    for pid in started:
        with pytest.raises(ChildProcessError):  # killed and reaped
            os.waitpid(pid, os.WNOHANG)


def test_prefetch_answers_afterwards_words_once_after_the_requests(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """On one process the words asked afterwards are answered by the analyzer that answered the requests (as
    this process would answer them later); a word of both is asked once."""
    import os

    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(pool, "_CACHE", {})
    _stateful_analyzer(monkeypatch)
    prefetching = Prefetch({"zemberek": ["a", "b"]}, processes=1, afterwards={"zemberek": ["b", "c"]})
    me = os.getpid()
    assert pool._CACHE["zemberek"] == {word: f"{word}: loaded by {me}, answered by {me}, after {seen}"
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
    monkeypatch.setattr(pool, "_CACHE", {})
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
