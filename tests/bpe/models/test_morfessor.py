"""The morfessor family: Morfessor Baseline trained by the morfessor package, segmenting with its Viterbi search."""

from __future__ import annotations

import random
from pathlib import Path

import morfessor
import pytest

import bpe
from bpe.base import TokenizerError
from bpe.models.morfessor import MorfessorTokenizer, split_word
from bpe.pipeline.pretokenizers import get_pretokenizer
from tests.conftest import leading
from tests.errors import raises_code


@pytest.fixture(scope="module")
def turkish(embedded_text: dict[str, list[str]]) -> list[str]:
    """About 15,000 characters of the embedded Turkish training text."""
    return leading(embedded_text["tur_Latn"], 15_000)


@pytest.fixture(scope="module")
def turkish_flores(flores_sample: dict[str, list[str]]) -> list[str]:
    return flores_sample["tur_Latn"]


@pytest.fixture(scope="module")
def tokenizer(turkish: list[str]) -> MorfessorTokenizer:
    return bpe.train("morfessor", turkish, 3000, max_epochs=3)


def test_segments_like_morfessor_itself(turkish: list[str], tokenizer: MorfessorTokenizer,
                                        turkish_flores: list[str]) -> None:  # fmt: skip
    """Same training (types, seed 0, 3 epochs) straight through the package: same lexicon, same Viterbi."""
    counts: dict[str, int] = {}
    for line in turkish:
        for pretoken in get_pretokenizer("unicode").split(line):
            word = split_word(pretoken)[1]
            if not word.isspace():
                counts[word] = counts.get(word, 0) + 1
    model = morfessor.BaselineModel()
    state = random.getstate()
    random.seed(0)
    morfessor.utils.show_progress_bar = False
    model.load_data([(count, word) for word, count in sorted(counts.items())], count_modifier=lambda count: 1)
    model.train_batch(max_epochs=3)
    random.setstate(state)
    assert dict(model.get_constructions()) == tokenizer.lexicon.counts
    words = {word for line in turkish_flores for word in line.split()}
    for word in sorted(words):
        assert tokenizer.lexicon.segment(word) == model.viterbi_segment(word, addcount=0)[0], word


def test_encodes_words_into_morphs_with_the_space_on_the_first(tokenizer: MorfessorTokenizer,
                                                               turkish_flores: list[str]) -> None:  # fmt: skip
    lines = turkish_flores
    for line in lines:
        encoding = tokenizer.encode_with_spans(line)
        data, position = line.encode("utf-8"), 0
        for token, (start, end) in zip(encoding.ids, encoding.spans, strict=True):
            assert start == position and end > start
            if token != tokenizer.unk_id:
                assert data[start:end] == tokenizer.id_to_bytes(token)
            position = end
        assert position == len(data)
        if tokenizer.unk_id not in encoding.ids:
            assert tokenizer.decode(encoding.ids) == line
    pieces = [piece for line in lines for piece in tokenizer.pieces(tokenizer.encode(line))]
    assert any(piece.startswith(" ") and len(piece) > 2 for piece in pieces)  # a space glued to a morph
    assert tokenizer.pieces(tokenizer.encode_word("evlerde").ids)[0] != " "
    # a morphological segmenter splits more than it keeps whole
    assert len(pieces) > sum(len(line.split()) for line in lines)


def test_vocab_size_is_an_upper_bound(turkish: list[str], tokenizer: MorfessorTokenizer) -> None:
    small = bpe.train("morfessor", turkish, 400, max_epochs=3)
    assert small.vocab_size == 400 < tokenizer.vocab_size
    assert small.lexicon.counts == tokenizer.lexicon.counts  # the same model, fewer pieces kept
    assert tokenizer.vocab_size < 3000  # the whole lexicon fits


def test_save_load(tokenizer: MorfessorTokenizer, tmp_path: Path, turkish_flores: list[str]) -> None:
    tokenizer.save(tmp_path / "m.json")
    loaded = bpe.load(tmp_path / "m.json")
    lines = turkish_flores[:50]
    assert [loaded.encode(line) for line in lines] == [tokenizer.encode(line) for line in lines]
    assert loaded.vocab == tokenizer.vocab
    assert loaded.to_dict() == tokenizer.to_dict()


def test_training_is_deterministic_and_leaves_random_alone(turkish: list[str], tokenizer: MorfessorTokenizer) -> None:
    random.seed(123)
    expected = random.random()
    random.seed(123)
    again = bpe.train("morfessor", turkish, 3000, max_epochs=3)
    assert random.random() == expected
    assert again.to_dict() == tokenizer.to_dict()


@pytest.mark.parametrize(
    ("options", "code", "value"),
    [
        ({"dampening": "sqrt"}, "not_allowed", "sqrt"),
        ({"corpus_weight": 0}, "out_of_range", 0),
        ({"max_epochs": 0}, "out_of_range", 0),
        ({"seed": -1}, "out_of_range", -1),
        ({"min_frequency": 50}, "empty_training_input", 50),
        ({"end_of_word": "separate"}, "unknown_option", "end_of_word"),
        ({"dropout": 0.1}, "unknown_option", "dropout"),
    ],
)
def test_bad_options(options: dict[str, object], code: str, value: object) -> None:
    with raises_code(TokenizerError, code, value=value):
        bpe.train("morfessor", ["bir iki üç", "dört beş"], 300, **options)


def test_vocab_minimum() -> None:
    floor = bpe.family_class("morfessor").vocab_floor(["bir iki üç"])
    assert floor.minimum == 11 and "7 characters" in floor.parts  # 4 specials + the text's characters
    with raises_code(TokenizerError, "vocab_below_floor", value=10):
        bpe.train("morfessor", ["bir iki üç"], 10)


@pytest.mark.parametrize("language", ["tur_Latn", "rus_Cyrl"])
def test_tokens_are_morfessors_segmentation_when_the_lexicon_fits(embedded_text: dict[str, list[str]],
                                                                   flores_sample: dict[str, list[str]],
                                                                   language: str) -> None:  # fmt: skip
    """2,000 words (training words and new ones) against the package's own Viterbi segmentation: a morph
    seen only after a space in training (`` ser``) is still one token inside a new word (``kan`` + ``ser``)."""
    train = leading(embedded_text[language], 15_000)
    tokenizer = bpe.train("morfessor", train, 100_000, max_epochs=3)
    counts: dict[str, int] = {}
    for line in train:
        for pretoken in get_pretokenizer("unicode").split(line):
            word = split_word(pretoken)[1]
            if not word.isspace():
                counts[word] = counts.get(word, 0) + 1
    model = morfessor.BaselineModel()
    state = random.getstate()
    random.seed(0)
    morfessor.utils.show_progress_bar = False
    model.load_data([(count, word) for word, count in sorted(counts.items())], count_modifier=lambda count: 1)
    model.train_batch(max_epochs=3)
    random.setstate(state)
    alphabet = {char for word in counts for char in word}  # a character never seen is <unk>, not a morph
    flores_words = {word for line in flores_sample[language] for word in line.split() if word.isalpha()}
    new_words = sorted({word for word in flores_words if set(word) <= alphabet} - set(counts))
    words = (new_words + sorted(word for word in counts if word.isalpha()))[:2000]
    assert len(words) == 2000 and len(new_words) >= 200
    for word in words:
        expected = model.viterbi_segment(word, addcount=0)[0]
        pieces = tokenizer.pieces(tokenizer.encode_word(word).ids)
        assert [pieces[0].removeprefix(" "), *pieces[1:]] == expected, word  # encode_word adds the space
