"""Production rows cl100k / mistral-v1: offline, encode-only, honest byte spans, published figures."""

from __future__ import annotations

import importlib.resources
import os
import subprocess
import sys

import pytest
from mistral_common.tokens.tokenizers.sentencepiece import SentencePieceTokenizer as MistralReference

import bpe
from bpe.base import Tokenizer, TokenizerError
from bpe.production import MISTRAL_MODEL, MISTRAL_PACKAGE

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


def test_works_offline_without_network() -> None:
    """A fresh interpreter with every network route closed (dead proxy, hub offline, no tiktoken cache)."""
    dead_proxy = "http://127.0.0.1:9"
    environment = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TIKTOKEN_CACHE_DIR": "",  # read the packaged file itself, not a cached copy
        **{name: dead_proxy for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")},
    }
    code = "import bpe; print(bpe.load('cl100k').encode('hello world'), bpe.load('mistral-v1').encode('Hello'))"
    result = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[15339, 1917] [22557]"


def test_cl100k_figures_match_the_notes(flores_lines: dict[str, list[str]]) -> None:
    """Independently measured (notes/metrics-and-peers.md): tokens per whitespace word on FLORES
    dev+devtest, and the premium over English as a ratio of sums (Petrov et al. 2023: tr 1.91, ru 2.49, ko 2.38)."""
    cl100k = bpe.load("cl100k")
    tokens = {lang: sum(len(cl100k.encode(line)) for line in lines) for lang, lines in flores_lines.items()}
    words = {lang: sum(len(line.split()) for line in lines) for lang, lines in flores_lines.items()}
    fertility = {lang: tokens[lang] / words[lang] for lang in tokens}
    premium = {lang: tokens[lang] / tokens["eng_Latn"] for lang in tokens}
    expected_fertility = {"eng_Latn": 1.24, "tur_Latn": 2.96, "rus_Cyrl": 3.38, "kor_Hang": 4.16}
    expected_premium = {"tur_Latn": 1.92, "rus_Cyrl": 2.48, "kor_Hang": 2.37}
    assert fertility == pytest.approx(expected_fertility, abs=0.005)  # the notes give two decimals
    assert {lang: premium[lang] for lang in expected_premium} == pytest.approx(expected_premium, abs=0.005)


def test_mistral_matches_mistral_common(flores: dict[str, list[str]]) -> None:
    """Same ids as mistral-common's own tokenizer class for the same file (BOS/EOS off)."""
    reference = MistralReference(str(importlib.resources.files(MISTRAL_PACKAGE) / MISTRAL_MODEL))
    mistral = bpe.load("mistral-v1")
    for lines in flores.values():
        for line in lines[:300]:
            assert mistral.encode(line) == reference.encode(line, bos=False, eos=False)


def test_flores_spans_and_round_trip(production: Tokenizer, flores: dict[str, list[str]]) -> None:
    """Spans tile the UTF-8 text; each token's bytes are the text it covers (mistral-v1's first
    token also carries the dummy-prefix space); decoding restores every line."""
    for lines in flores.values():
        for line in lines:
            encoding = production.encode_with_spans(line)
            data = line.encode("utf-8")
            token_bytes = [production.id_to_bytes(i) for i in encoding.ids]
            if production.family == "mistral-v1":
                assert token_bytes[0].startswith(b" ")
                token_bytes[0] = token_bytes[0][1:]
            assert token_bytes == [data[start:end] for start, end in encoding.spans]
            assert [start for start, _ in encoding.spans[1:]] == [end for _, end in encoding.spans[:-1]]
            assert production.decode(encoding.ids) == line


def test_cut_characters_decode_without_error(production: Tokenizer) -> None:
    ids = production.encode("𓀀")  # a rare 4-byte character: both spell it with single-byte tokens
    assert [production.id_to_bytes(i) for i in ids][-4:] == [b"\xf0", b"\x93", b"\x80", b"\x80"]
    assert production.decode(ids) == "𓀀"
    assert production.decode(ids[:-1]).startswith("\ufffd")


def test_encode_only(production: Tokenizer, tmp_path) -> None:
    with pytest.raises(TokenizerError, match=f"{production.family} is a production tokenizer: encode-only"):
        type(production).train(["some text"], 1000)
    with pytest.raises(TokenizerError, match="encode-only"):
        production.save(tmp_path / "tokenizer.json")
    assert list(tmp_path.iterdir()) == []
    assert not production.trainable


def test_out_of_range_ids(production: Tokenizer) -> None:
    size = production.vocab_size
    with pytest.raises(TokenizerError, match=f"token id {size} is out of range for {production.family}"):
        production.decode([0, size])
    for bad in (-1, True, "5", 1.0):
        with pytest.raises(TokenizerError, match="out of range"):
            production.id_to_piece(bad)
