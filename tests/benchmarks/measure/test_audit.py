"""Vocabulary audit (`benchmarks.measure.audit`, `tokbench audit`): every entry's reachability against an independent
check."""

from __future__ import annotations

import base64
import csv
from pathlib import Path

import pandas as pd
import pytest

import bpe
from benchmarks.measure.audit import STATUSES, audit_vocabulary, entry_script
from bpe.models.char_bpe import CharBPETokenizer
from tests.bpe.naive_bpe import apply_in_training_order
from tests.conftest import FULL_DATA_ROOT

NEEDS_FULL = pytest.mark.skipif(FULL_DATA_ROOT is None, reason="data root absent: the tokenizer files are in it")


def statuses(tokenizer: bpe.Tokenizer) -> dict[int, str]:
    return {entry.id: entry.status for entry in audit_vocabulary(tokenizer).entries}


@NEEDS_FULL
def test_gpt2_ranks_against_tiktoken() -> None:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path = FULL_DATA_ROOT / "tokenizers" / "gpt2.tiktoken"
    ranks = load_tiktoken_bpe(str(path))
    pattern = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    encoding = tiktoken.Encoding("gpt2-check", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    expected = {}
    for data, rank in ranks.items():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            expected[rank] = "partial"
            continue
        expected[rank] = "reachable" if encoding.encode_ordinary(text) == [rank] else "unreachable"
    found = statuses(bpe.load(path, pattern="gpt2"))
    assert found == expected
    assert set(found.values()) >= {"reachable", "partial"}


def _sentencepiece_expected(path: Path) -> dict[int, str]:
    """Each piece's status from the sentencepiece library alone: a ``▁`` piece's text without its space
    encoded with the dummy prefix, any other text with a copy of the model whose dummy prefix is off."""
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece.SentencePieceProcessor(model_file=str(path))
    spec = sentencepiece_model_pb2.ModelProto.FromString(path.read_bytes())
    spec.normalizer_spec.add_dummy_prefix = False
    bare = sentencepiece.SentencePieceProcessor(model_proto=spec.SerializeToString())
    expected = {}
    for piece_id in range(model.get_piece_size()):
        piece = model.id_to_piece(piece_id)
        if model.is_unknown(piece_id) or model.is_control(piece_id):
            expected[piece_id] = "special"
            continue
        if model.is_byte(piece_id):
            value = int(piece[3:5], 16)
            if value >= 0x80:
                expected[piece_id] = "partial"
                continue
            ids = bare.encode(chr(value))
        elif piece.startswith("▁"):  # the bare ▁ too: its text without the space is empty
            ids = model.encode(piece[1:].replace("▁", " "))
        else:
            ids = bare.encode(piece.replace("▁", " "))
        expected[piece_id] = "reachable" if ids == [piece_id] else "unreachable"
    return expected


@NEEDS_FULL
def test_llama2_model_against_sentencepiece() -> None:
    path = FULL_DATA_ROOT / "tokenizers" / "llama2-tokenizer.model"
    found = statuses(bpe.load(path))
    assert found == _sentencepiece_expected(path)
    assert set(found.values()) == {"reachable", "unreachable", "partial", "special"}


def test_mistral_model_against_sentencepiece(tmp_path: Path) -> None:
    from bpe.pretrained.production import mistral_file

    path = tmp_path / "mistral-v1.model"
    path.write_bytes(mistral_file("tokenizer.model.v1"))
    assert statuses(bpe.load("mistral-v1")) == _sentencepiece_expected(path)


@pytest.fixture(scope="module")
def trained_char_bpe(flores: dict[str, list[str]]) -> CharBPETokenizer:
    """A char-bpe with a separate end-of-word marker on Turkish and Korean text."""
    return bpe.train("char-bpe", flores["tur_Latn"][:60] + flores["kor_Hang"][:60], 1500)


def test_trained_char_bpe_against_naive_bpe(trained_char_bpe: CharBPETokenizer) -> None:
    tokenizer = trained_char_bpe
    pieces = tokenizer.vocab
    ids = {piece: entry_id for entry_id, piece in enumerate(pieces)}
    assert len(ids) == len(pieces)  # a piece names its entry

    def naive(symbols: list[str]) -> list[int]:  # every merge in learned order, each applied left to right
        return apply_in_training_order([ids[s] for s in symbols], tokenizer.merges, tokenizer.first_merge_id)

    expected = {}
    for entry_id, piece in enumerate(pieces):
        if entry_id < len(tokenizer.special_tokens):
            expected[entry_id] = "special"
        elif piece == "</w>":
            expected[entry_id] = "no-text"
        elif piece.endswith("</w>"):  # a word end: its text alone, through the public encoder and naive BPE
            text = piece.removesuffix("</w>")
            reachable = naive([*text, "</w>"]) == [entry_id]
            assert reachable == (tokenizer.encode(text) == [entry_id])
            expected[entry_id] = "reachable" if reachable else "unreachable"
        else:  # inside a word: its characters with nothing after them
            expected[entry_id] = "reachable" if naive(list(piece)) == [entry_id] else "unreachable"
    found = statuses(tokenizer)
    assert found == expected
    assert "reachable" in found.values()


@pytest.mark.parametrize("end_of_word", ["separate", "none"])
def test_a_merge_that_never_applies_is_flagged(end_of_word: str) -> None:
    # a + b merges first, so "abc" always becomes ab | c and the merge a + bc never applies
    base = ["</w>", "a", "b", "c"] if end_of_word == "separate" else ["a", "b", "c"]
    tokenizer = CharBPETokenizer.from_piece_merges(base, [("a", "b"), ("b", "c"), ("a", "bc")], end_of_word=end_of_word)
    audit = audit_vocabulary(tokenizer)
    by_piece = {entry.piece: entry for entry in audit.entries}
    assert [entry.piece for entry in audit.entries if entry.status == "unreachable"] == ["abc"]
    assert by_piece["abc"].encoded == (by_piece["ab"].id, by_piece["c"].id)
    assert {by_piece[piece].status for piece in ("a", "b", "c", "ab", "bc")} == {"reachable"}
    assert tokenizer.encode("abc") != [by_piece["abc"].id]  # no text alone gives it


def test_byte_level_entries_that_are_part_of_a_character() -> None:
    tokenizer = bpe.train("byte-bpe", ["한국어 한국어 한국어 한국", "국어 국어"] * 5, 300)
    audit = audit_vocabulary(tokenizer)
    for entry in audit.entries:
        try:
            entry.data.decode("utf-8")
        except UnicodeDecodeError:
            assert entry.status == "partial"
    assert {entry.status for entry in audit.entries} >= {"partial", "reachable", "special"}
    assert audit.status_counts()["partial"] >= 128  # the byte symbols 0x80..0xFF at least


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("the", "Latin"), (" Ġx".replace("Ġ", ""), "Latin"), ("привет", "Cyrillic"), (" 서울", "Hangul"),
        ("東京", "CJK"), ("カタ", "CJK"), ("ab수", "other"), ("123", "other"), (" ", "other"), ("αβ", "other"),
        ("l'été", "Latin"),
    ],
)  # fmt: skip
def test_entry_script(text: str, script: str) -> None:
    assert entry_script(text.encode("utf-8")) == script


