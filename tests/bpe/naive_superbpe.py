"""Reference SuperBPE, used ONLY by the tests: the paper's two stages written plainly, slow and obviously right.

Stage 1 is the naive BPE of ``tests/bpe/naive_bpe.py`` on the GPT-2 pre-tokens of the text (as UTF-8 byte ids).
Stage 2 cuts the text into chunks with a character loop (not the module's regex, so the loop checks the
regex), rewrites every chunk by applying the stage-1 merges in the order learned, and runs the same naive BPE
on the chunks.  Ids: the 4 default specials, then the 256 bytes, then the merges.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

import regex

from bpe.pipeline.pretokenizers import GPT2_PATTERN
from tests.bpe.naive_bpe import apply_in_training_order, naive_train

FIRST_BYTE = 4  # after <pad> <unk> <s> </s>
FIRST_MERGE = FIRST_BYTE + 256
SENTENCE_ENDS = set(".!?\u2026\u0589\u061f\u06d4\u0964\u0965\u1362\u1367\u104b\u17d4")
CLOSED_ENDS = set("\u3002\uff01\uff1f\uff61")


def is_digit(char: str) -> bool:
    return unicodedata.category(char).startswith("N")


def stage2_chunks(text: str, split_sentences: bool = True) -> list[str]:
    """Digit runs cut in threes from the right; the rest whole, but (``split_sentences``) ended after a run of
    sentence-final punctuation that whitespace follows, or after a run of ideographic sentence ends."""
    chunks: list[str] = []
    i = 0
    while i < len(text):
        j = i
        if is_digit(text[i]):
            while j < len(text) and is_digit(text[j]):
                j += 1
            run = text[i:j]
            first = len(run) % 3 or 3
            chunks.append(run[:first])
            chunks.extend(run[k : k + 3] for k in range(first, len(run), 3))
            i = j
            continue
        while j < len(text) and not is_digit(text[j]):
            if split_sentences and text[j] in CLOSED_ENDS:
                while j < len(text) and text[j] in CLOSED_ENDS:
                    j += 1
                break
            if split_sentences and text[j] in SENTENCE_ENDS:
                end = j
                while end < len(text) and text[end] in SENTENCE_ENDS:
                    end += 1
                if end < len(text) and text[end].isspace():
                    j = end
                    break
                j = end
                continue
            j += 1
        chunks.append(text[i:j])
        i = j
    return chunks


def byte_ids(text: str) -> tuple[int, ...]:
    return tuple(FIRST_BYTE + value for value in text.encode("utf-8"))


def naive_superbpe(
    texts: Sequence[str], vocab_size: int, transition: int, min_frequency: int = 2, split_sentences: bool = True
) -> tuple[list[tuple[int, int]], int]:
    """(every merge as (left id, right id), how many are stage 1's)."""
    keys = [b"<pad>", b"<unk>", b"<s>", b"</s>", *(bytes([value]) for value in range(256))]
    words = Counter(byte_ids(piece) for text in texts for piece in regex.findall(GPT2_PATTERN, text))
    stage1, _ = naive_train(words, keys, transition - FIRST_MERGE, min_frequency)
    merges = [(left, right) for left, right, _ in stage1]
    for left, right in merges:
        keys.append(keys[left] + keys[right])
    chunks = Counter(chunk for text in texts for chunk in stage2_chunks(text, split_sentences))
    words2 = Counter()
    for chunk, count in chunks.items():
        words2[tuple(apply_in_training_order(byte_ids(chunk), merges, FIRST_MERGE))] += count
    stage2, _ = naive_train(words2, keys, vocab_size - len(keys), min_frequency)
    return merges + [(left, right) for left, right, _ in stage2], len(merges)
