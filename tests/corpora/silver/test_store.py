"""Silver answers kept on disk (``$TOKBENCH_CACHE/silver/``) and read back by a later run."""

from __future__ import annotations

import pytest

from corpora.silver import SILVER, Prefetch, pool


def test_prefetched_answers_are_kept_on_disk_and_read_back(monkeypatch: pytest.MonkeyPatch, embedded_text,
                                                           tmp_path) -> None:  # fmt: skip
    """A second run asking the same words (same analyzer, version and order) reads the answers from
    ``$TOKBENCH_CACHE/silver/`` without analyzing; other words are analyzed; a damaged entry is said and
    analyzed again."""
    import dataclasses

    from corpora.errors import CorpusWarning

    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path))
    words = {"lemminflect": " ".join(embedded_text["eng_Latn"][:20]).split()}
    monkeypatch.setattr(pool, "_CACHE", {})
    Prefetch(words, processes=1)
    analyzed = dict(pool._CACHE["lemminflect"])
    assert [path.name.split("-")[0] for path in (tmp_path / "silver").iterdir()] == ["lemminflect"]

    def never(_: list[str]) -> list:
        raise AssertionError("analyzed again although the answers are in the cache")

    spec = SILVER["lemminflect"]
    monkeypatch.setitem(SILVER, "lemminflect", dataclasses.replace(spec, segment=never))
    monkeypatch.setattr(pool, "_CACHE", {})
    Prefetch(words, processes=1)
    assert pool._CACHE["lemminflect"] == analyzed and any(isinstance(a, frozenset) for a in analyzed.values())
    monkeypatch.setattr(pool, "_CACHE", {})
    with pytest.raises(AssertionError, match="analyzed again"):  # other words: not in the cache
        Prefetch({"lemminflect": words["lemminflect"][1:]}, processes=1)

    monkeypatch.setitem(SILVER, "lemminflect", spec)
    (entry,) = (tmp_path / "silver").iterdir()
    entry.write_text('{"analyzer": "lemminflect", "words": 3}', encoding="utf-8")
    monkeypatch.setattr(pool, "_CACHE", {})
    with pytest.warns(CorpusWarning, match="damaged silver analysis cache entry"):
        Prefetch(words, processes=1)
    assert pool._CACHE["lemminflect"] == analyzed
