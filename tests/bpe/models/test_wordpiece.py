"""wordpiece: training equals the naive course algorithm, encoding equals Hugging Face's WordPiece model.

Training is checked merge by merge against ``tests/bpe/naive_wordpiece.py`` (the course's algorithm,
recounting everything after every merge) on real text of four languages; encoding against
``tokenizers.models.WordPiece`` built from our vocabulary, on every pre-token of the FLORES lines and of
the training text.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from tokenizers.models import WordPiece

import bpe
from benchmarks.cli import main
from bpe.base import DEFAULT_SPECIAL_TOKENS, TokenizerError
from bpe.models.wordpiece import WordPieceTokenizer, alphabet, learn_merges
from bpe.pipeline.pretokenizers import get_pretokenizer
from bpe.training.counts import count_pretokens
from tests.bpe.naive_wordpiece import naive_wordpiece
from tests.conftest import FLORES_LANGUAGES, leading, same_word_arrays
from tests.errors import raises_code

N_SPECIALS = len(DEFAULT_SPECIAL_TOKENS)
TEXTS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"]


def words_of(texts: list[str], pretokenizer: str = "unicode") -> Counter[str]:
    split = get_pretokenizer(pretokenizer).split
    return Counter(pretoken for text in texts for pretoken in split(text))


def assert_same_as_naive(texts: list[str], merges: int, **options: int) -> WordPieceTokenizer:
    """Train both ways with room for ``merges`` merged entries; the vocabularies and merges are equal."""
    naive_vocab, naive_merges = naive_wordpiece(words_of(texts), merges, options.get("min_frequency", 1))
    base = len(alphabet(words_of(texts)))
    tokenizer = bpe.train("wordpiece", texts, N_SPECIALS + base + merges, **options)
    vocab = tokenizer.vocab
    assert vocab[N_SPECIALS:] == naive_vocab
    assert [(vocab[left], vocab[right]) for left, right in tokenizer.merges] == naive_merges
    return tokenizer


# -- (1) training: the naive course algorithm ----------------------------------------------


def test_the_tie_break_is_the_exact_score_then_the_count_then_code_point_order() -> None:
    # every first pair scores 1/4; y+##d is seen 3 times; a+##b and x+##b tie on count too: "a" < "x"
    words = {"ab": 2, "xb": 2, "cd": 1, "yd": 3}
    base = alphabet(words)
    pieces = list(base)
    for left, right in learn_merges(words, base, 10):
        pieces.append(pieces[left] + pieces[right][2:])
    assert pieces[len(base) :] == ["yd", "cd", "ab", "xb"]
    assert naive_wordpiece(words, 10)[0] == pieces


def test_scores_are_compared_exactly_not_as_rounded_floats() -> None:
    big = 2**60
    assert 1 / big == 1 / (big + 1)  # the same float: rounding alone would let the count decide (ab)
    words = {"yz": big, "ab": big + 1}
    base = alphabet(words)
    first = learn_merges(words, base, 1)[0]
    assert (base[first[0]], base[first[1]]) == ("y", "##z")  # 1/big > 1/(big + 1)


@pytest.mark.parametrize("min_frequency", [1, 2])
def test_edge_words_equal_the_naive_algorithm(min_frequency: int) -> None:
    """Runs of one character (overlapping pairs), words starting with ``#`` (a word-initial ``##`` piece
    is never made), one-character words, a piece reachable by two merges (abc), spaces."""
    texts = ["#### ##a ##ab a## ### #", "aaaaa aaa aa a ab abc abc bc a bc", "ab ##c abc  \n abd ab", "x"] * 2
    tokenizer = assert_same_as_naive(texts, 60, min_frequency=min_frequency)
    assert "##" not in tokenizer.vocab and "###" in tokenizer.vocab  # a ## piece, never a word-initial "##"
    ids = tokenizer.encode(texts[0])
    assert tokenizer.unk_id not in ids and tokenizer.decode(ids) == texts[0]


def test_equals_the_naive_algorithm_on_random_words() -> None:
    """Few letters, many repeats: ties, overlapping runs (``aaaa``), ``#`` words, attached spaces."""
    rng = random.Random(7)
    for _ in range(300):
        words = {
            " " * rng.randint(0, 1) + "".join(rng.choice("ab#") for _ in range(rng.randint(1, 7))): rng.randint(1, 4)
            for _ in range(rng.randint(1, 8))
        }
        min_frequency = rng.randint(1, 2)
        base = alphabet(words)
        pieces = list(base)
        for left, right in learn_merges(words, base, 40, min_frequency):
            pieces.append(pieces[left] + pieces[right][2:])
        assert naive_wordpiece(words, 40, min_frequency)[0] == pieces, words


