"""morfessor: Morfessor Baseline morphs as tokens (Creutz & Lagus 2002, 2007; Morfessor 2.0, Virpioja et al. 2013).

The classic unsupervised morphological segmenter, here as an ordinary
tokenizer so boundary-F1 tables have a morphological baseline.

Training: the text is pre-tokenized (default ``unicode``); a pre-token's
attached leading space is set aside and the rest is a *word*.  The
``morfessor`` package (pure Python) trains a Baseline model on the distinct
words with its batch recursive algorithm, by default on word types
(``dampening = "ones"``: every distinct word counts once, the setting Creutz &
Lagus recommend for morphological segmentation; ``"log"`` and ``"none"``
(token counts) are Morfessor's other choices).  ``min_frequency`` drops rarer
words from training, ``corpus_weight`` is Morfessor's alpha (default 1.0),
``max_epochs`` caps the epochs (default: until converged).  Morfessor
shuffles words with Python's global ``random``; training seeds it with
``seed`` and restores its state afterwards, so training is deterministic.

Encoding: every word is segmented by Morfessor Baseline's Viterbi search
over the learned morph lexicon without smoothing (``viterbi_segment`` with
``addcount=0``, reimplemented here from the saved morph counts, so loading a
tokenizer needs no Morfessor model): a morph costs ``log N - log count`` (N =
morph tokens + word boundaries of the training data), a character that is no
morph costs ``len(word) * log N + 1``, morphs are at most 30 characters, and
among equal costs the longest last morph wins.  A training word and an unseen
word are segmented the same way.  The set-aside space is glued to the first
morph (`` ev`` + ``ler``), as in the families whose pieces carry the space.

Vocabulary: the specials, every character of the training text (so any
morph can be spelled out), then the morph pieces (bare, or with the leading
space) in order of how often the training text uses them (ties: code point
order), then every other morph of the lexicon bare (by its count, ties: code
point order), as many as ``vocab_size`` allows: with room for the whole
lexicon, the tokens are exactly Morfessor's segmentation, for a new word too.  A piece that did not fit is
encoded as its space (if any) plus the bare morph, or as characters; an
unseen character is ``<unk>``.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from pydantic import Field

from bpe.base import DEFAULT_SPECIAL_TOKENS, FamilyFacts, TokenizerError, VocabFloor
from bpe.models.trained import TrainedTokenizer, TrainingRequest
from bpe.options import (
    FamilyOptions,
    MinFrequency,
    NormalizerName,
    PreTokenizerName,
    body_field,
    read_common_body,
    special_tokens_with,
)
from bpe.training.counts import PretokenCounts, training_counts
from bpe.validation import NonNegativeInt, PositiveInt, PositiveNumber

#: Morfessor's count modifiers, by the name of ``MorfessorOptions.dampening``
DAMPENINGS = {"ones": lambda count: 1, "log": lambda count: round(math.log(count + 1, 2)), "none": None}
#: Morfessor's default longest morph considered by the Viterbi search
MAX_MORPH_LENGTH = 30


def split_word(pretoken: str) -> tuple[str, str]:
    """(the attached leading space or "", the word): a pre-token that is only whitespace is all "word"."""
    if len(pretoken) > 1 and pretoken[0] == " " and not pretoken[1].isspace():
        return " ", pretoken[1:]
    return "", pretoken


class MorphLexicon:
    """Morph counts and Morfessor Baseline's Viterbi segmentation over them (no smoothing)."""

    def __init__(self, counts: Mapping[str, int], boundaries: int) -> None:
        self.counts = dict(counts)
        self.boundaries = boundaries
        total = sum(self.counts.values()) + boundaries
        self._log_total = math.log(total) if total > 0 else 0.0
        self._costs = {morph: self._log_total - math.log(count) for morph, count in self.counts.items()}

    def segment(self, word: str) -> list[str]:
        costs, log_total = self._costs, self._log_total
        length = len(word)
        unknown_character = length * log_total + 1.0
        best_cost = [0.0] + [math.inf] * length
        best_start = [0] * (length + 1)
        for end in range(1, length + 1):
            for start in range(max(0, end - MAX_MORPH_LENGTH), end):
                morph_cost = costs.get(word[start:end])
                if morph_cost is None:
                    if end - start != 1:
                        continue
                    morph_cost = unknown_character
                cost = best_cost[start] + morph_cost
                if cost < best_cost[end]:  # strictly: the earliest start (longest last morph) wins ties
                    best_cost[end], best_start[end] = cost, start
        morphs: list[str] = []
        end = length
        while end > 0:
            morphs.append(word[best_start[end] : end])
            end = best_start[end]
        return morphs[::-1]


