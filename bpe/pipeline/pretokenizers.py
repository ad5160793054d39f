"""Pre-tokenizers: cut text into pre-tokens that merges never cross.

Every pre-tokenizer here is **lossless**: its pre-tokens concatenate back to
the input exactly (whitespace is kept, attached to a pre-token), so a
tokenizer built on any of them decodes back to its input wherever no
``<unk>`` was produced.  Because of that, the UTF-8 byte offset of each
pre-token is simply the running sum of the byte lengths before it.

Registry (``PRETOKENIZERS``, ``get_pretokenizer(name)``):

``unicode``
    A pre-token is a run of letters, combining marks and digits
    (``[\\p{L}\\p{M}\\p{N}]+``: letters and digits stay together, so
    ``abc123`` is one word; combining marks and Korean jamo never split a
    word), or a run of other non-space characters (punctuation, symbols).
    ONE preceding space (U+0020) attaches to the following run:
    ``Hello, world!!!`` -> ``Hello`` ``,`` `` world`` ``!!!``.  Any other
    whitespace forms one pre-token per run: ``a  b`` -> ``a`` `` `` `` b``,
    ``a\\n\\nb`` -> ``a`` ``\\n\\n`` ``b``, ``a \\n b`` -> ``a`` `` \\n`` `` b``;
    trailing whitespace is one pre-token.
``whitespace``
    Whitespace-separated chunks, with the same whitespace rules
    (``Hello, world!!!`` -> ``Hello,`` `` world!!!``).  Kept lossless
    instead of dropping the whitespace, so no decoder has to guess spaces.
``gpt2``, ``cl100k``, ``o200k``
    The exact regexes of tiktoken's ``r50k_base`` (GPT-2), ``cl100k_base``
    and ``o200k_base`` encodings (evaluated with the ``regex`` module).
``none``
    The whole text is one pre-token (BPE on one string such as ``_AB_ABC_AB_ABAB``).
``morpheme``
    Korean morpheme-aware pre-tokenization (Park et al. 2020, "An Empirical
    Study of Tokenization Strategies for Various Korean NLP Tasks": morpheme
    segmentation before BPE): the ``unicode`` pre-tokens, each one holding
    Hangul cut further at the morpheme boundaries kiwipiepy finds when it
    analyzes the whole text (in context).  Kiwi reports each morpheme's
    character offsets in the text; fused morphemes overlap inside a syllable
    (했다 = 하 [0,1) + 었 [0,1) + 다 [1,2)), so an offset is a cut iff a morpheme
    starts there and no morpheme spans across it: a syllable is never cut
    (했|다, 가|셨|어요).  The space attached to a word stays on its first
    morpheme.  Only offsets are used, never kiwi's morpheme forms (었 is not
    in the text), so the pre-tokens still tile the text and decoding restores
    it.  Pre-tokens without Hangul are left whole; a text without Hangul
    never reaches kiwi.  Text in conjoining jamo (after the ``jamo``
    normalizer) is analyzed in its composed form, the cuts mapped back.
    Kiwi runs single-threaded with its default model, and its analysis may
    change with the installed kiwipiepy version.
"""

from __future__ import annotations

import functools
import warnings
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

import regex

from bpe.base import TokenizerError
from bpe.pipeline.normalizers import JamoNormalizer

_WORD = r"[\p{L}\p{M}\p{N}]"
_OTHER = r"[^\s\p{L}\p{M}\p{N}]"
# A whitespace run is one pre-token, except a final plain space before a
# non-space, which the next pre-token takes (the shortest run followed by a
# non-space or by " " + non-space); trailing whitespace is one pre-token.
_SPACES = r"\s+?(?=\S| \S)|\s+"
UNICODE_PATTERN = rf" ?{_WORD}++| ?{_OTHER}++|{_SPACES}"
WHITESPACE_PATTERN = rf" ?\S++|{_SPACES}"

