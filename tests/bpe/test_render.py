"""Rendering pieces as the text they cover: the rules, and Turkish, Russian and Korean through every
family and pretrained format (no mojibake, faithful to the text)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest

import bpe
from bpe.base import Encoding, Tokenizer
from bpe.export.hf_export import to_hf_json
from bpe.render import EMPTY, SEPARATOR, render, render_bytes, render_pieces
from tests.conftest import FULL_DATA_ROOT

VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥"}


def test_rules() -> None:
    text = "a b\tc\nd\u200be"
    spans = [(0, 1), (1, 3), (3, 5), (5, 7), (7, 11), (11, 11)]
    assert render_pieces(text, Encoding(ids=[5] * 6, spans=spans)) == ["a", "␣b", "⇥c", "↵d", "<U+200B>e", EMPTY]
    korean = "한국"  # 한 = ED 95 9C, 국 = EA B5 AD
    cut = Encoding(ids=[1, 2, 3], spans=[(0, 2), (2, 4), (4, 6)])
    assert render_pieces(korean, cut) == ["<0xED><0x95>", "<0x9C><0xEA>", "<0xB5><0xAD>"]
    assert render(korean, Encoding(ids=[7, 9], spans=[(0, 3), (3, 6)]), unk_id=9) == f"한{SEPARATOR}<unk:국>"
    assert render_bytes(b"\xff" + "ş".encode() + b"\xc5") == "<0xFF>ş<0xC5>"


def expected_piece(text: str, start: int, end: int) -> str:
    """The rule written out character by character: a character wholly inside the span as itself,
    the bytes of one cut by the span as <0xNN>."""
    if start == end:
        return EMPTY
    out, position = [], 0
    for char in text:
        data = char.encode("utf-8")
        first, last = position, position + len(data)
        position = last
        if first >= start and last <= end:
            out.append(VISIBLE.get(char, char) if char.isprintable() or char in VISIBLE else f"<U+{ord(char):04X}>")
        elif first < end and last > start:
            out.extend(f"<0x{byte:02X}>" for byte in data[max(start, first) - first : min(end, last) - first])
    return "".join(out)


@pytest.fixture(scope="module")
def sentences(flores: dict[str, list[str]]) -> dict[str, list[str]]:
    """A few Turkish, Russian and Korean sentences (the same FLORES ids in each language)."""
    return {language: flores[language][:40] for language in ("tur_Latn", "rus_Cyrl", "kor_Hang")}


@pytest.fixture(scope="module")
def tokenizers(embedded_training_text: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Tokenizer]:
    """Every trainable family (small vocabularies, so characters get cut and <unk> occurs), the
    pretrained formats, and the baselines."""
    text = embedded_training_text
    trained = {
        "word": bpe.train("word", text, 2000),
        "char": bpe.train("char", text, 300),
        "char-bpe": bpe.train("char-bpe", text, 1000),
        "char-bpe-separate": bpe.train("char-bpe", text, 1000, end_of_word="separate"),
        "byte-bpe": bpe.train("byte-bpe", text, 600),
        "spm-bpe": bpe.train("spm-bpe", text, 1200),
        "spm-unigram": bpe.train("spm-unigram", text, 1200),
    }
    exported = tmp_path_factory.mktemp("render") / "tokenizer.json"
    exported.write_text(to_hf_json(trained["byte-bpe"]), encoding="utf-8")
    tiktoken_file = importlib.resources.files("tiktoken_ext") / "data"
    pretrained = {
        "cl100k": bpe.load("cl100k"),
        "mistral-v1": bpe.load("mistral-v1"),
        "tekken": bpe.load("tekken-240911"),
        "hf": bpe.load(exported),
        "tiktoken-file": bpe.load(Path(str(tiktoken_file / "cl100k_base.tiktoken")), pattern="cl100k"),
        "bytes": bpe.load("bytes"),
        "chars": bpe.load("chars"),
    }
    if FULL_DATA_ROOT is not None:
        pretrained["gpt2"] = bpe.load(FULL_DATA_ROOT / "tokenizers" / "gpt2.tiktoken", pattern="gpt2")
        pretrained["llama2"] = bpe.load(FULL_DATA_ROOT / "tokenizers" / "llama2-tokenizer.model")
    return {**trained, **pretrained}


def test_every_family_renders_each_language_readably(
    tokenizers: dict[str, Tokenizer], sentences: dict[str, list[str]]
) -> None:
    for name, tokenizer in tokenizers.items():
        for language, lines in sentences.items():
            for line in lines:
                encoding = tokenizer.encode_with_spans(line)
                pieces = render_pieces(line, encoding, tokenizer.unk_id)
                unknown = [token == tokenizer.unk_id for token in encoding.ids]
                expected = [
                    f"<unk:{expected_piece(line, start, end)}>" if is_unknown else expected_piece(line, start, end)
                    for (start, end), is_unknown in zip(encoding.spans, unknown, strict=True)
                ]
                assert pieces == expected, (name, language, line)
                # no byte-alias mojibake (Ġ, Ã¼, Ð°, ì...): every letter shown is a letter of the text
                shown = render(line, encoding, tokenizer.unk_id)
                letters = {char for char in shown if char.isalpha()} - set("xunkU") - set("ABCDEF")
                assert letters <= set(line), (name, language, sorted(letters - set(line)))


def test_families_that_never_cut_a_character_show_no_bytes(
    tokenizers: dict[str, Tokenizer], sentences: dict[str, list[str]]
) -> None:
    for name in ("word", "char", "char-bpe", "char-bpe-separate", "chars"):
        for lines in sentences.values():
            for line in lines:
                assert "<0x" not in render(line, tokenizers[name].encode_with_spans(line)), (name, line)