class MorfessorOptions(FamilyOptions):
    pretokenizer: PreTokenizerName = "unicode"
    normalizer: NormalizerName = "none"
    dampening: Annotated[
        Literal["ones", "log", "none"],
        Field(description="Morfessor's word counts: each distinct word once, log-dampened, or as counted"),
    ] = "ones"
    corpus_weight: Annotated[
        PositiveNumber | None, Field(description="Morfessor's corpus weight alpha (unset: Morfessor's 1.0)")
    ] = None
    max_epochs: Annotated[
        PositiveInt | None, Field(description="Morfessor's training epochs at most (unset: until converged)")
    ] = None
    min_frequency: MinFrequency = 1
    seed: Annotated[NonNegativeInt, Field(description="seed of Morfessor's word shuffling while training")] = 0


class MorfessorTokenizer(TrainedTokenizer):
    family = "morfessor"
    options_model = MorfessorOptions
    facts = FamilyFacts(native_method="viterbi")
    floor_needs_text = True  # the alphabet of the text is part of the floor

    options: MorfessorOptions

    def __init__(
        self,
        alphabet: Sequence[str],
        morph_pieces: Sequence[str],
        lexicon: MorphLexicon,
        *,
        special_tokens: Iterable[str] = (),
        **options: Any,
    ) -> None:
        """``alphabet``: single characters; ``morph_pieces``: longer pieces (a morph, or a space plus a morph);
        ``lexicon``: the morph counts the Viterbi search uses; ``options``: see ``MorfessorOptions``
        (only the pre-tokenizer and normalizer matter to encoding; the others record the training)."""
        self.options = MorfessorOptions.parse(self.family, options)
        specials = special_tokens_with(special_tokens)
        for index, char in enumerate(alphabet):
            if not isinstance(char, str) or len(char) != 1:
                raise TokenizerError(f"morfessor alphabet entry #{index} must be one character, got {char!r}",
                                     code="bad_vocabulary", value=char)  # fmt: skip
        for index, piece in enumerate(morph_pieces):
            if not isinstance(piece, str) or len(piece) < 2:
                raise TokenizerError(f"morfessor piece #{index} must be a string of 2+ characters, got {piece!r}",
                                     code="bad_vocabulary", value=piece)  # fmt: skip
        pieces = [*specials, *alphabet, *morph_pieces]
        if len(set(pieces)) != len(pieces):
            raise TokenizerError("morfessor vocabulary entries must be distinct", code="bad_vocabulary")
        token_bytes = [piece.encode("utf-8") for piece in pieces]
        super().__init__(pieces, token_bytes, specials, self.options.pretokenizer, self.options.normalizer)
        self._piece_ids = {piece: index for index, piece in enumerate(pieces) if index >= len(specials)}
        self.lexicon = lexicon

    # -- training ---------------------------------------------------------
    @classmethod
    def _train(cls, texts: Iterable[str] | PretokenCounts, request: TrainingRequest) -> MorfessorTokenizer:
        """Train Morfessor Baseline on the words of ``texts`` and keep up to ``vocab_size`` pieces
        (Morfessor's own progress dots are silenced)."""
        settings, vocab_size, specials = request.options, request.vocab_size, request.special_tokens
        pretoken_counts = training_counts(texts, settings.pretokenizer, workers=request.workers,
                                          normalizer=settings.normalizer)  # fmt: skip
        alphabet = sorted({char for pretoken in pretoken_counts for char in pretoken})
        _alphabet_floor(len(specials), len(alphabet)).check(cls.family, vocab_size)
        word_counts: Counter[str] = Counter()
        for pretoken, count in pretoken_counts.items():
            word = split_word(pretoken)[1]
            if not word.isspace():
                word_counts[word] += count
        lexicon = _train_lexicon(word_counts, settings)

        # rank the pieces by how often the training text uses them
        usage: Counter[str] = Counter()
        for pretoken, count in pretoken_counts.items():
            space, word = split_word(pretoken)
            if word.isspace():
                continue
            morphs = lexicon.segment(word)
            morphs[0] = space + morphs[0]
            for morph in morphs:
                if len(morph) > 1:
                    usage[morph] += count
        ranked = sorted(usage, key=lambda piece: (-usage[piece], piece))
        # then every other morph of the lexicon as a bare piece (more frequent morphs first, ties: code
        # point order): a morph the training text only used first in a word (`` ser``) may end a new
        # word (``kan`` + ``ser``), and spelled out as characters it would add boundaries Morfessor
        # does not make
        ranked += sorted(
            (morph for morph in lexicon.counts if len(morph) > 1 and morph not in usage),
            key=lambda morph: (-lexicon.counts[morph], morph),
        )
        morph_pieces = ranked[: vocab_size - len(specials) - len(alphabet)]
        extra_specials = request.extra_special_tokens
        return cls(alphabet, morph_pieces, lexicon, special_tokens=extra_specials, **settings.model_dump())

    @classmethod
    def _text_floor(cls, counts: PretokenCounts, settings: MorfessorOptions, specials: int) -> VocabFloor:
        """The specials and every character of the counted text (through the normalizer)."""
        return _alphabet_floor(specials, len({char for pretoken in counts for char in pretoken}))

    # -- encoding ---------------------------------------------------------
    def _encode_pretoken(self, pretoken: str) -> tuple[list[int], list[int]]:
        space, word = split_word(pretoken)
        morphs = [pretoken] if word.isspace() else self.lexicon.segment(word)
        if not word.isspace():
            morphs[0] = space + morphs[0]
        ids: list[int] = []
        lengths: list[int] = []
        for morph in morphs:
            if morph in self._piece_ids:
                parts = [morph]
            elif morph[0] == " " and morph[1:] in self._piece_ids:  # the spaced piece did not fit
                parts = [" ", morph[1:]]
            else:
                parts = list(morph)
            for part in parts:
                ids.append(self._piece_ids.get(part, self.unk_id))
                lengths.append(len(part.encode("utf-8")))
        return ids, lengths

    # -- persistence ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        alphabet_size = sum(1 for piece in self._pieces[len(self.special_tokens) :] if len(piece) == 1)
        return {
            **super().to_dict(),
            "alphabet_size": alphabet_size,
            "morph_counts": dict(sorted(self.lexicon.counts.items())),
            "word_boundaries": self.lexicon.boundaries,
        }

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> MorfessorTokenizer:
        config, specials, vocab = read_common_body(body)
        alphabet_size = body_field(body, "alphabet_size", int)
        counts = body_field(body, "morph_counts", dict)
        for morph, count in counts.items():
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                field = f"morph_counts[{morph!r}]"
                raise TokenizerError(f'tokenizer file: field "{field}" must be a positive integer',
                                     code="bad_tokenizer_file", value=count, field=field)  # fmt: skip
        options = MorfessorOptions.read_saved(config)
        pieces = vocab[len(specials) :]
        return cls(
            pieces[:alphabet_size],
            pieces[alphabet_size:],
            MorphLexicon(counts, body_field(body, "word_boundaries", int)),
            special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :],
            **options.model_dump(),
        )


