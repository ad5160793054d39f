"""The kiwi analyzer (Korean): boundaries from overlapping morpheme spans, and real words."""

from __future__ import annotations

from corpora.silver import analyze, kiwi_boundaries


def test_kiwi_fused_morphemes_never_cut_a_syllable() -> None:
    assert kiwi_boundaries([(0, 1), (0, 1), (1, 1)], 2) == {1}  # 했다 = 하 + 었 (fused in 했) + 다
    assert kiwi_boundaries([(0, 2), (2, 1), (2, 3)], 5) == {2}  # 서울입니다 = 서울 + 이 + ㅂ니다 (fused in 입)
    assert kiwi_boundaries([(0, 1), (1, 1), (2, 3)], 5) == {1, 2}  # 먹었습니다: nothing fused
    assert kiwi_boundaries([(0, 1), (2, 1)], 3) is None  # character 1 uncovered


def test_kiwi_segments_with_syllable_boundaries() -> None:
    result = analyze("kiwi", ["했다", "서울입니다", "먹었습니다", "학교에서"], "ko")
    assert result.analyses == {
        "했다": (frozenset({1}),),
        "서울입니다": (frozenset({2}),),
        "먹었습니다": (frozenset({1, 2}),),
        "학교에서": (frozenset({2}),),
    }