def test_entry_script_of_a_cut_character() -> None:
    assert entry_script("서".encode()[:2]) == "other"
    assert entry_script(b"a" + "서".encode()[:2]) == "Latin"


# -- the command ------------------------------------------------------------



def test_command_prints_counts_and_writes_the_csv(tokbench, tmp_path: Path, trained_char_bpe) -> None:
    saved, out = tmp_path / "char-bpe.json", tmp_path / "audit" / "entries.csv"
    trained_char_bpe.save(saved)
    status, stdout, err = tokbench("audit", "--tokenizer", saved, "--csv", out)
    assert status == 0, err
    audit = audit_vocabulary(trained_char_bpe)
    counts = audit.status_counts()
    lines = stdout.splitlines()
    assert lines[0] == f"{saved} (char-bpe): {trained_char_bpe.vocab_size:,} vocabulary entries"
    for status_name in STATUSES:
        row = next(line for line in lines if line.startswith(status_name + " "))
        assert row.split()[1] == f"{counts[status_name]:,}"
    for script, count in audit.script_counts().items():
        row = next(line for line in lines if line.startswith(script + " "))
        assert row.split()[1] == f"{count:,}"
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [(int(r["id"]), r["status"], r["script"]) for r in rows] == [
        (e.id, e.status, e.script) for e in audit.entries
    ]
    assert all(bytes.fromhex(r["hex"]) == e.data for r, e in zip(rows, audit.entries, strict=True))