@pytest.mark.parametrize("language", FLORES_LANGUAGES)
def test_equals_the_naive_algorithm_on_the_sample(language: str, flores_sample: dict[str, list[str]]) -> None:
    assert_same_as_naive(flores_sample[language][:20], 150)
    assert_same_as_naive(flores_sample[language][:20], 100, min_frequency=2)


@pytest.mark.parametrize("language", FLORES_LANGUAGES)
def test_equals_the_naive_algorithm_on_the_embedded_corpora(language: str, embedded_text: dict[str, list[str]]) -> None:
    assert_same_as_naive(leading(embedded_text[language], 3_000), 150)


def test_equals_the_naive_algorithm_on_the_full_data_root(flores_lines: dict[str, list[str]]) -> None:
    """The last lines of FLORES devtest, which the shipped sample does not hold (skips without the full
    data root)."""
    assert_same_as_naive([line for lines in flores_lines.values() for line in lines[-8:]], 200)


def test_training_ignores_the_order_of_the_text_and_equals_training_on_counts() -> None:
    lines = [line for line in (Path(__file__).parents[2] / "fixtures/data/flores/tur_Latn.txt")
             .read_text(encoding="utf-8").splitlines()[:50]]  # fmt: skip
    trained = bpe.train("wordpiece", lines, 900).to_dict()
    shuffled = lines[::-1]
    random.Random(3).shuffle(shuffled)
    assert bpe.train("wordpiece", shuffled, 900).to_dict() == trained
    assert bpe.train_from_counts("wordpiece", count_pretokens(lines, "unicode"), 900).to_dict() == trained


def test_a_smaller_size_is_the_start_of_a_larger_one(flores_sample: dict[str, list[str]]) -> None:
    """Training stops at the same merge whatever the size: the family is derivable."""
    lines = [line for lines in flores_sample.values() for line in lines[:25]]
    sizes = [2400, 2000, 1700]
    largest = bpe.train("wordpiece", lines, sizes[0])
    assert bpe.family_class("wordpiece").facts.derivable
    for size in sizes[1:]:
        assert bpe.derive(largest, size).to_dict() == bpe.train("wordpiece", lines, size).to_dict()
    swept = bpe.train_sweep("wordpiece", lines, sizes)
    assert {size: tokenizer.to_dict() for size, tokenizer in swept.items()} == {
        size: bpe.train("wordpiece", lines, size).to_dict() for size in sizes
    }
    floor = N_SPECIALS + len(alphabet(words_of(lines)))
    with raises_code(TokenizerError, "vocab_below_floor", value=floor - 1) as from_training:
        bpe.train("wordpiece", lines, floor - 1)
    with raises_code(TokenizerError, "vocab_below_floor", value=floor - 1) as from_derivation:
        bpe.derive(largest, floor - 1)
    assert str(from_derivation.value) == str(from_training.value)
    assert bpe.family_class("wordpiece").vocab_floor(lines).minimum == floor


def test_training_stops_when_no_pair_is_frequent_enough() -> None:
    tokenizer = bpe.train("wordpiece", TEXTS, 10_000, min_frequency=3)
    assert tokenizer.vocab_size < 10_000
    floor = N_SPECIALS + len(alphabet(words_of(TEXTS)))
    assert bpe.train("wordpiece", TEXTS, 10_000, min_frequency=100).vocab_size == floor


# -- (2) encoding: Hugging Face's WordPiece model ----------------------------------------


@pytest.fixture(scope="module")
def trained(embedded_text: dict[str, list[str]]) -> WordPieceTokenizer:
    """About 40,000 characters per language."""
    return bpe.train("wordpiece", [text for texts in embedded_text.values() for text in leading(texts, 40_000)], 6000)


def hf_model(tokenizer: WordPieceTokenizer, max_input_chars_per_word: int = 100) -> WordPiece:
    vocab: dict[str, int] = {}
    for token_id, piece in enumerate(tokenizer.vocab):
        if token_id >= len(tokenizer.special_tokens) or piece not in vocab:
            vocab[piece] = token_id  # an entry spelled like a special is the entry, not the special
    return WordPiece(vocab, unk_token="<unk>", continuing_subword_prefix="##",
                     max_input_chars_per_word=max_input_chars_per_word)  # fmt: skip


def hf_ids(model: WordPiece, tokenizer: WordPieceTokenizer, text: str) -> list[int]:
    """HF's WordPiece on each of our pre-tokens."""
    return [token.id for pretoken in tokenizer.pretokenizer.split(text) for token in model.tokenize(pretoken)]


