"""superbpe: the two stages against a naive reimplementation, superwords only after the transition, the
transition's checks, saving, deriving and the Hugging Face export."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from tokenizers import Tokenizer

import bpe
from bpe.export.hf_export import to_hf_json
from bpe.models.superbpe import CLOSED_ENDS, SENTENCE_ENDS, STAGE2_CHUNKERS, SuperBPETokenizer
from bpe.training.counts import count_pretokens
from tests.bpe.naive_superbpe import naive_superbpe, stage2_chunks
from tests.conftest import leading
from tests.errors import raises_code

# a space, then something that is not one, after the start: the token covers (a part of) two words
SPANS_WORDS = re.compile(r"\S\s+\S|\S\s+$")


def random_corpus(seed: int, lines: int = 120) -> list[str]:
    """Sentences of a small lexicon with commas, sentence ends, digits and the odd Korean word, seeded."""
    rng = random.Random(seed)
    lexicon = ["the", "cat", "sat", "on", "a", "mat", "of", "in", "new", "york", "by", "way", "한국", "어"]
    corpus = []
    for _ in range(lines):
        words = [rng.choice(lexicon) for _ in range(rng.randint(3, 12))]
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), str(rng.randint(0, 99999)))
        text = " ".join(words) + rng.choice([".", "!", "?", ",", ""])
        corpus.append(text + (" " + " ".join(rng.sample(lexicon, 3)) + "." if rng.random() < 0.5 else ""))
    return corpus


def test_stage2_chunks_are_the_loop_and_tile_the_text(flores: dict[str, list[str]]) -> None:
    rng = random.Random(7)
    alphabet = [*"ab .!?x\n\t12 ,;", *SENTENCE_ENDS, *CLOSED_ENDS, "١", "½", "한"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(3000)]
    texts += [line for lines in flores.values() for line in lines[:200]]
    for split_sentences, chunker in STAGE2_CHUNKERS.items():
        for text in texts:
            chunks = chunker.split(text)
            assert chunks == stage2_chunks(text, split_sentences), text
            assert "".join(chunks) == text and all(chunks)
    assert STAGE2_CHUNKERS[True].split("It rained. Then 1234567 fell。次") == [
        "It rained.", " Then ", "1", "234", "567", " fell。", "次"]  # fmt: skip


def _cases() -> list:
    return [
        pytest.param("embedded", "eng_Latn", {}, id="embedded-eng"),
        pytest.param("embedded", "tur_Latn", {"min_frequency": 1}, id="embedded-tur-min1"),
        pytest.param("flores", "rus_Cyrl", {}, id="flores-rus"),
        pytest.param("flores", "kor_Hang", {"split_sentences": False}, id="flores-kor-digits-only"),
        pytest.param("random", 3, {}, id="random-3"),
        pytest.param("random", 11, {"split_sentences": False, "min_frequency": 1}, id="random-11-digits-only"),
        pytest.param(
            "flores", "eng_Latn", {"transition": 1000, "vocab": 1400}, id="flores-eng-large", marks=pytest.mark.slow
        ),
    ]


@pytest.mark.parametrize(("source", "key", "options"), _cases())
def test_merges_are_the_naive_two_stages(
    source: str, key: object, options: dict, embedded_text: dict[str, list[str]], flores: dict[str, list[str]]
) -> None:
    options = dict(options)
    vocab_size = options.pop("vocab", 520)
    transition = options.pop("transition", 400)
    if source == "embedded":
        texts = leading(embedded_text[str(key)], 5000)
    elif source == "flores":
        texts = flores[str(key)][: 60 if vocab_size > 600 else 25]
    else:
        texts = random_corpus(int(key))
    ours = bpe.train("superbpe", texts, vocab_size, transition=transition, **options)
    merges, stage1 = naive_superbpe(texts, vocab_size, transition, **options)
    assert ours.stage1_merges == stage1
    assert ours.merges == merges
    assert len(merges) > stage1  # stage 2 learned something


@pytest.fixture(scope="module")
def english(embedded_text: dict[str, list[str]]) -> SuperBPETokenizer:
    return bpe.train("superbpe", embedded_text["eng_Latn"], 8000, transition=4000)


def test_stage1_is_byte_bpe_at_the_transition(embedded_text: dict[str, list[str]]) -> None:
    texts = leading(embedded_text["tur_Latn"], 100_000)
    ours = bpe.train("superbpe", texts, 3000, transition=2000)
    assert ours.stage1_merges == 2000 - 260
    assert ours.merges[: ours.stage1_merges] == bpe.train("byte-bpe", texts, 2000).merges
    assert ours.vocab_size == 3000


def test_tokens_span_words_only_after_the_transition(english: SuperBPETokenizer, flores: dict[str, list[str]]) -> None:
    pieces = [piece.replace("Ġ", " ").replace("Ċ", "\n") for piece in english.vocab]
    first = english.first_superword_id
    assert first == 4000
    assert not any(SPANS_WORDS.search(piece) for piece in pieces[:first])
    superwords = sum(bool(SPANS_WORDS.search(piece)) for piece in pieces[first:])
    assert superwords > 0.5 * len(pieces[first:])
    # and they are used: on English FLORES, some tokens cover a space between two words
    tokens = [english.id_to_bytes(i).decode("utf-8", "replace") for i in english.encode(" ".join(flores["eng_Latn"]))]
    assert sum(bool(SPANS_WORDS.search(token)) for token in tokens) > 0.05 * len(tokens)
    # no token continues past sentence-final punctuation and the whitespace after it
    assert not any(re.search(rf"[{SENTENCE_ENDS}]\s", piece) for piece in pieces)


def test_encodings_decode_to_the_text(english: SuperBPETokenizer, flores: dict[str, list[str]]) -> None:
    for lines in flores.values():
        for line in lines[:300]:
            encoding = english.encode_with_spans(line)
            assert english.decode(encoding.ids) == line
            ends = [0] + [end for _, end in encoding.spans]
            assert [start for start, _ in encoding.spans] == ends[:-1] and ends[-1] == len(line.encode())
    assert english.decode(english.encode("x\u3002\u00bd 12345 \U0001f600")) == "x\u3002\u00bd 12345 \U0001f600"


def test_transition_is_checked() -> None:
    texts = ["the cat sat on the mat. the dog sat"] * 3
    with raises_code(bpe.TokenizerError, "missing_option", value="transition"):
        bpe.train("superbpe", texts, 400)
    with raises_code(bpe.TokenizerError, "out_of_range", value=259, field="transition"):
        bpe.train("superbpe", texts, 400, transition=259)  # below 4 specials + 256 bytes
    with raises_code(bpe.TokenizerError, "out_of_range", value=401, field="transition"):
        bpe.train("superbpe", texts, 400, transition=401)
    with raises_code(bpe.TokenizerError, "out_of_range", value=300, field="transition"):
        bpe.train("superbpe", texts, 400, transition=300, special_tokens=[f"<{i}>" for i in range(41)])
    with raises_code(bpe.TokenizerError, "no_counts_training", value="superbpe"):
        bpe.train("superbpe", count_pretokens(texts, "gpt2"), 400, transition=300)
    at_the_transition = bpe.train("superbpe", texts, 270, transition=270)
    assert at_the_transition.stage1_merges == len(at_the_transition.merges) == 10  # a size of stage 1 only


def test_derived_sizes_are_trained_sizes(embedded_text: dict[str, list[str]]) -> None:
    texts = leading(embedded_text["rus_Cyrl"], 40_000)
    largest = bpe.train("superbpe", texts, 1200, transition=700)
    for size in (1000, 700):
        assert bpe.derive(largest, size).to_dict() == bpe.train("superbpe", texts, size, transition=700).to_dict()
    with raises_code(bpe.TokenizerError, "out_of_range", value=700, field="transition"):
        bpe.derive(largest, 699)
    assert [tokenizer.vocab_size for tokenizer in SuperBPETokenizer.train_sweep(texts, [1200, 900], transition=700)
            .values()] == [1200, 900]  # fmt: skip


def test_save_load_round_trip(english: SuperBPETokenizer, tmp_path: Path, flores: dict[str, list[str]]) -> None:
    path = tmp_path / "superbpe.json"
    english.save(path)
    loaded = bpe.load(path)
    assert isinstance(loaded, SuperBPETokenizer) and loaded.to_dict() == english.to_dict()
    assert loaded.stage1_merges == english.stage1_merges and loaded.options.transition == 4000
    for line in flores["tur_Latn"][:50]:
        assert loaded.encode(line) == english.encode(line)
    body = english.to_dict()
    for bad in (-1, len(body["merges"]) + 1):
        with raises_code(bpe.TokenizerError, "bad_tokenizer_file", value=bad, field="stage1_merges"):
            SuperBPETokenizer.from_dict({**body, "stage1_merges": bad})
    with raises_code(bpe.TokenizerError, "wrong_type"):
        SuperBPETokenizer.from_dict({**body, "stage1_merges": "3"})
    config = {key: value for key, value in body["config"].items() if key != "transition"}
    with raises_code(bpe.TokenizerError, "bad_tokenizer_file", field="config.transition"):
        SuperBPETokenizer.from_dict({**body, "config": config})


def test_hugging_face_gives_our_ids(english: SuperBPETokenizer, tmp_path: Path, flores: dict[str, list[str]]) -> None:
    """Their released tokenizers are a HF BPE model behind a Split pre-tokenizer: so is our export."""
    path = tmp_path / "tokenizer.json"
    path.write_text(to_hf_json(english), encoding="utf-8")
    theirs = Tokenizer.from_file(str(path))
    for language, lines in flores.items():
        expected = [encoding.ids for encoding in theirs.encode_batch(lines, add_special_tokens=False)]
        for line, ids in zip(lines, expected, strict=True):
            assert english.encode(line) == ids, (language, line)
