"""Segmentation diff (`benchmarks.measure.segdiff`, `tokbench diff`) on FLORES text against an independent
computation."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import bpe
from benchmarks.measure.segdiff import boundary_diff, segmentation_diff, sentence_boundaries
from bpe.render import SEPARATOR, render_pieces
from tests.conftest import FLORES_LANGUAGES, FULL_DATA_ROOT

LINES = 150  # FLORES lines per language: enough words for ties and frequent words, quick to encode


@pytest.fixture(scope="module")
def pair() -> tuple[bpe.Tokenizer, bpe.Tokenizer]:
    """Two published tokenizers that install with tokbench: byte-level BPE and sentencepiece BPE."""
    return bpe.load("cl100k"), bpe.load("mistral-v1")


@pytest.fixture(scope="module")
def char_bpe() -> bpe.Tokenizer:
    """A char-bpe with a separate end-of-word token (a piece covering no text), trained on English."""
    text = ["the cat sat on the mat and the dog sat on the log", "cats and dogs sat at the gate"] * 20
    return bpe.train("char-bpe", text, 40, end_of_word="separate")


def splits(word: str, tokenizer: bpe.Tokenizer) -> list[bytes]:
    """The word's bytes cut where its isolated encoding's text-covering tokens are (the independent check:
    byte strings, not boundary offsets)."""
    data = word.encode("utf-8")
    return [data[start:end] for start, end in tokenizer.encode_word(word).spans if end > start]


@pytest.mark.parametrize("language", FLORES_LANGUAGES)
def test_word_diff_equals_an_independent_count(language: str, flores: dict[str, list[str]], pair) -> None:
    tokenizer_a, tokenizer_b = pair
    texts = flores[language][:LINES]
    diff = segmentation_diff(texts, tokenizer_a, tokenizer_b)

    occurrences = Counter(word for text in texts for word in text.split())
    differing = {word: count for word, count in occurrences.items()
                 if splits(word, tokenizer_a) != splits(word, tokenizer_b)}  # fmt: skip
    assert diff.word_tokens == sum(occurrences.values())
    assert diff.word_types == len(occurrences)
    assert diff.differing_tokens == sum(differing.values())
    assert diff.differing_types == len(differing)
    assert diff.token_share == pytest.approx(sum(differing.values()) / sum(occurrences.values()))
    assert diff.type_share == pytest.approx(len(differing) / len(occurrences))
    # most frequent first, ties by the word
    assert [(w.word, w.count) for w in diff.words] == sorted(differing.items(), key=lambda item: (-item[1], item[0]))
    for word in diff.words[:50]:
        assert word.pieces_a == tuple(render_pieces(word.word, tokenizer_a.encode_word(word.word)))
        assert word.pieces_b == tuple(render_pieces(word.word, tokenizer_b.encode_word(word.word)))
    # real text: the two vocabularies agree on some words and not on others
    assert 0 < diff.differing_types < diff.word_types


def test_a_tokenizer_does_not_differ_from_itself(flores: dict[str, list[str]], pair) -> None:
    diff = segmentation_diff(flores["kor_Hang"][:LINES], pair[0], bpe.load("cl100k"))
    assert diff.words == () and diff.differing_tokens == 0 and diff.token_share == 0


def test_a_token_covering_no_text_is_no_cut(char_bpe: bpe.Tokenizer) -> None:
    # char-bpe spells an unmerged word as characters and a separate </w> (empty span): m|a|d|∅;
    # a char tokenizer gives m|a|d: the same cuts, so the same segmentation
    chars = bpe.train("char", ["the cat sat on the mat and the dog sat on the log"], 30)
    assert render_pieces("mad", char_bpe.encode_word("mad")) == ["m", "a", "d", "∅"]
    assert render_pieces("toga", char_bpe.encode_word("toga")) == ["t", "og", "a", "∅"]
    diff = segmentation_diff(["mad toga mad"], char_bpe, chars)
    assert [(w.word, w.count, w.pieces_a, w.pieces_b) for w in diff.words] == [
        ("toga", 1, ("t", "og", "a", "∅"), ("t", "o", "g", "a"))
    ]
    assert (diff.differing_tokens, diff.word_tokens, diff.differing_types, diff.word_types) == (1, 3, 1, 2)


def test_boundary_diff_of_one_sentence(flores: dict[str, list[str]], pair) -> None:
    tokenizer_a, tokenizer_b = pair
    text = flores["kor_Hang"][0]
    encoding_a, encoding_b = tokenizer_a.encode_with_spans(text), tokenizer_b.encode_with_spans(text)
    diff = boundary_diff(text, encoding_a, encoding_b)

    def cuts(encoding: bpe.Encoding) -> set[int]:  # independently, from the spans as listed
        size = len(text.encode("utf-8"))
        return {start for start, end in encoding.spans if 0 < start < size and end > start} | {
            end for start, end in encoding.spans if 0 < end < size and end > start
        }

    assert set(diff.only_a) == cuts(encoding_a) - cuts(encoding_b)
    assert set(diff.only_b) == cuts(encoding_b) - cuts(encoding_a)
    assert diff.only_a and diff.only_b  # cl100k cuts inside Hangul syllables, mistral-v1 elsewhere
    # character offsets: the character each byte offset falls in; inside a character when not at its start
    starts = {len(text[:i].encode("utf-8")): i for i in range(len(text) + 1)}
    for offset, char in zip(diff.only_a, diff.chars_a, strict=True):
        assert len(text[:char].encode("utf-8")) <= offset < len(text[: char + 1].encode("utf-8"))
        assert (offset in diff.inside_a) == (offset not in starts)
    assert diff.inside_a  # cl100k's byte tokens end inside some syllable of this sentence
    assert sentence_boundaries(text, encoding_a) == cuts(encoding_a)
    assert boundary_diff(text, encoding_a, encoding_a).count == 0


# -- the command ------------------------------------------------------------



@pytest.fixture(scope="module")
def korean_file(tmp_path_factory: pytest.TempPathFactory, flores: dict[str, list[str]]) -> Path:
    path = tmp_path_factory.mktemp("diff") / "kor.txt"
    path.write_text("\n".join(flores["kor_Hang"][:LINES]) + "\n", encoding="utf-8")
    return path


def test_command_tsv_lists_every_differing_word(tokbench, korean_file: Path, pair) -> None:
    status, out, err = tokbench("diff", "--tokenizer", "cl100k", "--tokenizer", "mistral-v1",
                                "--input", korean_file, "--top", 0, "--format", "tsv")  # fmt: skip
    assert status == 0, err
    expected = segmentation_diff(korean_file.read_text(encoding="utf-8").splitlines(), *pair)
    lines = out.splitlines()
    assert lines[0] == "count\tword\tpieces_a\tpieces_b"
    assert lines[1:] == [f"{w.count}\t{w.word}\t{SEPARATOR.join(w.pieces_a)}\t{SEPARATOR.join(w.pieces_b)}"
                         for w in expected.words]  # fmt: skip
    assert f"{expected.differing_types:,} of {expected.word_types:,} word types" in err


def test_command_text_shows_the_top_words(tokbench, korean_file: Path, pair) -> None:
    status, out, err = tokbench("diff", "--tokenizer", "cl100k", "--tokenizer", "mistral-v1",
                                "--input", korean_file, "--top", 3)  # fmt: skip
    assert status == 0, err
    expected = segmentation_diff(korean_file.read_text(encoding="utf-8").splitlines(), *pair)
    lines = out.splitlines()
    assert lines[0].startswith("A = cl100k, B = mistral-v1: ")
    assert f"({expected.token_share:.2%})" in lines[0] and f"({expected.type_share:.2%})" in lines[0]
    body = [line.split() for line in lines[4:]]  # summary, caption, header, rule, rows
    assert [(row[0], row[1]) for row in body] == [(f"{w.count:,}", w.word) for w in expected.words[:3]]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tokenizer", "cl100k"], "give --tokenizer A --tokenizer B (got 1)"),
        (["--tokenizer", "cl100k", "--tokenizer", "chars", "--tokenizer", "bytes"], "(got 3)"),
        (["--tokenizer", "cl100k", "--tokenizer", "no-such-tokenizer"], "'no-such-tokenizer' is neither a file"),
        (["--tokenizer", "cl100k", "--tokenizer", "chars", "--input", "MISSING"], "no such file"),
        (["--tokenizer", "cl100k", "--tokenizer", "chars", "--input", "BLANK"], "hold no words"),
        (["--tokenizer", "cl100k", "--tokenizer", "chars", "--input", "BINARY"], "NUL"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tokbench, tmp_path: Path, argv: list[str], message: str) -> None:
    files = {"MISSING": tmp_path / "missing.txt", "BLANK": tmp_path / "blank.txt", "BINARY": tmp_path / "bin.txt"}
    files["BLANK"].write_text("  \n\n\t\n", encoding="utf-8")
    files["BINARY"].write_bytes("a\x00b".encode("utf-16-le"))
    argv = [str(files.get(arg, arg)) for arg in argv]
    if "--input" not in argv:
        argv += ["--input", str(files["BLANK"])]
    status, out, err = tokbench("diff", *argv)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("tokbench: error: ") and message in err, err


def test_negative_top_is_refused(tokbench, korean_file: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        tokbench("diff", "--tokenizer", "cl100k", "--tokenizer", "chars", "--input", korean_file, "--top", -1)
    assert exit_info.value.code == 2


@pytest.mark.skipif(FULL_DATA_ROOT is None, reason="data root absent: the GPT-2 rank file is in the full data root")
def test_gpt2_rank_file_with_its_pattern(tokbench, korean_file: Path) -> None:
    ranks = FULL_DATA_ROOT / "tokenizers" / "gpt2.tiktoken"
    status, out, err = tokbench("diff", "--tokenizer", ranks, "--pattern", "gpt2", "--tokenizer", "cl100k",
                                "--input", korean_file, "--format", "tsv", "--top", 0)  # fmt: skip
    assert status == 0, err
    expected = segmentation_diff(korean_file.read_text(encoding="utf-8").splitlines(),
                                 bpe.load(ranks, pattern="gpt2"), bpe.load("cl100k"))  # fmt: skip
    assert len(out.splitlines()) == 1 + len(expected.words) > 1
