"""unigram: the Unigram LM family trained here (bpe/models/unigram.py, bpe/training/unigram_trainer.py).

Checked against independent computations: sentencepiece's own encoder on a model proto holding our pieces
and scores; sentencepiece's trainer (the likelihood its model reaches on the same text); and brute force
(every segmentation of short words enumerated) for the EM expectations, the likelihood and pruning."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import sentencepiece
from sentencepiece import sentencepiece_model_pb2 as model_pb2

import bpe
from bpe.base import TokenizerError
from bpe.models.unigram import UnigramTokenizer
from bpe.training.counts import count_pretokens
from bpe.training.unigram_trainer import UNK_PENALTY, Lattices, digamma, log_likelihood, m_step
from tests.conftest import leading
from tests.errors import raises_code

WHITESPACE_MARK = "\u2581"  # sentencepiece's ▁


@pytest.fixture(scope="module")
def training_text(embedded_text: dict[str, list[str]]) -> list[str]:
    """About 40,000 characters per language, four languages."""
    return [text for texts in embedded_text.values() for text in leading(texts, 40_000)]


@pytest.fixture(scope="module")
def trained(training_text: list[str]) -> UnigramTokenizer:
    return bpe.train("unigram", training_text, 2000)


@pytest.fixture(scope="module")
def eval_lines(flores_sample: dict[str, list[str]]) -> list[str]:
    return [line for lines in flores_sample.values() for line in lines]


# -- 1. Viterbi encoding equals sentencepiece's on the same pieces and scores ------------------------------


def sentencepiece_twin(tokenizer: UnigramTokenizer) -> sentencepiece.SentencePieceProcessor:
    """sentencepiece's unigram encoder over our pieces and scores, ids equal.  sentencepiece writes a space as
    ``▁`` (``escape_whitespaces``) and matches pieces on that form, so every space of our pieces becomes ``▁``;
    with the identity normalization, no dummy prefix and no whitespace removal it then sees each pre-token as
    we do (our pieces never hold a literal ``▁``: checked)."""
    proto = model_pb2.ModelProto()
    spec = proto.trainer_spec
    spec.model_type = model_pb2.TrainerSpec.UNIGRAM
    spec.vocab_size = tokenizer.vocab_size
    spec.pad_id, spec.unk_id, spec.bos_id, spec.eos_id = 0, 1, 2, 3
    normalizer = proto.normalizer_spec
    normalizer.name = "identity"
    normalizer.add_dummy_prefix = False
    normalizer.remove_extra_whitespaces = False
    normalizer.escape_whitespaces = True
    kinds = model_pb2.ModelProto.SentencePiece
    for special in tokenizer.special_tokens:
        entry = proto.pieces.add()
        entry.piece, entry.score = special, 0.0
        entry.type = kinds.UNKNOWN if special == "<unk>" else kinds.CONTROL
    for piece, score in tokenizer.scored_pieces:
        assert WHITESPACE_MARK not in piece
        entry = proto.pieces.add()
        entry.piece, entry.score, entry.type = piece.replace(" ", WHITESPACE_MARK), score, kinds.NORMAL
    return sentencepiece.SentencePieceProcessor(model_proto=proto.SerializeToString())


def test_viterbi_equals_sentencepiece_on_every_flores_pretoken(
    trained: UnigramTokenizer, eval_lines: list[str]
) -> None:
    twin = sentencepiece_twin(trained)
    pretokens = sorted({pretoken for line in eval_lines for pretoken in trained.pretokenizer.split(line)})
    pretokens = [pretoken for pretoken in pretokens if WHITESPACE_MARK not in pretoken]
    differing = [pretoken for pretoken in pretokens if trained.encode(pretoken) != twin.encode(pretoken)]
    assert differing == []
    with_unknowns = [pretoken for pretoken in pretokens if trained.unk_id in trained.encode(pretoken)]
    assert len(pretokens) > 4000 and len(with_unknowns) > 50  # both paths were compared (Korean: unseen syllables)


def test_unknown_characters_are_one_unk_per_run_with_their_bytes(trained: UnigramTokenizer) -> None:
    text = " ☃☄ the ☃"
    encoding = trained.encode_with_spans(text)
    unknown_spans = [span for token, span in zip(encoding.ids, encoding.spans, strict=True) if token == trained.unk_id]
    data = text.encode("utf-8")
    assert [data[start:end].decode("utf-8") for start, end in unknown_spans] == ["☃☄", "☃"]


def test_spans_tile_the_text_and_decoding_is_lossless(trained: UnigramTokenizer, eval_lines: list[str]) -> None:
    lossless = 0
    for line in eval_lines:
        encoding = trained.encode_with_spans(line)
        data, position = line.encode("utf-8"), 0
        for token, (start, end) in zip(encoding.ids, encoding.spans, strict=True):
            assert start == position < end
            if token != trained.unk_id:
                assert data[start:end] == trained.id_to_bytes(token)
            position = end
        assert position == len(data)
        if trained.unk_id not in encoding.ids:
            assert trained.decode(encoding.ids) == line
            lossless += 1
    assert lossless > len(eval_lines) // 2


# -- 2. training likelihood against sentencepiece's trainer --------------------------------------------------


def sentencepiece_unigram(lines: list[str], vocab_size: int) -> dict[str, float]:
    """(piece, score) of sentencepiece's unigram trainer on ``lines``, spaces for ``▁``: its defaults but every
    character kept (coverage 1.0, no byte fallback), the text as given (identity normalization, no dummy prefix,
    spaces kept), one thread."""
    import io

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, model_type="unigram", vocab_size=vocab_size,
        character_coverage=1.0, byte_fallback=False, pad_id=0, unk_id=1, bos_id=2, eos_id=3,
        normalization_rule_name="identity", remove_extra_whitespaces=False, add_dummy_prefix=False,
        input_sentence_size=0, hard_vocab_limit=False, num_threads=1, minloglevel=2, max_sentence_length=1 << 20,
        split_by_number=False, split_by_unicode_script=False,
    )  # fmt: skip
    proto = model_pb2.ModelProto.FromString(model.getvalue())
    normal = model_pb2.ModelProto.SentencePiece.NORMAL
    return {entry.piece.replace(WHITESPACE_MARK, " "): entry.score for entry in proto.pieces if entry.type == normal}


def normalized(scored: dict[str, float]) -> dict[str, float]:
    """The scores as log probabilities summing to one over the pieces (neither trainer's scores quite do)."""
    values = np.asarray(list(scored.values()))
    peak = values.max()
    log_total = peak + math.log(np.exp(values - peak).sum())
    return {piece: score - log_total for piece, score in scored.items()}


def likelihoods(texts: list[str], vocab_size: int) -> tuple[float, float]:
    """The training log-likelihood of our model and of sentencepiece's, both trained on the lines of ``texts`` at
    ``vocab_size``, by our forward algorithm over the same pre-tokens (``whitespace``: sentencepiece's own
    words, a space attached to the word after it) with each model's normalized scores."""
    lines = [line for text in texts for line in text.split("\n") if line.strip()]
    ours = bpe.train("unigram", lines, vocab_size, pretokenizer="whitespace")
    theirs = sentencepiece_unigram(lines, vocab_size)
    words = dict(count_pretokens(lines, "whitespace").items())
    return log_likelihood(words, normalized(dict(ours.scored_pieces))), log_likelihood(words, normalized(theirs))


#: our likelihood is at most this share of |sentencepiece's| below it (measured: ours is 1-4 % higher: every
#: substring of a pre-token is a seed here, sentencepiece seeds only the right-branching ones)
LIKELIHOOD_MARGIN = 0.01


def test_training_likelihood_is_at_least_sentencepieces(training_text: list[str]) -> None:
    ours, theirs = likelihoods(training_text, 2000)
    assert ours >= theirs * (1 + LIKELIHOOD_MARGIN)  # both negative
    assert ours <= theirs * (1 - 0.10)  # and not implausibly far above: the same pieces count, the same words


@pytest.mark.slow
def test_training_likelihood_at_8000_on_the_embedded_corpora(embedded_training_text: list[str]) -> None:
    ours, theirs = likelihoods(embedded_training_text, 8000)
    assert ours >= theirs * (1 + LIKELIHOOD_MARGIN)
    assert ours <= theirs * (1 - 0.10)


# -- 3. EM and pruning against brute force ------------------------------------------------------------------


def segmentations(word: str, scored: dict[str, float]) -> list[list[str]]:
    """Every segmentation of ``word`` into pieces of ``scored`` or, where no one-character piece starts,
    a one-character ``<unk>`` (written as that character; sentencepiece's lattice)."""
    if not word:
        return [[]]
    found = []
    for end in range(1, len(word) + 1):
        head = word[:end]
        if head in scored or (end == 1 and head not in scored):
            found += [[head, *rest] for rest in segmentations(word[end:], scored)]
    return found


def path_score(path: list[str], scored: dict[str, float]) -> float:
    unk = min(scored.values()) - UNK_PENALTY
    return sum(scored.get(piece, unk) for piece in path)


def brute_force(words: dict[str, int], scored: dict[str, float]) -> tuple[Counter[str], float]:
    expected: Counter[str] = Counter()
    total = 0.0
    for word, count in words.items():
        paths = segmentations(word, scored)
        weights = [math.exp(path_score(path, scored)) for path in paths]
        z = sum(weights)
        total += count * math.log(z)
        for path, weight in zip(paths, weights, strict=True):
            for piece in path:
                if piece in scored:
                    expected[piece] += count * weight / z
    return expected, total


def random_case(seed: int) -> tuple[dict[str, int], dict[str, float]]:
    """Short words over a, b, c, d and pieces of up to four characters, ``d`` in none (an ``<unk>``)."""
    generator = random.Random(seed)
    words = {"".join(generator.choices("abcd", k=generator.randint(1, 7))): generator.randint(1, 5) for _ in range(12)}
    substrings = sorted(
        {word[i:j] for word in words for i in range(len(word)) for j in range(i + 2, min(len(word), i + 4) + 1)}
    )
    pieces = [*"abc", *generator.sample(substrings, k=min(10, len(substrings)))]
    return words, {piece: -generator.uniform(1, 6) for piece in pieces if "d" not in piece}


@pytest.mark.parametrize("seed", range(5))
def test_expected_counts_and_likelihood_equal_brute_force(seed: int) -> None:
    words, scored = random_case(seed)
    lattices, scores, alive = Lattices.over(words, scored)
    expected, total = lattices.expected_counts(scores, alive)
    want, want_total = brute_force(words, scored)
    assert total == pytest.approx(want_total, rel=1e-12)
    assert log_likelihood(words, scored) == pytest.approx(want_total, rel=1e-12)
    assert {piece: expected[index] for index, piece in enumerate(lattices.pieces) if alive[index]} == pytest.approx(
        {piece: want[piece] for piece in scored}, rel=1e-9, abs=1e-12)  # fmt: skip


def best_path(word: str, scored: dict[str, float], without: str | None = None) -> tuple[float, list[str]]:
    """The best segmentation by enumeration (``without``: not the one-piece segmentation ``[without]``)."""
    paths = [path for path in segmentations(word, scored) if path != [without]]
    return max((path_score(path, scored), path) for path in paths) if paths else (-math.inf, [])


@pytest.mark.parametrize("seed", range(5))
def test_pruning_losses_equal_brute_force(seed: int) -> None:
    words, scored = random_case(seed)
    lattices, scores, alive = Lattices.over(words, scored)
    facts = lattices.pruning_losses(scores, alive)
    frequency: Counter[str] = Counter()
    for word, count in words.items():
        for piece in best_path(word, scored)[1]:
            if piece in scored:
                frequency[piece] += count
    total, occurrences = sum(frequency.values()), sum(words.values())
    for index, piece in enumerate(lattices.pieces):
        if not alive[index]:
            assert facts.dropped[index]
            continue
        assert facts.frequency[index] == frequency[piece]
        alternative_score, alternative = best_path(piece, scored, without=piece)
        dropped = frequency[piece] == 0 or alternative_score > scored[piece]
        assert facts.dropped[index] == dropped, piece
        assert facts.always[index] == (not dropped and len(piece) == 1), piece
        if dropped or len(piece) == 1:
            continue
        f = frequency[piece]
        log_total_after = math.log(total + f * (len(alternative) - 1))
        loss = f / occurrences * (math.log(f / total) - sum(math.log(frequency[other] + f) - log_total_after
                                                             for other in alternative))  # fmt: skip
        assert facts.loss[index] == pytest.approx(loss, rel=1e-9), piece


def test_digamma_and_the_m_step() -> None:
    gamma = 0.5772156649015329  # Euler–Mascheroni: ψ(n) = H(n - 1) − γ, ψ(1/2) = −γ − 2 log 2
    values = np.array([1.0, 2.0, 10.0, 0.5, 123.0])
    harmonic = [sum(1 / k for k in range(1, int(n))) for n in (1, 2, 10)]
    want = [h - gamma for h in harmonic] + [-gamma - 2 * math.log(2), sum(1 / k for k in range(1, 123)) - gamma]
    assert digamma(values) == pytest.approx(want, rel=1e-12)
    expected = np.array([3.0, 0.4, 5.0, 0.5])
    scores, alive = m_step(expected, np.array([True, True, True, False]))
    assert alive.tolist() == [True, False, True, False]  # below 0.5, or already dropped
    assert scores[alive] == pytest.approx(digamma(np.array([3.0, 5.0])) - digamma(np.array([8.0]))[0])


# -- 4. round trip, errors, determinism -----------------------------------------------------------------------


def test_vocabulary_layout(trained: UnigramTokenizer, training_text: list[str]) -> None:
    assert trained.vocab[:4] == ["<pad>", "<unk>", "<s>", "</s>"] and trained.vocab_size == 2000
    scored = trained.scored_pieces
    assert scored == sorted(scored, key=lambda entry: (-entry[1], entry[0]))  # by score, ties in code point order
    characters = {char for text in training_text for char in text}
    assert characters <= {piece for piece, _ in scored}  # every character of the text is kept
    assert max(len(piece) for piece, _ in scored) <= 16


def test_save_load_round_trip(trained: UnigramTokenizer, eval_lines: list[str], tmp_path: Path) -> None:
    path = tmp_path / "unigram.json"
    trained.save(path)
    loaded = bpe.load(path)
    assert isinstance(loaded, UnigramTokenizer)
    assert loaded.to_dict() == trained.to_dict()
    assert [loaded.encode(line) for line in eval_lines] == [trained.encode(line) for line in eval_lines]


def test_training_is_deterministic_and_counts_give_the_same_model(training_text: list[str]) -> None:
    texts = training_text[::3]
    first = bpe.train("unigram", texts, 800, max_piece_length=8)
    again = bpe.train("unigram", list(reversed(texts)), 800, max_piece_length=8)
    from_counts = bpe.train("unigram", count_pretokens(texts, "unicode"), 800, max_piece_length=8)
    assert first.to_dict() == again.to_dict() == from_counts.to_dict()
    assert max(len(piece) for piece, _ in first.scored_pieces) <= 8


def test_progress_reports_em_rounds() -> None:
    calls: list[tuple[int, int]] = []
    bpe.train("unigram", ["the cat sat on the mat"] * 3, 30, progress=lambda done, wanted: calls.append((done, wanted)))
    assert calls and calls[-1][0] >= 1 and all(done <= wanted for done, wanted in calls)


@pytest.mark.parametrize(
    ("vocab_size", "options", "code", "field", "value"),
    [
        (100, {"shrinking_factor": 1.0}, "out_of_range", "shrinking_factor", 1.0),
        (100, {"shrinking_factor": 0}, "out_of_range", "shrinking_factor", 0),
        (100, {"shrinking_factor": "0.5"}, "wrong_type", "shrinking_factor", "0.5"),
        (100, {"seed_size": 0}, "out_of_range", "seed_size", 0),
        (100, {"num_sub_iterations": 0}, "out_of_range", "num_sub_iterations", 0),
        (100, {"max_piece_length": "16"}, "wrong_type", "max_piece_length", "16"),
        (100, {"dropout": 0.1}, "unknown_option", None, "dropout"),
        (9, {}, "vocab_below_floor", None, 9),  # 4 specials + the 6 characters of "abc def"
    ],
)
def test_bad_options_and_sizes(vocab_size: int, options: dict, code: str, field: str | None, value: object) -> None:
    with raises_code(TokenizerError, code, value=value, **({} if field is None else {"field": field})):
        bpe.train("unigram", ["abc def", "abc"], vocab_size, **options)


def test_the_floor_is_the_characters_of_the_text() -> None:
    floor = UnigramTokenizer.vocab_floor(["abc def", "abc"])
    assert floor.minimum == 4 + len(set("abc def"))
    assert bpe.train("unigram", ["abc def", "abc"], floor.minimum).vocab_size == floor.minimum


def test_empty_training_input() -> None:
    with raises_code(TokenizerError, "empty_training_input"):
        bpe.train("unigram", ["", " \n "], 100)


@pytest.mark.parametrize(
    ("change", "code", "field"),
    [
        (lambda body: body.update(scores=body["scores"][:-1]), "bad_tokenizer_file", "scores"),
        (lambda body: body["scores"].__setitem__(0, "x"), "bad_tokenizer_file", "scores[0]"),
        (lambda body: body["scores"].__setitem__(0, float("inf")), "bad_tokenizer_file", "scores[0]"),
        (lambda body: body.pop("scores"), "missing_key", "scores"),
        (lambda body: body["config"].update(shrinking_factor=2.0), "out_of_range", "config.shrinking_factor"),
    ],
)
def test_malformed_bodies(change: Callable[[dict], object], code: str, field: str) -> None:
    body = bpe.train("unigram", ["the cat sat on the mat"] * 2, 30).to_dict()
    change(body)
    with raises_code(TokenizerError, code, field=field):
        UnigramTokenizer.from_dict(body)


def test_repeated_piece_is_refused() -> None:
    with raises_code(TokenizerError, "bad_vocabulary", value="ab"):
        UnigramTokenizer([("ab", -1.0), ("a", -2.0), ("ab", -3.0)])


def test_every_segmentation_is_counted_once() -> None:
    """The lattice of a word holds each piece occurrence once: the number of segmentations, counted by the
    forward algorithm with every score 0, is the enumeration's."""
    words = {"abcab": 1, "aaaa": 1}
    scored = {piece: 0.0 for piece in ["a", "b", "c", "ab", "aa", "aaa", "bca", "abc"]}
    lattices, scores, alive = Lattices.over(words, scored)
    _, total = lattices.expected_counts(scores, alive)
    assert math.exp(total) == pytest.approx(
        math.prod(len(segmentations(word, scored)) for word in words))  # fmt: skip
    assert [len(segmentations(word, scored)) for word in words] == [7, 7]
    assert list(itertools.chain(*segmentations("ab", scored))) == ["a", "b", "ab"]


# -- export to Hugging Face tokenizers ----------------------------------------------------------------------


def test_hf_unigram_export_gives_our_ids(trained: UnigramTokenizer, eval_lines: list[str]) -> None:
    """HF's ``Unigram`` over the exported (piece, score) list: the same ids, unknown runs included (the full
    size on every FLORES line: tests/bpe/export/test_hf_export.py, slow)."""
    from tokenizers import Tokenizer

    from bpe.export.hf_export import to_hf_json

    theirs = Tokenizer.from_str(to_hf_json(trained))
    hf_ids = [encoding.ids for encoding in theirs.encode_batch(eval_lines, add_special_tokens=False)]
    assert hf_ids == [trained.encode(line) for line in eval_lines]
    assert any(trained.unk_id in ids for ids in hf_ids)


def test_hf_export_refuses_a_normalizer() -> None:
    from bpe.export.hf_export import to_hf_json

    tokenizer = bpe.train("unigram", ["한국어 문장입니다", "형태소 분석"], 60, normalizer="jamo")
    with raises_code(TokenizerError, "not_exportable", value="jamo", field="normalizer"):
        to_hf_json(tokenizer)