def test_an_entry_holding_a_carriage_return_reads_back_as_one_row(tokbench, tmp_path: Path) -> None:
    """A tiktoken rank file's entry b"\\r" is the piece "\\r" (GPT-2's id 201): CSV readers (csv, pandas) must
    read one row per entry with that piece intact, not a line break inside an unquoted field."""
    ranks = tmp_path / "bytes.tiktoken"
    ranks.write_bytes(b"".join(base64.b64encode(bytes([byte])) + b" %d\n" % byte for byte in range(256)))
    out = tmp_path / "bytes.csv"
    status, _, err = tokbench("audit", "--tokenizer", ranks, "--pattern", "gpt2", "--csv", out)
    assert status == 0, err
    with out.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 256 and len(pd.read_csv(out, keep_default_na=False)) == 256
    assert bytes.fromhex(rows[13]["hex"]) == b"\r" and rows[13]["piece"] == "\r"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tokenizer", "MISSING"], "missing.json: no such tokenizer file"),
        (["--tokenizer", "chars", "--csv", "DIR"], "is a directory"),
        (["--tokenizer", "NOT_A_TOKENIZER"], "junk.json: a JSON file in no known tokenizer format"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tokbench, tmp_path: Path, argv: list[str], message: str) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": 1}', encoding="utf-8")
    paths = {"MISSING": str(tmp_path / "missing.json"), "DIR": str(tmp_path), "NOT_A_TOKENIZER": str(junk)}
    status, out, err = tokbench("audit", *[paths.get(arg, arg) for arg in argv])
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("tokbench: error: ") and message in err, err
    assert list(tmp_path.iterdir()) == [junk]  # nothing written


def test_entries_never_used_on_each_language(flores: dict[str, list[str]]) -> None:
    from benchmarks.measure.audit import unused_entries

    tokenizer = bpe.load("mistral-v1")
    audit = audit_vocabulary(tokenizer)
    texts = {language: flores[language][:100] for language in ("eng_Latn", "kor_Hang")}
    rows = unused_entries(audit, tokenizer, texts)
    assert [row.language for row in rows] == ["eng_Latn", "kor_Hang"]
    for row in rows:
        used = set()
        for text in texts[row.language]:
            used.update(tokenizer.encode(text))
        assert set(row.never_used) == set(range(tokenizer.vocab_size)) - used
        assert sum(row.by_status.values()) == len(row.never_used)
        assert row.by_status["unreachable"] == sum(1 for token in row.never_used
                                                   if audit.entries[token].status == "unreachable")  # fmt: skip
    english, korean = rows
    assert len(korean.never_used) != len(english.never_used)


def test_utf8_bytes_row_reaches_exactly_the_ascii_bytes() -> None:
    audit = audit_vocabulary(bpe.load("bytes"))
    assert [entry.status for entry in audit.entries] == ["reachable"] * 128 + ["partial"] * 128


@pytest.mark.parametrize("name", ["word", "char", "char-bpe", "byte-bpe", "spm-bpe", "spm-unigram", "hf"])
def test_every_format_and_family_is_audited(name: str, tmp_path: Path) -> None:
    """Each saved family (tests/fixtures/tokenizers) and a Hugging Face file: every checked entry's status
    agrees with the ids its check recorded, and a word-start or word-end entry with the public encoder."""
    from bpe.export.hf_export import to_hf_json

    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "tokenizers"
    if name == "hf":
        exported = tmp_path / "tokenizer.json"
        exported.write_text(to_hf_json(bpe.load(fixtures / "byte-bpe.json")), encoding="utf-8")
        tokenizer = bpe.load(exported)
    else:
        tokenizer = bpe.load(fixtures / f"{name}.json")
    audit = audit_vocabulary(tokenizer)
    assert [entry.id for entry in audit.entries] == list(range(tokenizer.vocab_size))
    assert sum(audit.status_counts().values()) == sum(audit.script_counts().values()) == tokenizer.vocab_size
    for entry in audit.entries:
        if entry.status in ("reachable", "unreachable"):
            assert (list(entry.encoded) == [entry.id]) == (entry.status == "reachable")
            if name in ("word", "char", "byte-bpe", "hf") or entry.piece.endswith("</w>"):
                assert list(entry.encoded) == tokenizer.encode(entry.data.decode("utf-8"))
    assert audit.status_counts()["reachable"] > 0
