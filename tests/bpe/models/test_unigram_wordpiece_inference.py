"""The inference methods (``encode_mode``, Uzan et al. 2024) of the unigram and wordpiece families.

Each method is checked against a reference written here from its definition alone, over plain strings
and sets of pieces (no trie, no dynamic programming): the greedy methods step by step, ``fewest-tokens``
by enumerating every segmentation of the word and picking the fewest tokens, then the tie-break.  The
words are every pre-token of FLORES lines (the sample data root by default, the full one in the slow
run), with characters no tokenizer has seen."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

import bpe
from benchmarks.cli import main
from benchmarks.report import inference_method
from bpe.base import DEFAULT_SPECIAL_TOKENS, TokenizerError
from bpe.export.hf_export import to_hf_json
from bpe.models.inference import INFERENCE_METHODS
from bpe.models.unigram import UnigramOptions, UnigramTokenizer
from bpe.models.wordpiece import CONTINUATION, WordPieceOptions, WordPieceTokenizer
from tests.conftest import leading
from tests.errors import raises_code

N_SPECIALS = len(DEFAULT_SPECIAL_TOKENS)
#: every (encode_mode, tie_break) the vocabulary-only methods take
MODES = [(method, "longest-first") for method in INFERENCE_METHODS] + [("fewest-tokens", "longest-last")]
#: unseen characters, alone, in runs and inside words
UNSEEN = ["ⓧⓨ unseen ⓧ", "kⓧⓧⓧa ⓧb"]
#: fewest-tokens enumerates every segmentation of words up to this many characters (at most 2^9 each)
ENUMERATED_LENGTH = 10

Allowed = Callable[[int, int], bool]  # may word[i:j] be one segment?
Spans = list[tuple[int, int]]  # a segmentation as (start, end) character offsets
Reference = Callable[[str], list[tuple[int, str]]]  # a pre-token's (id, text) list


# -- the references ------------------------------------------------------------------------------------


def greedy_prefix(length: int, allowed: Allowed) -> Spans | None:
    spans, start = [], 0
    while start < length:
        end = next((end for end in range(length, start, -1) if allowed(start, end)), None)
        if end is None:
            return None
        spans.append((start, end))
        start = end
    return spans


def greedy_suffix(length: int, allowed: Allowed) -> Spans | None:
    spans, end = [], length
    while end > 0:
        start = next((start for start in range(end) if allowed(start, end)), None)
        if start is None:
            return None
        spans.insert(0, (start, end))
        end = start
    return spans


def greedy_token(length: int, allowed: Allowed) -> Spans | None:
    """The longest allowed segment of [low, high) (the leftmost of equally long ones), then both sides."""

    def split(low: int, high: int) -> Spans | None:
        if low == high:
            return []
        found = [(end - start, -start) for start in range(low, high) for end in range(start + 1, high + 1)
                 if allowed(start, end)]  # fmt: skip
        if not found:
            return None
        size, start = max(found)
        left, right = split(low, -start), split(-start + size, high)
        return None if left is None or right is None else [*left, (-start, -start + size), *right]

    return split(0, length)


def every_segmentation(length: int, allowed: Allowed, start: int = 0) -> Iterator[tuple[int, ...]]:
    """The token lengths of every segmentation of [start, length) into allowed segments."""
    if start == length:
        yield ()
        return
    for end in range(start + 1, length + 1):
        if allowed(start, end):
            for rest in every_segmentation(length, allowed, end):
                yield (end - start, *rest)


def fewest(length: int, allowed: Allowed, tie_break: str) -> Spans | None:
    """Fewest tokens; among those the token lengths lexicographically largest from the first (longest-first)
    or from the last (longest-last) token."""
    order = (lambda sizes: sizes) if tie_break == "longest-first" else (lambda sizes: sizes[::-1])
    candidates = list(every_segmentation(length, allowed))
    if not candidates:
        return None
    least = min(map(len, candidates))
    sizes = max((sizes for sizes in candidates if len(sizes) == least), key=order)
    bounds = [0]
    for size in sizes:
        bounds.append(bounds[-1] + size)
    return list(pairwise(bounds))


def reference(length: int, allowed: Allowed, method: str, tie_break: str) -> Spans | None:
    if method == "longest-prefix":
        return greedy_prefix(length, allowed)
    if method == "longest-suffix":
        return greedy_suffix(length, allowed)
    if method == "longest-token":
        return greedy_token(length, allowed)
    return fewest(length, allowed, tie_break)


def unigram_reference(pieces: dict[str, int], unk: int, method: str, tie_break: str) -> Reference:
    """A pre-token's (id, text) list: a piece matches its characters; a character that is no piece stands
    alone, and a run of them is one <unk>."""

    @cache
    def encode(word: str) -> list[tuple[int, str]]:
        def allowed(start: int, end: int) -> bool:
            return word[start:end] in pieces or (end == start + 1 and word[start] not in pieces)

        tokens: list[tuple[int, str]] = []
        for start, end in reference(len(word), allowed, method, tie_break):
            token = pieces.get(word[start:end], unk)
            if token == unk and tokens and tokens[-1][0] == unk:
                tokens[-1] = (unk, tokens[-1][1] + word[start:end])
            else:
                tokens.append((token, word[start:end]))
        return tokens

    return encode


def wordpiece_reference(vocab: list[str], unk: int, method: str, tie_break: str) -> Reference:
    """A pre-token's (id, text) list: a word-initial piece only at the word's start, a ## piece only after
    it; a word no segmentation covers (greedy: at the first dead end) is one <unk>."""
    initial = {piece: token for token, piece in enumerate(vocab) if token >= N_SPECIALS
               and not piece.startswith(CONTINUATION)}  # fmt: skip
    continuing = {piece[len(CONTINUATION) :]: token for token, piece in enumerate(vocab)
                  if token >= N_SPECIALS and piece.startswith(CONTINUATION)}  # fmt: skip

    @cache
    def encode(word: str) -> list[tuple[int, str]]:
        def allowed(start: int, end: int) -> bool:
            return word[start:end] in (continuing if start else initial)

        spans = reference(len(word), allowed, method, tie_break)
        if spans is None:
            return [(unk, word)]
        return [((continuing if start else initial)[word[start:end]], word[start:end]) for start, end in spans]

    return encode


def assert_lines_equal_reference(tokenizer: bpe.Tokenizer, lines: list[str], method: str,
                                 encode: Reference, longest_prefix: Reference) -> tuple[int, int]:  # fmt: skip
    """``encode_texts`` of every line equals the reference on each pre-token, ids and byte spans (a word longer
    than ``ENUMERATED_LENGTH``, in fewest-tokens: no more tokens than ``longest_prefix``); returns the number of
    pre-tokens compared and of <unk> ids met."""
    compared = unknown = 0
    for line, encoding in zip(lines, tokenizer.encode_texts(lines), strict=True):
        tokens = list(zip(encoding.ids, map(tuple, encoding.spans), strict=True))
        index = position = 0
        for pretoken in tokenizer.pretokenizer.split(line):
            end = position + len(pretoken.encode("utf-8"))
            got = []
            while index < len(tokens) and tokens[index][1][1] <= end:  # no token crosses a pre-token
                got.append(tokens[index])
                index += 1
            assert got and got[0][1][0] == position and got[-1][1][1] == end, (line, pretoken)
            if method == "fewest-tokens" and len(pretoken) > ENUMERATED_LENGTH:
                greedy = longest_prefix(pretoken)
                if tokenizer.unk_id not in [token for token, _ in greedy + got]:
                    assert len(got) <= len(greedy), pretoken
            else:
                expected, start = [], position
                for token, text in encode(pretoken):
                    expected.append((token, (start, start + len(text.encode("utf-8")))))
                    start = expected[-1][1][1]
                assert got == expected, (line, pretoken)
                compared += 1
                unknown += [token for token, _ in got].count(tokenizer.unk_id)
            position = end
        assert index == len(tokens)
    return compared, unknown


def assert_methods_differ(native: list[list[int]], segmentations: dict[tuple[str, str], list[list[int]]],
                          native_mode: tuple[str, str] | None = None) -> None:  # fmt: skip
    """Every method but ``native_mode`` (the family's own, when it is one of them) changes some line, and
    fewest-tokens takes no more tokens than any other method on any line."""
    for mode, ids in segmentations.items():
        assert mode == native_mode or ids != native, mode
    for line, native_ids in enumerate(native):
        counts = {mode: len(ids[line]) for mode, ids in segmentations.items()}
        least = min(len(native_ids), *counts.values())
        assert counts["fewest-tokens", "longest-first"] == counts["fewest-tokens", "longest-last"] == least


# -- the tokenizers ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def training_text(embedded_text: dict[str, list[str]]) -> list[str]:
    """About 40,000 characters per language, four languages."""
    return [text for texts in embedded_text.values() for text in leading(texts, 40_000)]


@pytest.fixture(scope="module")
def unigram(training_text: list[str]) -> UnigramTokenizer:
    return bpe.train("unigram", training_text, 3000)


@pytest.fixture(scope="module")
def wordpiece(embedded_text: dict[str, list[str]]) -> WordPieceTokenizer:
    """English, Turkish and Russian: Korean syllables, each an initial and a ## piece, would take most of a
    vocabulary this small, and the methods would rarely differ."""
    languages = ("eng_Latn", "tur_Latn", "rus_Cyrl")
    return bpe.train("wordpiece", [text for language in languages for text in leading(embedded_text[language], 40_000)],
                     4000)  # fmt: skip


def lines_of(flores: dict[str, list[str]], per_language: int | None = None) -> list[str]:
    """The first ``per_language`` lines of each language (all by default), then ``UNSEEN``."""
    return [line for lines in flores.values() for line in lines[:per_language]] + UNSEEN


# -- 1. every method equals its reference on real words --------------------------------------------------


def check_unigram(unigram: UnigramTokenizer, lines: list[str]) -> None:
    pieces = {piece: token for token, piece in enumerate(unigram.vocab) if token >= N_SPECIALS}
    segmentations = {}
    for method, tie_break in MODES:
        tokenizer = unigram.with_encode_options(encode_mode=method, tie_break=tie_break)
        encode, greedy = (unigram_reference(pieces, unigram.unk_id, *mode) for mode in ((method, tie_break), MODES[0]))
        compared, unknown = assert_lines_equal_reference(tokenizer, lines, method, encode, greedy)
        assert compared > 0.5 * sum(len(tokenizer.pretokenizer.split(line)) for line in lines)
        assert unknown > 0  # the unseen characters met the <unk> rule
        segmentations[method, tie_break] = [encoding.ids for encoding in tokenizer.encode_texts(lines)]
    assert_methods_differ([encoding.ids for encoding in unigram.encode_texts(lines)], segmentations)


def check_wordpiece(wordpiece: WordPieceTokenizer, lines: list[str]) -> None:
    segmentations = {}
    for method, tie_break in MODES:
        tokenizer = wordpiece.with_encode_options(encode_mode=method, tie_break=tie_break)
        encode, greedy = (wordpiece_reference(wordpiece.vocab, wordpiece.unk_id, *mode)
                          for mode in ((method, tie_break), MODES[0]))  # fmt: skip
        compared, unknown = assert_lines_equal_reference(tokenizer, lines, method, encode, greedy)
        assert compared > 0.5 * sum(len(tokenizer.pretokenizer.split(line)) for line in lines) and unknown > 0
        segmentations[method, tie_break] = [encoding.ids for encoding in tokenizer.encode_texts(lines)]
    assert_methods_differ(segmentations[MODES[0]], segmentations, native_mode=MODES[0])
    # longest-prefix is the native MaxMatch; the trie over the marked symbols gives the same on every pre-token
    pretokens = {pretoken for line in lines for pretoken in wordpiece.pretokenizer.split(line)}
    assert all(wordpiece._segment_pretoken(pretoken) == wordpiece._encode_pretoken(pretoken)
               for pretoken in pretokens)  # fmt: skip


def test_unigram_methods_equal_the_reference(unigram: UnigramTokenizer, flores_sample: dict[str, list[str]]) -> None:
    check_unigram(unigram, lines_of(flores_sample, 50))


def test_wordpiece_methods_equal_the_reference(
    wordpiece: WordPieceTokenizer, flores_sample: dict[str, list[str]]
) -> None:
    check_wordpiece(wordpiece, lines_of(flores_sample))


@pytest.mark.slow
def test_methods_equal_the_reference_on_the_full_data_root(
    unigram: UnigramTokenizer, wordpiece: WordPieceTokenizer, flores_lines: dict[str, list[str]]
) -> None:
    check_unigram(unigram, lines_of(flores_lines))
    check_wordpiece(wordpiece, lines_of(flores_lines))


# -- 2. the ## convention where the methods part ---------------------------------------------------------


def hand_built(**options: object) -> WordPieceTokenizer:
    """Base ``" "``, ``" d"``, ``"d"`` and ``##d ##o ##g ##s``; merged ``##do``, ``##dog``, ``##og``, ``##ogs``."""
    base = [" ", " d", "d", "##d", "##g", "##o", "##s"]
    first = N_SPECIALS
    pieces = {piece: first + index for index, piece in enumerate(base)}
    merges = []
    for left, right in (("##d", "##o"), ("##do", "##g"), ("##o", "##g"), ("##og", "##s")):
        merges.append((pieces[left], pieces[right]))
        pieces[left + right[len(CONTINUATION) :]] = first + len(pieces)
    return WordPieceTokenizer(base, merges, **options)


@pytest.mark.parametrize(
    ("method", "tie_break", "word", "pieces"),
    [
        ("longest-prefix", "longest-first", " dogs", [" d", "##ogs"]),
        # the longest piece ending the word is ##ogs, then " d" starts it
        ("longest-suffix", "longest-first", " dogs", [" d", "##ogs"]),
        # ##dog ends " dog" from its second character, leaving the space: a word-initial piece of its own here
        ("longest-suffix", "longest-first", " dog", [" ", "##dog"]),
        ("longest-token", "longest-first", " dog", [" ", "##dog"]),
        # ##dog never starts a word (it is a ## piece): "dog" is d + ##og
        ("longest-token", "longest-first", "dog", ["d", "##og"]),
        ("fewest-tokens", "longest-first", " dog", [" d", "##og"]),
        ("fewest-tokens", "longest-last", " dog", [" ", "##dog"]),
        # the greedy methods stop at "x"; fewest-tokens finds no covering either: one <unk>
        ("longest-suffix", "longest-first", " dox", ["<unk>"]),
        ("fewest-tokens", "longest-first", " dox", ["<unk>"]),
    ],
)
def test_the_continuation_convention_on_a_hand_built_vocabulary(
    method: str, tie_break: str, word: str, pieces: list[str]
) -> None:
    tokenizer = hand_built(encode_mode=method, tie_break=tie_break)
    assert [tokenizer.id_to_piece(token) for token in tokenizer.encode(word)] == pieces


def test_a_greedy_dead_end_is_one_unk_where_fewest_tokens_covers_the_word() -> None:
    """Without the word-initial space ``" "``, ``##dog`` ending `` dog`` leaves a space no piece may start
    with: longest-suffix and longest-token give up (as MaxMatch does), fewest-tokens takes `` d ##og``
    though a segmentation with the space uncovered would take as few tokens."""
    base = [" d", "d", "##d", "##g", "##o"]
    merges = [(N_SPECIALS + 2, N_SPECIALS + 4), (N_SPECIALS + 5, N_SPECIALS + 3), (N_SPECIALS + 4, N_SPECIALS + 3)]
    tokenizer = WordPieceTokenizer(base, merges)
    assert tokenizer.vocab[N_SPECIALS + 5 :] == ["##do", "##dog", "##og"]
    spelled = {}
    for method, tie_break in MODES:
        encoded = tokenizer.with_encode_options(encode_mode=method, tie_break=tie_break).encode_with_spans(" dog")
        spelled[method, tie_break] = [tokenizer.id_to_piece(token) for token in encoded.ids]
        assert encoded.spans[-1][1] == 4  # the spans tile the word either way
    assert spelled == {("longest-prefix", "longest-first"): [" d", "##og"],
                       ("longest-suffix", "longest-first"): ["<unk>"],
                       ("longest-token", "longest-first"): ["<unk>"],
                       ("fewest-tokens", "longest-first"): [" d", "##og"],
                       ("fewest-tokens", "longest-last"): [" d", "##og"]}  # fmt: skip


def test_max_input_chars_per_word_holds_in_every_method(wordpiece: WordPieceTokenizer) -> None:
    for method, tie_break in MODES:
        short = wordpiece.with_encode_options(encode_mode=method, tie_break=tie_break, max_input_chars_per_word=5)
        assert short.encode(" abcdef abcd") == [wordpiece.unk_id, *short.encode(" abcd")]
        assert short.encode(" abcd") == wordpiece.with_encode_options(encode_mode=method, tie_break=tie_break
                                                                        ).encode(" abcd")  # fmt: skip


# -- 3. decoding, saving, loading ------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["unigram", "wordpiece"])
def test_decoding_is_lossless_without_unk_and_the_option_survives_saving(
    family: str, request: pytest.FixtureRequest, flores_sample: dict[str, list[str]], tmp_path: Path
) -> None:
    trained = request.getfixturevalue(family)
    lines = lines_of(flores_sample, 15)
    for method, tie_break in MODES:
        tokenizer = trained.with_encode_options(encode_mode=method, tie_break=tie_break)
        encodings = tokenizer.encode_texts(lines)
        lossless = [tokenizer.decode(e.ids) == line for line, e in zip(lines, encodings, strict=True)
                    if tokenizer.unk_id not in e.ids]  # fmt: skip
        assert all(lossless) and len(lossless) > 0.5 * len(lines)
        path = tmp_path / f"{family}-{method}-{tie_break}.json"
        tokenizer.save(path)
        loaded = bpe.load(path)
        assert (loaded.options.encode_mode, loaded.options.tie_break) == (method, tie_break)
        assert [e.ids for e in loaded.encode_texts(lines)] == [e.ids for e in encodings]
    # a file saved before the option existed encodes natively
    body = json.loads(path.read_text(encoding="utf-8"))
    for name in ("encode_mode", "tie_break"):
        del body["config"][name]
    path.write_text(json.dumps(body), encoding="utf-8")
    assert bpe.load(path).encode_texts(lines[:20]) == trained.encode_texts(lines[:20])
    assert bpe.load(path).options.encode_mode == trained.options.native_mode


# -- 4. the option as configs, the command line and the report see it ------------------------------------


@pytest.mark.parametrize(
    ("options_model", "options", "code", "value"),
    [
        (UnigramOptions, {"encode_mode": "merges"}, "not_allowed", "merges"),
        (UnigramOptions, {"encode_mode": "greedy"}, "not_allowed", "greedy"),  # an earlier name of the BPE families
        (WordPieceOptions, {"encode_mode": "likelihood"}, "not_allowed", "likelihood"),
        (UnigramOptions, {"tie_break": "longest-last"}, "table_rule", "tie_break"),
        (WordPieceOptions, {"encode_mode": "longest-token", "tie_break": "longest-last"}, "table_rule", "tie_break"),
        (WordPieceOptions, {"tie_break": "shortest"}, "not_allowed", "shortest"),
    ],
)
def test_refusals(options_model: type, options: dict, code: str, value: str) -> None:
    with raises_code(TokenizerError, code, value=value):
        options_model.parse("family", options)


def test_defaults_are_the_native_methods() -> None:
    assert UnigramOptions().encode_mode == UnigramTokenizer.facts.native_method == "likelihood"
    assert WordPieceOptions().encode_mode == WordPieceTokenizer.facts.native_method == "longest-prefix"
    assert inference_method("unigram", {}) == "likelihood"
    assert inference_method("wordpiece", {"encode_mode": "fewest-tokens", "tie_break": "longest-last"}) == (
        "fewest-tokens (longest-last)")  # fmt: skip


@pytest.mark.parametrize("family", ["unigram", "wordpiece"])
def test_encode_mode_on_the_command_line_and_no_hf_export(
    family: str, request: pytest.FixtureRequest, flores_sample: dict[str, list[str]], tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    import io

    trained = request.getfixturevalue(family)
    path = tmp_path / "tokenizer.json"
    trained.save(path)
    chosen = trained.with_encode_options(encode_mode="fewest-tokens", tie_break="longest-last")
    line = next(line for line in lines_of(flores_sample) if chosen.encode(line) != trained.encode(line))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(line.encode() + b"\n"), encoding="utf-8"))
    assert main(["encode", "--tokenizer", str(path), "--encode-mode", "fewest-tokens", "--tie-break",
                 "longest-last"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out) == chosen.encode(line)
    with raises_code(TokenizerError, "not_exportable", value="fewest-tokens", field="encode_mode"):
        to_hf_json(chosen)
    assert to_hf_json(trained)  # the native method still exports