# Copied verbatim from tiktoken (tiktoken_ext/openai_public.py); a test checks
# they still equal tiktoken's own strings.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
# Qwen (Qwen-7B)'s pattern, from its tokenization_qwen.py: cl100k's shape, but digits one at a time.
QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"""
    r"""\s+(?!\S)|\s+"""
)


@dataclass(frozen=True)
class PreTokenizer:
    """A named, lossless way to cut text into pre-tokens.

    ``pattern`` is a ``regex`` pattern whose matches tile the text, or None for
    "the whole text is one pre-token".
    """

    name: str
    pattern: str | None
    _compiled: regex.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled = regex.compile(self.pattern) if self.pattern is not None else None
        object.__setattr__(self, "_compiled", compiled)

    @property
    def is_regex(self) -> bool:
        """True when ``pattern`` alone defines the pre-tokens (what a regex-based export needs)."""
        return True

    def split(self, text: str) -> list[str]:
        """The pre-tokens of ``text``, in order; they concatenate back to ``text``."""
        if self._compiled is None:
            return [text] if text else []
        return self._compiled.findall(text)

    def split_with_offsets(self, text: str) -> list[tuple[str, int]]:
        """The pre-tokens of ``text`` with the UTF-8 byte offset where each starts."""
        pieces = self.split(text)
        lengths = map(len, pieces) if text.isascii() else (len(p.encode("utf-8")) for p in pieces)
        return list(zip(pieces, accumulate(lengths, initial=0), strict=False))


_HANGUL = regex.compile(r"\p{Hangul}")
JAMO = JamoNormalizer()


@dataclass(frozen=True)
class MorphemePreTokenizer(PreTokenizer):
    """``pattern``'s pre-tokens, those with Hangul cut at kiwipiepy's morpheme boundaries.

    Not a pure regex: ``pattern`` gives the word-level pre-tokens only, so a
    tokenizer built on it cannot be exported to a regex-based format.
    """

    @property
    def is_regex(self) -> bool:
        return False

    def split(self, text: str) -> list[str]:
        words = super().split(text)
        if not _HANGUL.search(text):
            return words
        cuts = _morpheme_cuts_in(text)
        pieces: list[str] = []
        start = 0
        for word in words:
            end = start + len(word)
            if not _HANGUL.search(word):
                pieces.append(word)
                start = end
                continue
            content = start + len(word) - len(word.lstrip())  # an attached space stays on the first morpheme
            position = start
            for cut in cuts[bisect_right(cuts, content) : bisect_left(cuts, end)]:
                pieces.append(text[position:cut])
                position = cut
            pieces.append(text[position:end])
            start = end
        return pieces


def _morpheme_cuts_in(text: str) -> list[int]:
    """kiwi's morpheme cuts of ``text`` (character offsets), analyzing jamo text in its composed form."""
    composed = JAMO.denormalize(text)
    cuts = morpheme_cuts((token.start, token.len) for token in _kiwi().tokenize(composed))
    if composed == text:
        return cuts
    # a composed syllable stands for as many characters of `text` as its decomposition has
    offsets = list(accumulate((len(JAMO.normalize_text(char)) for char in composed), initial=0))
    return [offsets[cut] for cut in cuts]


def morpheme_cuts(morphemes: Iterable[tuple[int, int]]) -> list[int]:
    """Sorted character offsets where a morpheme ``(start, length)`` starts and none spans across."""
    morphemes = list(morphemes)
    inside = {offset for start, length in morphemes for offset in range(start + 1, start + length)}
    return sorted({start for start, _ in morphemes} - inside)


@functools.cache
def _kiwi() -> Any:
    from kiwipiepy import Kiwi  # loads its model (seconds): only when the morpheme pre-tokenizer runs

    with warnings.catch_warnings():  # kiwipiepy warns that 0 means one thread since 0.21, which is what we want
        warnings.simplefilter("ignore", DeprecationWarning)
        return Kiwi(num_workers=0)


PRETOKENIZERS: dict[str, PreTokenizer] = {
    p.name: p
    for p in (
        PreTokenizer("unicode", UNICODE_PATTERN),
        PreTokenizer("whitespace", WHITESPACE_PATTERN),
        PreTokenizer("gpt2", GPT2_PATTERN),
        PreTokenizer("cl100k", CL100K_PATTERN),
        PreTokenizer("o200k", O200K_PATTERN),
        PreTokenizer("qwen", QWEN_PATTERN),
        PreTokenizer("none", None),
        MorphemePreTokenizer("morpheme", UNICODE_PATTERN),
    )
}


def get_pretokenizer(name: str) -> PreTokenizer:
    """The registered pre-tokenizer called ``name``, or a TokenizerError naming the choices."""
    if not isinstance(name, str) or name not in PRETOKENIZERS:
        raise TokenizerError(f"unknown pre-tokenizer {name!r}; choose one of: {', '.join(PRETOKENIZERS)}",
                             code="unknown_pretokenizer", value=name)  # fmt: skip
    return PRETOKENIZERS[name]