def test_encoding_equals_hugging_face_wordpiece(
    trained: WordPieceTokenizer, flores: dict[str, list[str]], embedded_text: dict[str, list[str]]
) -> None:
    """Every line but those holding ``##``: HF looks a word's first piece up as a plain string, so a word
    starting with ``##`` could match a ``##`` entry (``##a`` for the word ``##a``), which we never let start
    a word (checked to be rare)."""
    model = hf_model(trained)
    lines = [line for lines in flores.values() for line in lines]
    lines += [text for texts in embedded_text.values() for text in leading(texts, 60_000)]
    long_word = "a" * 100
    lines += [f"{long_word} {long_word}a x{long_word}", "<unk> <s>", "ⓧⓨ unseen ⓧ"]
    compared = left_out = unknown = 0
    for line in lines:
        if "##" in line:
            left_out += 1
            continue
        ours = trained.encode(line)
        assert ours == hf_ids(model, trained, line), line
        compared += 1
        unknown += ours.count(trained.unk_id)
    assert left_out < 0.01 * len(lines) and unknown > 0 and compared > 400
    assert trained.encode(long_word) != [trained.unk_id]  # 100 characters: encoded
    assert trained.encode(f" {long_word}") == [trained.unk_id]  # 101 with its space: one <unk>


def test_max_input_chars_per_word_is_an_encode_option(trained: WordPieceTokenizer) -> None:
    short = trained.with_encode_options(max_input_chars_per_word=5)
    model = hf_model(trained, 5)
    line = "The pilot was identified as Squadron Leader Dilokrit Pattavee."
    assert short.encode(line) == hf_ids(model, trained, line) != trained.encode(line)
    assert short.vocab == trained.vocab and trained.options.max_input_chars_per_word == 100
    assert WordPieceTokenizer.options_model.encode_option_names() == ("encode_mode", "tie_break",
                                                                      "max_input_chars_per_word")  # fmt: skip


# -- (3) decoding and spans ---------------------------------------------------------------


def test_spans_tile_the_text_and_decoding_is_lossless_without_unknowns(
    trained: WordPieceTokenizer, flores: dict[str, list[str]]
) -> None:
    lossless = 0
    lines = [line for lines in flores.values() for line in lines]
    for line in lines:
        encoding = trained.encode_with_spans(line)
        data, position = line.encode("utf-8"), 0
        for token_id, (start, end) in zip(encoding.ids, encoding.spans, strict=True):
            assert start == position < end
            if token_id == trained.unk_id:  # a whole word: its pre-token's bytes
                assert data[start:end].decode("utf-8") in trained.pretokenizer.split(line)
            else:
                assert data[start:end] == trained.id_to_bytes(token_id)
            position = end
        assert position == len(data)
        if trained.unk_id not in encoding.ids:
            assert trained.decode(encoding.ids) == line
            lossless += 1
    assert lossless > len(lines) / 2
    words = [word for line in lines[:200] for word in line.split()]
    assert same_word_arrays(trained.encode_word_arrays(words), trained.encode_words(words))
    assert trained.encode_texts(lines[:50]) == [trained.encode_with_spans(line) for line in lines[:50]]


def test_pieces_show_the_continuation_prefix() -> None:
    tokenizer = bpe.train("wordpiece", TEXTS, 200)
    assert tokenizer.pieces(tokenizer.encode("the cat")) == ["the", " cat"]
    assert tokenizer.pieces(tokenizer.encode(" catat")) == [" cat", "##at"]
    assert tokenizer.decode(tokenizer.encode("the cata")) == "the cata"
    # no "##s": the whole word is unknown, as BERT's
    assert tokenizer.encode("the cats zebra") == [tokenizer.vocab.index("the"), tokenizer.unk_id, tokenizer.unk_id]
    assert tokenizer.encode_with_spans("the cats zebra").spans == [(0, 3), (3, 8), (8, 14)]


# -- (4) saving and loading ---------------------------------------------------------------


def test_save_and_load_round_trip(trained: WordPieceTokenizer, tmp_path: Path, flores: dict[str, list[str]]) -> None:
    path = tmp_path / "wordpiece.json"
    trained.save(path)
    loaded = bpe.load(path)
    assert isinstance(loaded, WordPieceTokenizer) and loaded.to_dict() == trained.to_dict()
    body = json.loads(path.read_text(encoding="utf-8"))
    assert list(body) == ["format", "format_version", "family", "config", "specials", "vocab", "merges"]
    assert body["config"] == {"pretokenizer": "unicode", "normalizer": "none", "min_frequency": 1,
                              "encode_mode": "longest-prefix", "tie_break": "longest-first",
                              "max_input_chars_per_word": 100}  # fmt: skip
    lines = [line for lines in flores.values() for line in lines[:30]]
    assert [loaded.encode_with_spans(line) for line in lines] == [trained.encode_with_spans(line) for line in lines]
    extra = bpe.train("wordpiece", TEXTS, 200, special_tokens=["<mask>"], max_input_chars_per_word=7)
    assert WordPieceTokenizer.from_dict(extra.to_dict()).to_dict() == extra.to_dict()
    assert extra.special_tokens[-1] == "<mask>" and extra.options.max_input_chars_per_word == 7


