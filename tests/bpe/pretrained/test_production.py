"""Tokenizers by name (cl100k, the mistral-common models, bytes, chars): offline, encode-only.
The contract of each format (ids equal to the owning library's, spans, round trip, no special ids)
is checked on FLORES in test_pretrained.py; cl100k's fertility and premium on the whole FLORES-200
set in tests/benchmarks/measure/test_metrics.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import bpe
from bpe.base import Tokenizer, TokenizerError, TrainableTokenizer
from tests.errors import raises_code

NAMES = tuple(bpe.PRODUCTION)


@pytest.fixture(scope="module", params=NAMES)
def production(request: pytest.FixtureRequest) -> Tokenizer:
    return bpe.load(request.param)


def test_well_known_encodings() -> None:
    cl100k, mistral = bpe.load("cl100k"), bpe.load("mistral-v1")
    assert cl100k.encode("hello world") == [15339, 1917]
    assert cl100k.vocab_size == 100256 and cl100k.unk_id is None
    # special-token text is ordinary text, as for any user input
    special_text = cl100k.encode("<|endoftext|>")
    assert 100257 not in special_text and cl100k.decode(special_text) == "<|endoftext|>"
    assert mistral.encode("Hello world") == [22557, 1526]  # no BOS: only the text's tokens
    assert mistral.vocab_size == 32000 and mistral.unk_id == 0
    tekken = bpe.load("tekken-240911")
    assert tekken.vocab_size == 131072 and tekken.id_to_piece(1) == "<SPECIAL_1>"
    assert min(tekken.encode("Hello world")) >= 1000  # ids of text come after the 1,000 control ids


def test_works_offline_without_network() -> None:
    """A fresh interpreter with every network route closed (dead proxy, hub offline, no tiktoken cache)."""
    dead_proxy = "http://127.0.0.1:9"
    environment = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TIKTOKEN_CACHE_DIR": "",  # read the packaged file itself, not a cached copy
        **{name: dead_proxy for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")},
    }
    code = "import bpe; print([len(bpe.load(name).encode('hello world')) for name in bpe.PRODUCTION])"
    result = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[2, 3, 3, 3, 3, 2, 2, 11, 11]"


def test_cut_characters_decode_without_error() -> None:
    for name in ("cl100k", "mistral-v1", "bytes"):
        tokenizer = bpe.load(name)
        ids = tokenizer.encode("𓀀")  # a rare 4-byte character: each spells it with single-byte tokens
        assert [tokenizer.id_to_bytes(i) for i in ids][-4:] == [b"\xf0", b"\x93", b"\x80", b"\x80"]
        assert tokenizer.decode(ids) == "𓀀"
        assert tokenizer.decode(ids[:-1]).startswith("\ufffd")


def test_baselines() -> None:
    text = "Merhaba 한국"
    assert bpe.load("bytes").encode(text) == list(text.encode("utf-8"))
    assert bpe.load("chars").encode(text) == [ord(char) for char in text]
    assert bpe.load("chars").encode_with_spans("ab한").spans == [(0, 1), (1, 2), (2, 5)]
    assert bpe.load("bytes").pieces([77, 0, 0xEB]) == ["M", "<0x00>", "<0xEB>"]
    assert bpe.load("chars").decode([0xD800, 0x41]) == "\ufffdA"  # a surrogate code point has no bytes
    with raises_code(TokenizerError, "lone_surrogate", value="\ud800"):
        bpe.load("bytes").encode("a\ud800")


def test_unknown_names_list_the_known_ones() -> None:
    for unknown in ("o200k", "gpt2", "mistral-v9"):
        with raises_code(TokenizerError, "unknown_tokenizer", value=unknown) as caught:
            bpe.load(unknown)
        assert all(name in str(caught.value) for name in bpe.PRODUCTION)  # the known ones
    with raises_code(TokenizerError, "option_not_applicable", value="cl100k"):
        bpe.load("cl100k", pattern="cl100k")


def test_encode_only(production: Tokenizer) -> None:
    """A published tokenizer is an encoding tokenizer only: it has no training or saving to refuse."""
    assert not isinstance(production, TrainableTokenizer) and not production.trainable
    for method in ("train", "vocab_floor", "to_dict", "from_dict", "save"):
        assert not hasattr(production, method), method


def test_out_of_range_ids(production: Tokenizer) -> None:
    size = production.vocab_size
    with raises_code(TokenizerError, "token_id_out_of_range", value=size) as caught:
        production.decode([0, size])
    assert production.name in str(caught.value)
    with raises_code(TokenizerError, "token_id_out_of_range", value=-1):
        production.id_to_piece(-1)
    for bad in (True, "5", 1.0):
        with raises_code(TokenizerError, "token_id_not_integer", value=bad):
            production.id_to_piece(bad)
