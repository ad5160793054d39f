"""word, char, char-bpe and byte-bpe (morfessor and bpe-knockout have their own tests): trained on the
embedded corpora, checked on FLORES (never trained on).

Round trips, byte spans, save/load, determinism, specials, each family's own
rules, and one clear TokenizerError for every kind of bad input.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe
from bpe.base import Tokenizer, TokenizerError
from bpe.models.byte_bpe import ByteBPETokenizer
from bpe.models.char import CharTokenizer
from bpe.models.char_bpe import CharBPETokenizer
from bpe.models.word import WordTokenizer
from tests.conftest import leading
from tests.errors import UNSET, raises_code

CASES = [
    ("word", 3000, {}),
    ("char", 400, {}),
    ("char-bpe", 2000, {}),
    ("char-bpe", 2000, {"end_of_word": "attached"}),
    ("char-bpe", 1500, {"end_of_word": "none", "pretokenizer": "whitespace"}),
    ("char-bpe", 1200, {"limit_alphabet": 300, "encode_mode": "greedy"}),
    ("byte-bpe", 1500, {}),
    ("byte-bpe", 1500, {"pretokenizer": "cl100k", "encode_mode": "greedy"}),
]


@pytest.fixture(scope="module")
def training_text(embedded_text: dict[str, list[str]]) -> list[str]:
    """About 40,000 characters per language."""
    return [text for texts in embedded_text.values() for text in leading(texts, 40_000)]


@pytest.fixture(scope="module")
def eval_lines(flores_sample: dict[str, list[str]]) -> list[str]:
    return [line for lines in flores_sample.values() for line in lines]


@pytest.fixture(scope="module", params=CASES, ids=lambda case: f"{case[0]}-{case[1]}-{case[2]}")
def trained(request: pytest.FixtureRequest, training_text: list[str]) -> tuple[Tokenizer, int]:
    kind, vocab_size, options = request.param
    return bpe.train(kind, training_text, vocab_size, **options), vocab_size


def check_spans(tokenizer: Tokenizer, text: str) -> list[int]:
    """Spans tile the text's bytes in order; a known token's span holds exactly its bytes."""
    encoding = tokenizer.encode_with_spans(text)
    data = text.encode("utf-8")
    position = 0
    for token_id, (start, end) in zip(encoding.ids, encoding.spans, strict=True):
        assert start == position and end >= start
        if token_id == tokenizer.unk_id:
            assert end > start and data[start:end].decode("utf-8")  # a whole unknown character or word
        else:
            assert data[start:end] == tokenizer.id_to_bytes(token_id)
        position = end
    assert position == len(data)
    return encoding.ids


def test_reaches_vocab_size_and_round_trips_flores(trained: tuple[Tokenizer, int], eval_lines: list[str]) -> None:
    tokenizer, vocab_size = trained
    assert tokenizer.vocab_size == vocab_size
    lossless = 0
    for line in eval_lines:
        ids = check_spans(tokenizer, line)
        if tokenizer.unk_id not in ids:
            assert tokenizer.decode(ids) == line
            lossless += 1
    # every family decodes most lines losslessly, but word (which meets unseen words in nearly every line)
    # and a capped alphabet (which drops rare characters: see test_capped_alphabet_loses_exactly_...)
    capped = tokenizer.config().get("limit_alphabet") is not None
    assert lossless >= (0 if tokenizer.family == "word" or capped else 0.5 * len(eval_lines))
    if tokenizer.family == "byte-bpe":
        assert lossless == len(eval_lines)


def test_save_load_gives_the_same_tokenizer(
    trained: tuple[Tokenizer, int], tmp_path: Path, eval_lines: list[str]
) -> None:
    tokenizer, _ = trained
    path = tmp_path / "tokenizer.json"
    tokenizer.save(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["family"] == tokenizer.family
    assert document["vocab"][:4] == ["<pad>", "<unk>", "<s>", "</s>"] and len(document["vocab"]) == tokenizer.vocab_size
    loaded = bpe.load(path)
    assert type(loaded) is type(tokenizer) and loaded.to_dict() == tokenizer.to_dict()
    for line in eval_lines[::25]:
        assert loaded.encode_with_spans(line) == tokenizer.encode_with_spans(line)


@pytest.mark.parametrize(("kind", "options"), [("char-bpe", {"end_of_word": "attached"}), ("byte-bpe", {})])
def test_training_is_deterministic(kind: str, options: dict[str, Any], training_text: list[str]) -> None:
    texts = training_text[::4]
    first = bpe.train(kind, texts, 1500, **options).to_dict()
    assert json.dumps(bpe.train(kind, list(reversed(texts)), 1500, **options).to_dict()) == json.dumps(first)


@pytest.mark.parametrize("kind", ["char-bpe", "byte-bpe"])
def test_progress_reports_merges(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[tuple[int, int]] = []
    size = 300 if kind == "byte-bpe" else 30
    tokenizer = bpe.train(kind, ["low lower lowest newer"], size, progress=lambda *args: calls.append(args))
    merges = len(tokenizer.merges)
    assert merges > 0 and calls[-1] == (merges, size - tokenizer.first_merge_id)
    bpe.train(kind, ["low lower lowest newer"], size, progress=True)  # a tqdm bar on stderr
    assert "merges" in capsys.readouterr().err


# -- word -----------------------------------------------------------------------


def test_word_keeps_the_most_frequent_and_never_drops_unknown_words() -> None:
    tokenizer = WordTokenizer.train(["b a", "b a", "c a", "d"], 4 + 3)
    # counts: " a" 3, "b" 2, then "c" and "d" 1 each: code point order keeps "c"
    assert tokenizer.vocab[4:] == [" a", "b", "c"]
    encoding = tokenizer.encode_with_spans("d a")
    assert encoding.ids == [tokenizer.unk_id, 4] and encoding.spans == [(0, 1), (1, 3)]


def test_word_min_frequency() -> None:
    assert WordTokenizer.train(["b a", "b a", "c a"], 100, min_frequency=2).vocab[4:] == [" a", "b"]


# -- char -----------------------------------------------------------------------


def test_char_caps_by_frequency_orders_by_code_point() -> None:
    tokenizer = CharTokenizer.train(["çaab", "ab"], 4 + 2)  # a 3, b 2, ç 1
    assert tokenizer.vocab[4:] == ["a", "b"]
    encoding = tokenizer.encode_with_spans("çab")
    assert encoding.ids == [tokenizer.unk_id, 4, 5] and encoding.spans == [(0, 2), (2, 3), (3, 4)]


# -- char-bpe ---------------------------------------------------------------------


def test_char_bpe_vocab_minimum_names_the_minimum(embedded_text: dict[str, list[str]]) -> None:
    korean = embedded_text["kor_Hang"]  # 551 distinct characters
    alphabet = len({char for line in korean for char in line})
    minimum = 4 + 1 + alphabet
    floor = CharBPETokenizer.vocab_floor(korean)
    assert floor.minimum == minimum and "limit_alphabet" in floor.hint  # the hint says how to lower it
    with raises_code(TokenizerError, "vocab_below_floor", value=500):
        CharBPETokenizer.train(korean, 500)
    limited = CharBPETokenizer.train(korean, 500, limit_alphabet=200)
    assert limited.vocab_size == 500 and limited.first_merge_id == 4 + 1 + 200
    assert limited.unk_id in limited.encode("".join(korean[:20]))
    assert CharBPETokenizer.vocab_floor(korean, limit_alphabet=200).minimum == 205
    with raises_code(TokenizerError, "vocab_below_floor", value=204):
        CharBPETokenizer.train(korean, 204, limit_alphabet=200)


def test_capped_alphabet_loses_exactly_the_lines_with_dropped_characters(
    training_text: list[str], eval_lines: list[str]
) -> None:
    tokenizer = CharBPETokenizer.train(training_text, 1200, limit_alphabet=300)
    alphabet = set(tokenizer.vocab[5 : tokenizer.first_merge_id])  # after the specials and "</w>"
    assert len(alphabet) == 300 and len({char for text in training_text for char in text}) > 300
    has_unk = [tokenizer.unk_id in tokenizer.encode(line) for line in eval_lines]
    assert has_unk == [not set(line) <= alphabet for line in eval_lines]
    assert any(has_unk) and not all(has_unk)


def test_char_bpe_unknown_character_is_unk_with_its_bytes() -> None:
    tokenizer = CharBPETokenizer.train(["aa ab", "ab"], 20)
    encoding = tokenizer.encode_with_spans("aç")
    assert tokenizer.pieces(encoding.ids) == ["a", "<unk>", "</w>"]
    assert encoding.spans == [(0, 1), (1, 3), (3, 3)]


def test_char_bpe_end_of_word_modes() -> None:
    texts = ["low lower lowest", "low low"]
    separate = CharBPETokenizer.train(texts, 100, min_frequency=1)
    assert separate.vocab[4] == "</w>" and "w</w>" not in separate.vocab[: separate.first_merge_id]
    assert separate.pieces(separate.encode("low")) == ["low</w>"]
    attached = CharBPETokenizer.train(texts, 100, end_of_word="attached", min_frequency=1)
    base = attached.vocab[4 : attached.first_merge_id]
    assert "w</w>" in base and "w" in base and "t</w>" in base and "t" not in base
    assert attached.pieces(attached.encode("lot")) == ["lo", "t</w>"]
    assert attached.pieces(attached.encode("tw")) == ["<unk>", "w</w>"]  # "t" was only ever word-final
    plain = CharBPETokenizer.train(texts, 100, end_of_word="none", min_frequency=1)
    assert all("</w>" not in piece for piece in plain.vocab)


# -- byte-bpe ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_byte_bpe(training_text: list[str]) -> ByteBPETokenizer:
    return ByteBPETokenizer.train(training_text[::8], 600)


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_byte_bpe_round_trips_any_text(small_byte_bpe: ByteBPETokenizer, text: str) -> None:
    assert small_byte_bpe.decode(check_spans(small_byte_bpe, text)) == text


def test_byte_bpe_pieces_and_cut_characters(small_byte_bpe: ByteBPETokenizer) -> None:
    assert small_byte_bpe.vocab[4 + ord(" ")] == "Ġ" and small_byte_bpe.vocab[4 + ord("\n")] == "Ċ"
    first_byte_of_han = 4 + "한".encode()[0]
    assert small_byte_bpe.decode([first_byte_of_han]) == "\ufffd"  # never raises
    assert small_byte_bpe.unk_id not in small_byte_bpe.encode("\x00\U0010ffff 漢字 🙂")


def test_longest_prefix_mode_is_longest_match(small_byte_bpe: ByteBPETokenizer, eval_lines: list[str]) -> None:
    greedy = small_byte_bpe.with_encode_options(encode_mode="greedy")  # the mode's earlier name
    assert greedy.encode_mode == "longest-prefix" and small_byte_bpe.encode_mode == "merges"
    table = {piece: token_id for token_id, piece in reversed(list(enumerate(greedy.vocab)))}
    for line in eval_lines[::10]:
        ids = check_spans(greedy, line)
        assert greedy.decode(ids) == line
        for token_id, pretoken_piece in zip(ids, greedy.pieces(ids), strict=True):
            assert table[pretoken_piece] == token_id  # the lowest id spelling the piece
    # the ablation really differs somewhere from merge-order encoding
    assert any(greedy.encode(line) != small_byte_bpe.encode(line) for line in eval_lines)


# -- specials ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["word", "char", "char-bpe", "byte-bpe"])
def test_specials_are_literal_unless_allowed(kind: str) -> None:
    texts = ["<s> hello </s>", "hello world", "<mask> hello"]
    tokenizer = bpe.train(kind, texts, 400 if kind == "byte-bpe" else 40, special_tokens=["<mask>"])
    assert tokenizer.special_tokens == ("<pad>", "<unk>", "<s>", "</s>", "<mask>")
    text = "<s>hello<mask></s>"
    literal = tokenizer.encode(text)
    assert not {2, 3, 4} & set(literal)
    encoding = tokenizer.encode_with_spans(text, allowed_special=True)
    assert encoding.ids[0] == 2 and encoding.ids[-1] == 3 and 4 in encoding.ids
    assert encoding.spans[0] == (0, 3) and encoding.spans[-1] == (len(text) - 4, len(text))
    assert tokenizer.decode(encoding.ids) == text


def test_duplicate_special_token_is_an_error() -> None:
    with raises_code(TokenizerError, "duplicate_special_token", value="<s>"):
        bpe.train("byte-bpe", ["text"], 300, special_tokens=["<s>"])


# -- bad input --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "vocab_size", "options", "code", "field", "value"),
    [
        ("byte-bpe", "300", {}, "wrong_type", "vocab_size", "300"),
        ("char-bpe", True, {}, "wrong_type", "vocab_size", True),
        ("word", 1.5, {}, "wrong_type", "vocab_size", 1.5),
        ("byte-bpe", 259, {}, "vocab_below_floor", None, 259),
        ("word", 4, {}, "vocab_below_floor", None, 4),
        ("char", 4, {}, "vocab_below_floor", None, 4),
        ("char-bpe", 300, {"min_frequency": 0}, "out_of_range", "min_frequency", 0),
        ("char-bpe", 300, {"limit_alphabet": "50"}, "wrong_type", "limit_alphabet", "50"),
        ("char-bpe", 300, {"limit_alphabet": 0}, "out_of_range", "limit_alphabet", 0),
        ("word", 300, {"min_frequency": False}, "wrong_type", "min_frequency", False),
        ("char-bpe", 300, {"pretokenizer": "bert"}, "not_allowed", "pretokenizer", "bert"),
        ("char-bpe", 300, {"end_of_word": "suffix"}, "not_allowed", "end_of_word", "suffix"),
        ("byte-bpe", 300, {"encode_mode": "fast"}, "not_allowed", "encode_mode", "fast"),
        ("byte-bpe", 300, {"end_of_word": "none"}, "unknown_option", None, "end_of_word"),
        ("char", 300, {"pretokenizer": "gpt2"}, "unknown_option", None, "pretokenizer"),
    ],
)
def test_bad_options(
    kind: str, vocab_size: Any, options: dict[str, Any], code: str, field: str | None, value: Any
) -> None:
    with raises_code(TokenizerError, code, value=value, field=field):
        bpe.train(kind, ["some text", "more text"], vocab_size, **options)


def test_unset_options_are_ignored() -> None:
    assert bpe.train("byte-bpe", ["some text"], 300, end_of_word=None, limit_alphabet=None).vocab_size > 256


@pytest.mark.parametrize("kind", ["word", "char", "char-bpe", "byte-bpe"])
@pytest.mark.parametrize("texts", [[], ["", " \n\t "]])
def test_empty_training_input(kind: str, texts: list[str]) -> None:
    with raises_code(TokenizerError, "empty_training_input"):
        bpe.train(kind, texts, 1000)


@pytest.mark.parametrize("kind", ["word", "char", "char-bpe", "byte-bpe"])
def test_lone_surrogates_are_refused(kind: str) -> None:
    with raises_code(TokenizerError, "lone_surrogate", value="\ud800") as caught:
        bpe.train(kind, ["fine", "bad \ud800"], 1000)
    assert "#1" in str(caught.value)  # the message names which training text
    tokenizer = bpe.train(kind, ["fine text"], 300)
    with raises_code(TokenizerError, "lone_surrogate", value="\udfff"):
        tokenizer.encode("bad \udfff")


def test_unknown_kind() -> None:
    with raises_code(TokenizerError, "unknown_family", value="bert"):
        bpe.train("bert", ["text"], 100)


def test_bad_ids_and_text(small_byte_bpe: ByteBPETokenizer) -> None:
    with raises_code(TokenizerError, "token_id_out_of_range", value=9999):
        small_byte_bpe.decode([5, 9999])
    with raises_code(TokenizerError, "token_id_out_of_range", value=-1):  # the first bad id is named
        small_byte_bpe.decode([5, -1, 9999])
    with raises_code(TokenizerError, "token_id_not_integer", value=True):  # a bool is no id
        small_byte_bpe.decode([5, True])
    with raises_code(TokenizerError, "token_id_not_integer", value=5.0):
        small_byte_bpe.decode([5.0])  # type: ignore[list-item]
    with raises_code(TokenizerError, "token_id_out_of_range", value=-1):
        small_byte_bpe.id_to_piece(-1)
    with raises_code(TokenizerError, "token_id_not_integer", value="5"):
        small_byte_bpe.id_to_bytes("5")  # type: ignore[arg-type]
    with raises_code(TokenizerError, "wrong_type", value=b"bytes"):
        small_byte_bpe.encode(b"bytes")  # type: ignore[arg-type]


def mutated(body: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    body = json.loads(json.dumps(body))
    target = body
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return body


DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "code", "field", "offending"),
    [
        (["config"], DELETE, "missing_key", "config", "config"),
        (["config", "end_of_word"], "suffix", "not_allowed", "config.end_of_word", "suffix"),
        (["config", "min_frequency"], "2", "wrong_type", "config.min_frequency", "2"),
        (["config", "pretokenizer"], 7, "not_allowed", "config.pretokenizer", 7),
        (["config", "dropout"], 0.5, "table_rule", "config", "dropout"),
        (["config", "colour"], "red", "unknown_key", "config", "colour"),
        (["specials"], ["<pad>", "<s>"], "bad_tokenizer_file", "specials", ["<pad>", "<s>"]),
        (["vocab", 9], "zz", "bad_tokenizer_file", "vocab[9]", "zz"),
        (["vocab", 1], "<UNK>", "bad_tokenizer_file", "vocab", None),
        (["merges"], "a b", "wrong_type", "merges", UNSET),  # the message names the field
        (["merges", 0], [3, 5], "bad_tokenizer_file", "merges[0]", [3, 5]),
        (["merges", 1], [4, 99], "bad_tokenizer_file", "merges[1]", [4, 99]),
        (["merges", 0], [4], "bad_tokenizer_file", "merges[0]", [4]),
        (["merges", 1], "4 5", "bad_tokenizer_file", "merges[1]", "4 5"),
    ],
)
def test_malformed_char_bpe_body(path: list[Any], value: Any, code: str, field: str, offending: Any) -> None:
    body = CharBPETokenizer.train(["ab ab abc", "abc"], 12, min_frequency=1, encode_mode="longest-prefix").to_dict()
    assert body["vocab"][4:9] == ["</w>", " ", "a", "b", "c"] and len(body["merges"]) == 3
    assert CharBPETokenizer.from_dict(body).to_dict() == body
    with raises_code(TokenizerError, code, value=offending, field=field):
        CharBPETokenizer.from_dict(mutated(body, path, value))


def test_malformed_byte_bpe_body_and_file(tmp_path: Path) -> None:
    tokenizer = ByteBPETokenizer.train(["ab ab abc"], 262)
    body = tokenizer.to_dict()
    with raises_code(TokenizerError, "bad_tokenizer_file", field="vocab"):
        ByteBPETokenizer.from_dict(mutated(body, ["vocab", 4], "x"))
    with raises_code(TokenizerError, "bad_tokenizer_file", value=body["merges"][0], field="merges[1]"):
        ByteBPETokenizer.from_dict(mutated(body, ["merges", 1], body["merges"][0]))
    path = tmp_path / "t.json"
    tokenizer.save(path)
    document = json.loads(path.read_text())
    document["merges"] = [[1000, 1001]]
    path.write_text(json.dumps(document))
    with raises_code(TokenizerError, "bad_tokenizer_file", value=[1000, 1001], field="merges[0]"):
        bpe.load(path)


def test_malformed_word_and_char_bodies() -> None:
    word = WordTokenizer.train(["a b"], 10).to_dict()
    with raises_code(TokenizerError, "bad_vocabulary"):
        WordTokenizer.from_dict(mutated(word, ["vocab", 5], word["vocab"][4]))
    char = CharTokenizer.train(["ab"], 10).to_dict()
    with raises_code(TokenizerError, "bad_vocabulary", value="ab"):
        CharTokenizer.from_dict(mutated(char, ["vocab", 4], "ab"))


def test_unicode_pretokenizer_keeps_decomposed_words_whole() -> None:
    text = unicodedata.normalize("NFD", "café 한국어 café")
    tokenizer = WordTokenizer.train([text], 10)
    assert tokenizer.pieces(tokenizer.encode(text)) == [
        unicodedata.normalize("NFD", w) for w in ["café", " 한국어", " café"]
    ]