def test_a_damaged_file_is_refused() -> None:
    body = bpe.train("wordpiece", TEXTS, 200).to_dict()
    merged = len(body["vocab"]) - len(body["merges"])
    edited = {**body, "vocab": [*body["vocab"][:merged], "zzz", *body["vocab"][merged + 1 :]]}
    with raises_code(TokenizerError, "bad_tokenizer_file", field=f"vocab[{merged}]"):
        WordPieceTokenizer.from_dict(edited)
    with raises_code(TokenizerError, "bad_tokenizer_file", field="merges[0]"):
        WordPieceTokenizer.from_dict({**body, "merges": [[1, 2, 3], *body["merges"][1:]]})
    with raises_code(TokenizerError, "bad_vocabulary"):  # a merge whose second piece is not a ## piece
        WordPieceTokenizer.from_dict({**body, "merges": [[5, 5], *body["merges"][1:]]})
    with raises_code(TokenizerError, "bad_tokenizer_file", field="vocab"):
        WordPieceTokenizer.from_dict({**body, "vocab": body["vocab"][:6]})
    with raises_code(TokenizerError, "bad_vocabulary", value="ab"):  # not one character
        WordPieceTokenizer(["a", "ab"])
    with raises_code(TokenizerError, "bad_vocabulary"):  # the word-initial "##" would read as a ## piece
        WordPieceTokenizer(["#", "###"], [(N_SPECIALS, N_SPECIALS + 1)])
    with raises_code(TokenizerError, "bad_vocabulary"):  # "ab" twice
        WordPieceTokenizer(["a", "##b"], [(N_SPECIALS, N_SPECIALS + 1), (N_SPECIALS, N_SPECIALS + 1)])


# -- (5) options --------------------------------------------------------------------------


def test_options_are_validated() -> None:
    with raises_code(TokenizerError, "unknown_option", value="end_of_word"):
        bpe.train("wordpiece", TEXTS, 300, end_of_word="none")
    bad_values = [
        ({"min_frequency": 0}, "out_of_range"),
        ({"max_input_chars_per_word": 0}, "out_of_range"),
        ({"max_input_chars_per_word": "100"}, "wrong_type"),
        ({"pretokenizer": "bert"}, "not_allowed"),
    ]
    for options, code in bad_values:
        [(name, value)] = options.items()
        with raises_code(TokenizerError, code, field=name, value=value):
            bpe.train("wordpiece", TEXTS, 300, **options)
    body = bpe.train("wordpiece", TEXTS, 300).to_dict()
    with raises_code(TokenizerError, "out_of_range", field="config.max_input_chars_per_word", value=-1):
        WordPieceTokenizer.from_dict({**body, "config": {**body["config"], "max_input_chars_per_word": -1}})
    with raises_code(TokenizerError, "vocab_below_floor"):
        bpe.train("wordpiece", TEXTS, 10)


def test_other_pipelines_train_and_round_trip() -> None:
    lines = ["Hello, world!!! Merhaba dünya.", "  spaced\ttext\n\nnew   lines ", "한국어 문장입니다."] * 3
    for options in ({"pretokenizer": "whitespace"}, {"normalizer": "jamo"}, {"pretokenizer": "none"}):
        tokenizer = bpe.train("wordpiece", lines, 120, **options)
        for line in lines:
            ids = tokenizer.encode(line)
            assert tokenizer.unk_id not in ids and tokenizer.decode(ids) == line, options


# -- (6) the CLI ----------------------------------------------------------------------------


def test_trains_and_encodes_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "train.txt"
    text.write_text("the cat sat\non the mat\n", encoding="utf-8")
    saved = tmp_path / "wordpiece.json"
    argv = ["train", "--kind", "wordpiece", "--vocab-size", "60", "--min-frequency", "1", "--input", str(text)]
    assert main([*argv, "--out", str(saved)]) == 0
    assert json.loads(saved.read_text(encoding="utf-8"))["family"] == "wordpiece"
    capsys.readouterr()
    assert main(["encode", "--tokenizer", str(saved), "--input", str(text), "--max-input-chars-per-word", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    loaded = bpe.load(saved).with_encode_options(max_input_chars_per_word=3)
    assert [json.loads(line) for line in lines] == [loaded.encode("the cat sat"), loaded.encode("on the mat")]
    assert loaded.encode(" mat") == [loaded.unk_id] and bpe.load(saved).decode(bpe.load(saved).encode(" mat")) == " mat"
