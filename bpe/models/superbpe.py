"""superbpe: byte-level BPE whose later merges may span words (Liu et al. 2025, "SuperBPE: Space Travel for
Language Models", arXiv 2503.13423).

Training has two stages over one merge list:

1. **Subwords.**  byte-bpe training (``bpe.models.byte_bpe``: 256 byte symbols, pre-tokenizer ``pretokenizer``,
   default ``gpt2``) until the vocabulary holds ``transition`` entries (specials included), or no pair occurs
   ``min_frequency`` times.
2. **Superwords.**  The text is cut again, this time into the *stage-2 chunks* below (no whitespace boundary);
   every distinct chunk gets the stage-1 merges applied in rank order (as encoding does), and merging
   continues on these chunks with the same trainer (``bpe.training.trainer.train_merges``), so a token may
   now hold a space and several words, until ``vocab_size``.

Stage-2 chunks (``STAGE2_PATTERN``; ``split_sentences=False``: ``DIGITS_PATTERN``), which tile the text:

* a run of digits (``\\p{N}``) is its own chunk, cut in groups of three from the right (``12345`` ->
  ``12`` ``345``), as the public SuperBPE code does (HF ``Digits`` then ``Split`` on
  ``(?=(\\d{3})+(?!\\d))``);
* everything else (letters, spaces, newlines, punctuation) runs on, except that a chunk ends after a run
  of sentence-final punctuation (``SENTENCE_ENDS``: ``. ! ? …`` and their Armenian, Arabic, Urdu,
  Devanagari, Ethiopic, Myanmar and Khmer forms) that whitespace follows, and after a run of the
  ideographic/full-width ones (``CLOSED_ENDS``: ``。！？｡``, written without a following space), so no token
  spans a sentence boundary: ``Hi there. The end`` -> ``Hi there.`` `` The end``.  The next sentence keeps
  its leading space, as GPT-2's pre-tokens do.

Encoding applies the one merge list in rank order (``bpe.models.merge_tokenizer``, as byte-bpe) to each
stage-2 chunk, as the released SuperBPE tokenizers do (a Hugging Face BPE model behind a ``Split``
pre-tokenizer); the HF export (``bpe.export.hf_export``) writes exactly that.

Tie-break: byte-bpe's in both stages (equal counts: the smallest ``(bytes of left, bytes of right)``,
``bpe.training.trainer``); HF's trainer, which the public code uses, takes the smallest pair of ids instead.

Deliberate differences from the public code (github alisawuffles/superbpe, its ``tokenizers`` fork):

* stage 1 uses the ``pretokenizer`` option (default tiktoken's GPT-2 regex, contractions and digit runs
  whole) instead of their GPT-2 variant with digit groups of three;
* the sentence cut above (the paper's restriction; their published stage-2 regex has digit cuts only:
  ``split_sentences=False`` reproduces that);
* every stage-1 merge is kept, even one whose pair no stage-2 chunk holds (their fork skips it), so the
  first ``transition`` ids are always the byte-bpe tokenizer of that size;
* no cap on the number of words in a token (some reimplementations cap it at four).

Derivable: yes, at the same ``transition``.  Stage 1 does not depend on ``vocab_size``, and stage 2 is
greedy with a deterministic tie-break, so training at a smaller size ``N >= transition`` learns the first
``N - specials - 256`` merges of the larger training, in order.  A size below ``transition`` is refused,
as training at it is (``derived``).  Training needs the text: stage 2 sees where pre-tokens touch, which
pre-token counts do not hold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

import numpy as np
import regex
from pydantic import Field
from typing_extensions import Self

from bpe.base import DEFAULT_SPECIAL_TOKENS, FamilyFacts, TokenizerError
from bpe.models.byte_bpe import ByteBPEOptions, ByteBPETokenizer
from bpe.models.merge_tokenizer import MergeTokenizer
from bpe.models.trained import TrainingRequest
from bpe.options import body_field, special_tokens_with
from bpe.pipeline.bytes_unicode import BYTE_TO_CHAR
from bpe.pipeline.pretokenizers import PreTokenizer
from bpe.training.counts import PretokenCounts
from bpe.training.trainer import ProgressCallback, progress_callback, train_merges
from bpe.validation import PositiveInt

_BYTES = [bytes([value]) for value in range(256)]
#: sentence-final punctuation that ends a stage-2 chunk when whitespace follows it
SENTENCE_ENDS = ".!?\u2026\u0589\u061f\u06d4\u0964\u0965\u1362\u1367\u104b\u17d4"
#: ideographic / full-width sentence ends, which end a stage-2 chunk whatever follows
CLOSED_ENDS = "\u3002\uff01\uff1f\uff61"
_DIGIT_GROUP = r"\p{N}{1,3}(?=(?:\p{N}{3})*+(?!\p{N}))"
# a chunk ends at the first sentence end before the next digit, else at the digit (or the end of the text)
STAGE2_PATTERN = rf"{_DIGIT_GROUP}|[^\p{{N}}]*?(?:[{SENTENCE_ENDS}]++(?=\s)|[{CLOSED_ENDS}]++)|[^\p{{N}}]++"
DIGITS_PATTERN = rf"{_DIGIT_GROUP}|[^\p{{N}}]++"
# not registered in PRETOKENIZERS: they only make sense after a stage-1 vocabulary (see the module docstring)
STAGE2_CHUNKERS = {
    True: PreTokenizer("superbpe", STAGE2_PATTERN),
    False: PreTokenizer("superbpe-digits", DIGITS_PATTERN),
}

Transition = Annotated[
    PositiveInt | None,
    Field(description="vocabulary size (specials included) where merges start to span words; required"),
]
SplitSentences = Annotated[
    bool,
    Field(description="stage 2: no token spans sentence-final punctuation before whitespace (false: digit cuts only)"),
]


class SuperBPEOptions(ByteBPEOptions):
    transition: Transition = None
    split_sentences: SplitSentences = True


class SuperBPETokenizer(ByteBPETokenizer):
    family = "superbpe"
    options_model = SuperBPEOptions
    facts = FamilyFacts(derivable=True, floor=(256, "bytes"), variant_of="byte-bpe")

    options: SuperBPEOptions

    def __init__(
        self,
        merges: Iterable[tuple[int, int]] = (),
        *,
        special_tokens: Iterable[str] = (),
        stage1_merges: int | None = None,
        **options: Any,
    ) -> None:
        """``merges``: id pairs, stage 1's then stage 2's; ``stage1_merges``: how many are stage 1's (None: all);
        ``special_tokens``: extra specials after ``<pad> <unk> <s> </s>``; ``options``: see ``SuperBPEOptions``."""
        MergeTokenizer.__init__(
            self,
            special_tokens=special_tokens_with(special_tokens),
            base_pieces=BYTE_TO_CHAR,
            base_bytes=_BYTES,
            merges=merges,
            options=SuperBPEOptions.parse(self.family, options),
        )
        learned = len(self._merge_pairs)
        self.stage1_merges = learned if stage1_merges is None else stage1_merges
        if isinstance(self.stage1_merges, bool) or not isinstance(self.stage1_merges, int) \
                or not 0 <= self.stage1_merges <= learned:  # fmt: skip
            raise TokenizerError(f'tokenizer file: field "stage1_merges" must be an integer from 0 to {learned} '
                                 f"(the merges), got {self.stage1_merges!r}", code="bad_tokenizer_file",
                                 value=self.stage1_merges, field="stage1_merges")  # fmt: skip
        #: stage 1's pre-tokenizer (training only); encoding cuts the text into stage-2 chunks
        self.stage1_pretokenizer = self.pretokenizer
        self.pretokenizer = STAGE2_CHUNKERS[self.options.split_sentences]

    # -- training ---------------------------------------------------------
    @classmethod
    def training_request(
        cls,
        vocab_size: Any,
        special_tokens: Iterable[str] = (),
        options: Mapping[str, Any] | SuperBPEOptions | None = None,
        progress: bool | ProgressCallback = False,
        workers: int | None = None,
    ) -> TrainingRequest:
        """byte-bpe's checks, and ``transition`` given, at least the floor and at most ``vocab_size``."""
        request = super().training_request(vocab_size, special_tokens, options, progress, workers)
        transition = request.options.transition
        if transition is None:
            raise TokenizerError("superbpe needs option transition: the vocabulary size where merges start to span "
                                 "words (at most vocab_size)", code="missing_option", value="transition")  # fmt: skip
        floor = cls.vocab_floor(special_tokens=request.extra_special_tokens)
        cls._check_transition(transition, floor.minimum, request.vocab_size, floor.parts)
        return request

    @staticmethod
    def _check_transition(transition: int, minimum: int, vocab_size: int, parts: str) -> None:
        if not minimum <= transition <= vocab_size:
            raise TokenizerError(
                f"superbpe option transition {transition} must be between the floor {minimum} ({parts}) and "
                f"vocab_size {vocab_size}", code="out_of_range", value=transition, field="transition")  # fmt: skip

    @classmethod
    def _train(cls, texts: Iterable[str] | PretokenCounts, request: TrainingRequest) -> Self:
        """Stage 1 on the pre-tokens of ``pretokenizer`` up to ``transition``, then stage 2 on the stage-2 chunks
        up to ``vocab_size`` (module docstring); ``normalizer`` rewrites the text first, as for byte-bpe."""
        from bpe.pipeline.normalizers import normalized_texts
        from bpe.training.counts import count_pretokens

        if isinstance(texts, PretokenCounts):
            raise TokenizerError("superbpe cannot train from pre-token counts: stage 2 needs the text, to see where "
                                 "pre-tokens touch", code="no_counts_training", value="superbpe")  # fmt: skip
        settings = request.options
        texts = list(normalized_texts(texts, settings.normalizer))  # read twice: once per stage
        counts = count_pretokens(texts, settings.pretokenizer, workers=request.workers)  # checks the texts
        untrained = cls.untrained(counts, request)
        with progress_callback(request.progress, "superbpe stage 1 merges") as callback:
            stage1 = untrained._learn_merges(counts, settings.transition, callback)
        subwords = untrained.with_merges(stage1)
        with progress_callback(request.progress, "superbpe stage 2 merges") as callback:
            stage2 = subwords._learn_superword_merges(texts, request.vocab_size, callback)
        return cls(stage1 + stage2, special_tokens=request.extra_special_tokens, stage1_merges=len(stage1),
                   **settings.model_dump())  # fmt: skip

    def _learn_superword_merges(
        self, texts: list[str], vocab_size: int, progress: ProgressCallback | None
    ) -> list[tuple[int, int]]:
        """Stage 2, called on the stage-1 tokenizer: the distinct stage-2 chunks of ``texts`` with their counts,
        each encoded by the stage-1 merges (in rank order), merged on until ``vocab_size``."""
        chunks: Counter[str] = Counter()
        pattern = regex.compile(self.pretokenizer.pattern or "")
        for text in texts:
            chunks.update(pattern.findall(text))
        distinct = list(chunks)
        encoded = self._encode_pretokens(distinct)  # compiled batch merge from 1000 chunks on
        symbols = np.fromiter((token for ids, _ in encoded for token in ids), dtype=np.int32)
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(ids) for ids, _ in encoded], out=offsets[1:])
        weights = np.fromiter(chunks.values(), dtype=np.int64, count=len(distinct))
        merges = train_merges(
            (symbols, offsets, weights),
            self._merge_keys(),
            vocab_size - self.vocab_size,
            min_frequency=self.options.min_frequency,
            progress=progress,
            overwrite_words=True,
        )
        return [(merge.left, merge.right) for merge in merges]

    @classmethod
    def untrained(cls, counts: PretokenCounts, request: TrainingRequest) -> Self:
        """The 256 byte symbols, whatever the text."""
        return cls(special_tokens=request.extra_special_tokens, **request.options.model_dump())

    def with_merges(self, merges: Iterable[tuple[int, int]]) -> Self:
        """This tokenizer's specials, byte symbols and options with ``merges``, all counted as stage 1's
        (what ``_train`` needs between the stages)."""
        extra_specials = self.special_tokens[len(DEFAULT_SPECIAL_TOKENS) :]
        return type(self)(merges, special_tokens=extra_specials, **self.options.model_dump())

    def derived(self, vocab_size: int) -> Self:
        """The first ``vocab_size`` ids: what training at that size with the same ``transition`` learns; a size
        below ``transition`` is refused as training refuses it."""
        if vocab_size == self.vocab_size:
            return self
        floor = type(self).vocab_floor(special_tokens=self.special_tokens[len(DEFAULT_SPECIAL_TOKENS) :])
        floor.check(self.family, vocab_size)
        if self.options.transition is not None:  # always set once trained or loaded
            self._check_transition(self.options.transition, floor.minimum, vocab_size, floor.parts)
        kept = vocab_size - self.first_merge_id
        extra_specials = self.special_tokens[len(DEFAULT_SPECIAL_TOKENS) :]
        return type(self)(self._merge_pairs[:kept], special_tokens=extra_specials,
                          stage1_merges=min(self.stage1_merges, kept), **self.options.model_dump())  # fmt: skip

    # -- what the stages made ---------------------------------------------
    @property
    def first_superword_id(self) -> int:
        """The id of the first stage-2 merge (the vocabulary size if there is none)."""
        return self.first_merge_id + self.stage1_merges

    # -- persistence ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "stage1_merges": self.stage1_merges}

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> Self:
        config, specials, vocab = cls.read_byte_body(body)
        options = SuperBPEOptions.read_saved(config)
        if options.transition is None:
            raise TokenizerError('tokenizer file: field "config.transition" is missing', code="bad_tokenizer_file",
                                 field="config.transition")  # fmt: skip
        tokenizer = cls(cls._read_merges(body), special_tokens=specials[len(DEFAULT_SPECIAL_TOKENS) :],
                        stage1_merges=body_field(body, "stage1_merges", int), **options.model_dump())  # fmt: skip
        tokenizer._check_saved_vocab(vocab)
        return tokenizer
