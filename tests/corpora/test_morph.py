"""Morpheme references: boundary arithmetic, and every gold reader on real files."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpora.errors import CorpusError
from corpora.morph import READERS, boundaries_of, boundary_counts, boundary_prf, read_reference
from tests.conftest import DATA_ROOT, by_data
from tests.errors import raises_code

MORPH = Path("morph")
MC = "morphochallenge2010_goldstd_combined.segmentation"


def assert_inner(reference) -> None:
    """Every boundary of every analysis is an inner character offset of its word."""
    for word, alternatives in reference.analyses.items():
        assert alternatives, word
        for boundaries in alternatives:
            assert all(0 < b < len(word) for b in boundaries), (word, boundaries)


# -- boundary arithmetic ----------------------------------------------------------------------------


def test_boundaries_of_running_lengths() -> None:
    assert boundaries_of(["walk", "ed"]) == {4}
    assert boundaries_of(["при", "клон", "я", "ть"]) == {3, 7, 8}
    assert boundaries_of(["incult"]) == frozenset()


@given(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=6))
def test_boundaries_cut_the_word_back_into_its_morphemes(morphs: list[str]) -> None:
    word = "".join(morphs)
    cuts = [0, *sorted(boundaries_of(morphs)), len(word)]
    assert [word[a:b] for a, b in itertools.pairwise(cuts)] == morphs


def test_boundary_counts_picks_the_best_matching_alternative() -> None:
    assert boundary_counts({3}, [frozenset({3, 5})]) == (1, 0, 1)
    # {3} vs {} (1 error) beats {1, 2} (3 errors)
    assert boundary_counts({3}, [frozenset({1, 2}), frozenset()]) == (0, 1, 0)
    # equal errors: more true positives wins ({3, 5}: tp 1, fn 1 over {}: fp 1)
    assert boundary_counts({3}, [frozenset(), frozenset({3, 5})]) == (1, 0, 1)
    # full tie: the first alternative in file order
    assert boundary_counts({3}, [frozenset({4}), frozenset({2})]) == (0, 1, 1)
    assert boundary_counts(set(), [frozenset()]) == (0, 0, 0)
    with pytest.raises(ValueError):
        boundary_counts({1}, [])


def test_boundary_prf_micro_f1_is_the_harmonic_mean() -> None:
    precision, recall, f1 = boundary_prf(6, 2, 4)
    assert (precision, recall) == (0.75, 0.6)
    assert f1 == pytest.approx(6 / (6 + 0.5 * 6)) == pytest.approx(2 * precision * recall / (precision + recall))
    assert all(math.isnan(v) for v in boundary_prf(0, 0, 0))
    assert math.isnan(boundary_prf(0, 0, 3)[0]) and boundary_prf(0, 0, 3)[1:] == (0.0, 0.0)


# -- readers on the real files ------------------------------------------------------------------------
# Each reader test reads its file from the data root in use: the full one, or the shipped sample (an
# excerpt, or for gold without a license a few entries in the published format; its README lists them).


def read(reader: str, language: str, *files: str | Path):
    return read_reference(reader, [DATA_ROOT / f for f in files], f"test-{reader}", language)


def test_sigmorphon_keeps_only_words_whose_underlying_morphemes_concatenate() -> None:
    reference = read("sigmorphon2022-word", "en", MORPH / "eng" / "sigmorphon2022_eng.word.dev.tsv")
    coverage = reference.coverage
    assert coverage.total == by_data(900, 57_371)
    assert 0.68 < coverage.share_kept < 0.72  # the data README: ~70% concatenate back
    assert coverage.kept + sum(coverage.dropped.values()) == coverage.total
    assert coverage.dropped["multi-word entry (contains whitespace)"] > 0
    assert reference.analyses["enthrallments"] == (frozenset({2, 8, 12}),)  # en|thrall|ment|s
    assert reference.analyses["incult"] == (frozenset(),)  # one morpheme: kept, no boundary
    assert "patronesses" not in reference.analyses  # patron @@ess @@s: underlying form
    assert "mouth harpist" not in reference.analyses
    assert reference.kind == "gold" and reference.name == "test-sigmorphon2022-word"
    assert_inner(reference)


def test_morphochallenge_turkish_is_transliterated_from_ascii() -> None:
    reference = read("morphochallenge2010", "tr", MORPH / "tur" / f"{MC}.tur")
    assert len(reference.analyses) == by_data(4, 1_760)
    assert reference.coverage.kept == reference.coverage.total == len(reference.analyses)
    assert not any(set(word) & set("CGIOSU") for word in reference.analyses)
    # CIkmazIna: CIkmaz I na, CIkmaz In a -> two alternatives
    assert reference.analyses["çıkmazına"] == (frozenset({6, 7}), frozenset({6, 8}))
    assert reference.analyses["gelecektiniz"] == (frozenset({3, 7, 9}),)
    assert_inner(reference)


def test_morphochallenge_english_alternatives_and_empty_morphemes() -> None:
    reference = read("morphochallenge2010", "en", MORPH / "eng" / f"{MC}.eng")
    assert len(reference.analyses) == by_data(4, 1_686)
    assert reference.analyses["abounded"] == (frozenset({6}),)
    assert reference.analyses["afire"] == (frozenset({1}),)  # identical alternatives kept once
    assert reference.analyses["ageing"] == (frozenset({3}), frozenset())
    assert reference.analyses["alumni's"] == (frozenset({6}),)  # alumni ~ 's: the empty morpheme is dropped
    assert_inner(reference)


TIKHONOV = [MORPH / "rus" / "tikhonov_word2morph_rus.train", MORPH / "rus" / "tikhonov_word2morph_rus.valid"]


def test_tikhonov_reads_both_files_and_merges_duplicates() -> None:
    reference = read("tikhonov", "ru", *TIKHONOV)
    assert reference.coverage.total == reference.coverage.kept == by_data(3, 57_627 + 14_407)
    assert len(reference.analyses) < reference.coverage.total  # some words are listed twice
    assert reference.analyses["приклонять"] == (frozenset({3, 7, 8}),)  # при|клон|я|ть
    assert reference.analyses["наибольший"] == (frozenset({3, 7, 8}),)  # наи|боль|ш|ий
    assert str(TIKHONOV[1]) in reference.source
    assert_inner(reference)


def test_ud_korean_lemma_keeps_exact_joins_only() -> None:
    reference = read("ud-korean-lemma", "ko", "ud/ko/ko_kaist-ud-dev.conllu", "ud/ko/ko_kaist-ud-test.conllu")
    coverage = reference.coverage
    assert 0.78 < coverage.share_kept < 0.86  # the data README: about 80% of Kaist words
    assert coverage.kept + sum(coverage.dropped.values()) == coverage.total
    assert reference.analyses["고향은"] == (frozenset({2}),)  # 고향+은
    assert reference.analyses["그립습니다"] == (frozenset({2}),)  # 그립+습니다
    assert "서울입니다" not in reference.analyses  # 서울+이+ㅂ니다 is an underlying form
    assert_inner(reference)


def test_morphscore_items_have_one_boundary() -> None:
    english = read("morphscore", "en", MORPH / "eng" / "morphscore_english_morph_data.csv")
    assert english.kind == "morphscore" and english.is_morphscore and not english.notes
    assert len(english.analyses) == by_data(2, 2_000)
    assert english.analyses["lighted"] == (frozenset({5}),)
    assert all(len(alternatives) == 1 and len(alternatives[0]) == 1 for alternatives in english.analyses.values())

    turkish = read("morphscore", "tr", MORPH / "tur" / "morphscore_turkish_morph_data.csv")
    dropped = by_data(1, 7)
    assert turkish.coverage.dropped == {"no inner boundary (empty pt1 or rest)": dropped}  # e.g. yendirt,yendirt,
    assert "yendirt" not in turkish.analyses
    assert turkish.analyses["yetişmediydik"] == (frozenset({5}),)
    assert_inner(turkish)


def test_morphscore_korean_is_flagged_unreliable() -> None:
    korean = read("morphscore", "ko", MORPH / "kor" / "morphscore_korean_morph_data.csv")
    assert "unreliable" in korean.notes
    # the reason for the flag: every item is cut after its first syllable
    assert {alternatives for alternatives in korean.analyses.values()} == {(frozenset({1}),)}


# -- bad input ----------------------------------------------------------------------------------------


def test_every_reader_names_a_missing_file(tmp_path: Path) -> None:
    for reader in READERS:
        with raises_code(CorpusError, "missing_file", value=tmp_path / "absent.tsv"):
            read_reference(reader, [tmp_path / "absent.tsv"], "x", "en")


def test_unknown_reader_lists_the_choices(tmp_path: Path) -> None:
    with raises_code(CorpusError, "unknown_reader", value="celex") as caught:
        read_reference("celex", [tmp_path / "x"], "x", "en")
    assert all(reader in str(caught.value) for reader in READERS)


def test_no_files_is_an_error() -> None:
    for reader in READERS:
        with raises_code(CorpusError, "no_files", value=reader):
            read_reference(reader, [], "x", "en")


@pytest.mark.parametrize(
    ("reader", "text", "code", "where"),
    [
        ("tikhonov", "ольха\tольх:ROOT/а:END\nсосна\n", "bad_data_file", ":2"),
        ("tikhonov", "ольха\tольх-ROOT/а:END\n", "bad_data_file", ":1"),
        ("morphochallenge2010", "abounded\tabound ed:+PAST\n", "bad_data_file", ":1"),
        ("sigmorphon2022-word", "walked\n", "bad_data_file", ":1"),
        ("ud-korean-lemma", "1\t고향은\t고향+은\n", "bad_data_file", ":1"),
        ("morphscore", ",word,pt1\n0,walked,walk\n", "missing_column", "full_word"),
        ("morphscore", ",full_word,pt1,rest\n0,walked\n", "bad_data_file", ":2"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, reader: str, text: str, code: str, where: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(text, encoding="utf-8")
    value = f"{path}{where}" if where.startswith(":") else where  # the file and line, or the missing column
    with raises_code(CorpusError, code, value=value) as caught:
        read_reference(reader, [path], "x", "ru")
    assert str(path) in str(caught.value)


def test_non_utf8_file_is_a_corpus_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.tsv"
    path.write_bytes("çıkmaz\tçıkmaz:x\n".encode("cp1254"))
    with raises_code(CorpusError, "not_utf8", value=path):
        read_reference("morphochallenge2010", [path], "x", "tr")