def _train_lexicon(word_counts: Mapping[str, int], options: MorfessorOptions) -> MorphLexicon:
    """Morfessor Baseline batch training; the morph counts and the number of word boundaries it was trained on."""
    try:
        import morfessor
    except ImportError:
        raise TokenizerError("the morfessor family needs the morfessor package (pip install morfessor)",
                             code="missing_package", value="morfessor") from None  # fmt: skip
    modifier = DAMPENINGS[options.dampening]
    minimum = options.min_frequency
    data = [(count, word) for word, count in sorted(word_counts.items()) if count >= minimum]
    if not data:
        raise TokenizerError(f"no word occurs at least min_frequency={minimum} times: nothing to train on",
                             code="empty_training_input", value=minimum)  # fmt: skip
    model = morfessor.BaselineModel(corpusweight=options.corpus_weight)
    with _quiet_seeded_morfessor(morfessor, options.seed):
        model.load_data(data, count_modifier=modifier)
        model.train_batch(max_epochs=options.max_epochs)
    boundaries = sum(modifier(count) if modifier else count for count, _ in data)
    return MorphLexicon(dict(model.get_constructions()), boundaries)


@contextmanager
def _quiet_seeded_morfessor(morfessor: Any, seed: int) -> Any:
    """Seed Python's global ``random`` (Morfessor shuffles with it) and silence Morfessor's progress dots,
    restoring both afterwards."""
    state, progress_bar = random.getstate(), morfessor.utils.show_progress_bar
    random.seed(seed)
    morfessor.utils.show_progress_bar = False
    try:
        yield
    finally:
        random.setstate(state)
        morfessor.utils.show_progress_bar = progress_bar


def _alphabet_floor(specials: int, characters: int) -> VocabFloor:
    """Every character of the training text is a piece, so any morph can be spelled out."""
    parts = f"{specials} special tokens + {characters} characters of the training text"
    return VocabFloor(specials + characters, parts)
