"""The compiled Mersenne Twister of BPE-dropout against Python's ``random.Random``."""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from bpe.kernels import encode_kernel
from bpe.kernels._numba import njit


@njit
def _draws(key, count):
    state = np.empty(encode_kernel._MT_N + 1, dtype=np.int64)
    encode_kernel._mt_seed(state, key)
    out = np.empty(count)
    for i in range(count):
        out[i] = encode_kernel._mt_random(state)
    return out


def _string_key(seed: str) -> np.ndarray:
    """The big-endian bytes of the integer ``random.Random(seed)`` seeds with (its UTF-8 bytes, then their SHA-512)."""
    data = seed.encode()
    return np.frombuffer(data + hashlib.sha512(data).digest(), dtype=np.uint8).copy()


def test_string_seeds_draw_what_random_draws(flores_sample):
    """Seeds of every length (keys shorter and longer than the 624-word state), four scripts, past the
    first refill of the state (624 outputs, 312 draws)."""
    texts = ["", "a", *(line for lines in flores_sample.values() for line in lines[:20]), "x" * 5000]
    for index, text in enumerate(texts):
        seed = f"{index - 3}\x00{text}"
        stream = random.Random(seed)
        count = 1500 if index % 7 == 0 else 40
        assert _draws(_string_key(seed), count).tolist() == [stream.random() for _ in range(count)], seed[:30]


@pytest.mark.parametrize("value", [0, 1, 255, 2**32 - 1, 2**32, 2**64 + 5, 12345678901234567890123])
def test_integer_keys_with_leading_zero_bytes(value):
    """Leading zero bytes do not count (CPython takes the integer's significant 32-bit words)."""
    key = np.frombuffer(value.to_bytes(max(1, (value.bit_length() + 7) // 8) + 3, "big"), dtype=np.uint8).copy()
    stream = random.Random(value)
    assert _draws(key, 700).tolist() == [stream.random() for _ in range(700)]
