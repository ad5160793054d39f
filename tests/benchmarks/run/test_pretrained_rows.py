"""`[[pretrained]]` rows of an experiment config, end to end: a run over FLORES-200 (the sample data root,
then the full one) with GPT-2's and Qwen's (NFC first) tiktoken ranks and the Llama 2 sentencepiece model
from the data root's ``tokenizers/`` folder (when it has one), a Hugging Face tokenizer.json written by
``tokbench export`` beside the config, a mistral-common model by name and a tekken file by absolute path.  Every row's
per-line token counts (the unit results) equal the owning library's own encoder on every line; bad rows
are one error naming the config and every place looked, before anything is loaded or trained.  The paper
config's published-file rows (GPT-2, GPT-4o, Qwen, Llama 2) give their owners' ids on every FLORES line."""

from __future__ import annotations

import importlib.resources
import json
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
import sentencepiece
import tiktoken
import tiktoken.load
from mistral_common.tokens.tokenizers.sentencepiece import SentencePieceTokenizer as MistralSentencePiece
from mistral_common.tokens.tokenizers.tekken import Tekkenizer
from tiktoken_ext.openai_public import r50k_pat_str
from tokenizers import Tokenizer as HFTokenizer

import bpe
from benchmarks import report
from benchmarks.cli import main
from benchmarks.errors import BenchmarkError
from benchmarks.render import md_escape
from benchmarks.reproductions import get_reproduction
from benchmarks.reproductions.engine import published as published_figures
from benchmarks.run.config import load_config
from benchmarks.run.pretrained import resolve_pretrained
from benchmarks.run.runner import run_experiment
from benchmarks.run.units import read_unit_result
from tests.conftest import DATA_ROOT, FLORES_LANGUAGES, read_flores
from tests.errors import raises_code

METRICS = ["tokens_per_kchar", "parity_vs_eng", "parity_joined_vs_eng", "parity_mean_ratio_vs_eng"]
MISTRAL_V3 = "mistral_instruct_tokenizer_240323.model.v3"
#: Qwen's pre-tokenizer as its own tokenization_qwen.py writes it (PAT_STR); Qwen composes text to NFC first
QWEN_PAT_STR = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"""
    r"""\s+(?!\S)|\s+"""
)


def mistral_file(name: str) -> Path:
    return Path(str(importlib.resources.files("mistral_common") / "data" / name))


def corpus_spec(folder: Path, language: str) -> str:
    path = folder / f"flores-{language[:3]}.toml"
    path.write_text(
        f'id = "flores-{language[:3]}"\nlanguage = "{language}"\nlicense = "CC BY-SA 4.0"\ndescription = "FLORES"\n'
        f'[[sources]]\nkind = "path"\nrole = "eval"\nformat = "text"\nfiles = "flores/{language}.txt"\n'
        '[sources.parallel]\nname = "flores-200"\ndev = [1, 997]\n',
        encoding="utf-8",
    )
    return path.name


@pytest.fixture(scope="module")
def exported(embedded_training_text: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE trained by tokbench and exported with `tokbench export --format hf`."""
    folder = tmp_path_factory.mktemp("trained")
    bpe.train("byte-bpe", embedded_training_text[:3000], 1000).save(folder / "byte-bpe.json")
    out = folder / "tokenizer.json"
    assert main(["export", "--tokenizer", str(folder / "byte-bpe.json"), "--format", "hf", "--out", str(out)]) == 0
    return out


def write_config(folder: Path, root: Path, exported: Path) -> tuple[Path, dict[str, Callable[[str], list[int]]]]:
    """A config of pretrained rows only, and each row's reference encoder (the owning library's)."""
    (folder / "exported").mkdir()
    (folder / "exported" / "tokenizer.json").write_bytes(exported.read_bytes())  # found beside the config
    tekken = mistral_file("tekken_240911.json")
    rows = ['[[pretrained]]\npath = "exported/tokenizer.json"\nlabel = "my-byte-bpe"\n',
            '[[pretrained]]\nname = "mistral-v3"\n',
            f'[[pretrained]]\npath = "{tekken}"\nformat = "tekken"\n']  # fmt: skip
    hf = HFTokenizer.from_file(str(exported))
    mistral = MistralSentencePiece(str(mistral_file(MISTRAL_V3)))
    tekkenizer = Tekkenizer.from_file(tekken)
    references = {
        "my-byte-bpe": lambda text: hf.encode(text, add_special_tokens=False).ids,
        "mistral-v3": lambda text: mistral.encode(text, bos=False, eos=False),
        "tekken_240911": lambda text: tekkenizer.encode(text, bos=False, eos=False),
    }
    if (root / "tokenizers").is_dir():  # the full data root: GPT-2 and Llama 2, found in the data root
        rows += ['[[pretrained]]\npath = "tokenizers/gpt2.tiktoken"\npattern = "gpt2"\nlabel = "GPT-2"\n',
                 '[[pretrained]]\npath = "tokenizers/llama2-tokenizer.model"\nlabel = "LLAMA"\n',
                 '[[pretrained]]\npath = "tokenizers/qwen.tiktoken"\npattern = "qwen"\nnormalizer = "nfc"\n'
                 'label = "Qwen"\n']  # fmt: skip
        ranks = tiktoken.load.load_tiktoken_bpe(str(root / "tokenizers" / "gpt2.tiktoken"))
        gpt2 = tiktoken.Encoding("gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={})
        llama = sentencepiece.SentencePieceProcessor(model_file=str(root / "tokenizers" / "llama2-tokenizer.model"))
        qwen_ranks = tiktoken.load.load_tiktoken_bpe(str(root / "tokenizers" / "qwen.tiktoken"))
        qwen = tiktoken.Encoding("qwen", pat_str=QWEN_PAT_STR, mergeable_ranks=qwen_ranks, special_tokens={})
        references |= {"GPT-2": gpt2.encode_ordinary, "LLAMA": llama.encode,
                       "Qwen": lambda text: qwen.encode_ordinary(unicodedata.normalize("NFC", text))}  # fmt: skip
    corpora = ", ".join(f'"{corpus_spec(folder, language)}"' for language in FLORES_LANGUAGES)
    config = folder / "pretrained.toml"
    header = f'name = "pretrained"\ncorpora = [{corpora}]\nmetrics = {json.dumps(METRICS)}\n'
    config.write_text(header + "[bootstrap]\nresamples = 50\n" + "".join(rows), encoding="utf-8")
    return config, references


def splits_section(report: Path) -> str:
    return report.read_text(encoding="utf-8").split("## How the tokenizers split\n")[1].split("\n## ")[0]


@pytest.mark.slow  # 20-45 s: a whole run (or bench suite) end to end; CI runs it with -m slow
def test_pretrained_rows_count_as_their_own_libraries(tmp_path, exported, monkeypatch):
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # corpus spec paths in the config are relative to the working directory
    config_path, references = write_config(tmp_path, DATA_ROOT, exported)
    config = load_config(str(config_path))
    run_dir = run_experiment(config, tmp_path / "run", data_dir=DATA_ROOT, progress=False)
    flores = read_flores(DATA_ROOT)
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert set(manifest["pretrained"]) == set(references)
    assert manifest["pretrained"]["my-byte-bpe"]["file"] == str((tmp_path / "exported" / "tokenizer.json").resolve())
    assert manifest["pretrained"]["mistral-v3"] == {"name": "mistral-v3"}
    for label, reference in references.items():
        for language in FLORES_LANGUAGES:
            unit = read_unit_result(run_dir / "units" / f"flores-{language[:3]}__{label}__na.json")
            assert unit.unit.row_type == "production"
            counts = unit.counts["eval"]
            assert counts.ids == [f"flores/{language}.txt:{i + 1}" for i in range(len(flores[language]))]
            assert counts.tokens == [len(reference(line)) for line in flores[language]], (label, language)
    results = (run_dir / "results.csv").read_text(encoding="utf-8")
    for label in references:
        assert f"flores-kor,kor_Hang,{label}," in results
    # the report: the same three FLORES sentences in every language (those whose longest translation is
    # shortest), every row re-loaded from the run directory, its token count as its own library counts
    section = splits_section(report.write_report(run_dir))
    longest = [max(len(flores[language][i]) for language in FLORES_LANGUAGES) for i in range(len(flores["eng_Latn"]))]
    keys = [str(i + 1) for i in sorted(range(len(longest)), key=lambda i: (longest[i], i))[:3]]
    assert json.loads((run_dir / "examples.json").read_text(encoding="utf-8"))["keys"] == keys
    for key in keys:
        sentence = section.split(f"### Sentence `{key}`\n")[1].split("\n### ")[0]
        for language in FLORES_LANGUAGES:
            line = flores[language][int(key) - 1]
            table = sentence.split(f"**{language}**: {md_escape(line)}\n")[1].split("\n**")[0]
            for label, reference in references.items():
                assert re.search(rf"\| {re.escape(label)} +\| +{len(reference(line))} \|", table), (key, language)
    (tmp_path / "exported" / "tokenizer.json").write_text("{}", encoding="utf-8")  # changed since the run
    section = "\n".join(report.splits_section(report.load_run(run_dir)))
    assert "| my-byte-bpe " not in section
    assert f"_Note: my-byte-bpe is not shown: pretrained tokenizer 'my-byte-bpe': {tmp_path.resolve()}" in section
    if "GPT-2" in references:  # Petrov et al.'s counts of the joined FLORES text, inside a run
        published = published_figures(get_reproduction("petrov2023")).values
        assert manifest["pretrained"]["Qwen"]["normalizer"] == "nfc"
        for label in ("GPT-2", "LLAMA", "Qwen"):
            for language in FLORES_LANGUAGES:
                unit = read_unit_result(run_dir / "units" / f"flores-{language[:3]}__{label}__na.json")
                assert set(unit.joined.values()) == {published[label, language, "tokens"]}, (label, language)


def test_a_missing_pretrained_file_names_every_place_looked_before_any_work(tmp_path, sample_data_root):
    config = tmp_path / "bad.toml"
    config.write_text('name = "bad"\ncorpora = ["embedded-kor"]\n[[pretrained]]\npath = "tokenizers/gpt3.tiktoken"\n'
                      'pattern = "gpt2"\n', encoding="utf-8")  # fmt: skip
    with raises_code(BenchmarkError, "missing_file", value="tokenizers/gpt3.tiktoken") as error:
        run_experiment(load_config(str(config)), tmp_path / "run", data_dir=sample_data_root, progress=False)
    message = str(error.value)  # the config, the row, and every place looked at, in order
    looked = [str(folder.resolve() / "tokenizers/gpt3.tiktoken") for folder in (sample_data_root, tmp_path)]
    assert message.startswith(f"{config}: ") and "'gpt3'" in message
    assert 0 < message.index(looked[0]) < message.index(looked[1])
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ('path = "t.model"\n', "pretrained tokenizer 't': t.model: not found; looked in the config folder"),
        ('path = "g.tiktoken"\n', "pretrained tokenizer 'g': "),  # a rank file needs a pattern
        ('path = "g.tiktoken"\npattern = "gtp2"\n', "pretrained tokenizer 'g': "),
        ('path = "g.tiktoken"\nformat = "sentencepiece"\n', "expected a sentencepiece .model file, but this is"),
        ('path = "notes.txt"\n', "in no known tokenizer format"),
    ],
)
def test_bad_pretrained_rows_are_one_error_each(tmp_path, row, expected, monkeypatch, capsys):
    monkeypatch.delenv("TOKBENCH_DATA", raising=False)
    (tmp_path / "g.tiktoken").write_bytes(b"IQ== 0\nIg== 1\n")  # a tiny valid rank file: "!" and '"'
    (tmp_path / "notes.txt").write_text("not a tokenizer\n", encoding="utf-8")
    config = tmp_path / "bad.toml"
    config.write_text(f'name = "bad"\ncorpora = ["embedded-kor"]\n[[pretrained]]\n{row}', encoding="utf-8")
    assert main(["run", str(config), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    message = capsys.readouterr().err
    assert message.startswith(f"tokbench: error: {config}: ") and expected in message
    if "not found" in expected:
        assert "(no data root was given: --data-dir DIR or TOKBENCH_DATA)" in message
    assert not (tmp_path / "run").exists()



def paper_references(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[[str], list[int]]]:
    """Each published-file row of the paper config, encoded by its owner's library: tiktoken with the
    owner's pattern (GPT-4o's from tiktoken_ext, Qwen's from its tokenizer code, after NFC) and
    sentencepiece for Llama 2."""
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})  # only pat_str wanted
    o200k_pattern = openai_public.o200k_base()["pat_str"]
    monkeypatch.undo()
    folder = root / "tokenizers"

    def encoding(file: str, pattern: str) -> tiktoken.Encoding:
        ranks = tiktoken.load.load_tiktoken_bpe(str(folder / file))
        return tiktoken.Encoding(file, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})

    gpt2, o200k = encoding("gpt2.tiktoken", r50k_pat_str), encoding("o200k_base.tiktoken", o200k_pattern)
    qwen = encoding("qwen.tiktoken", QWEN_PAT_STR)
    llama = sentencepiece.SentencePieceProcessor(model_file=str(folder / "llama2-tokenizer.model"))
    return {"gpt2": gpt2.encode_ordinary, "gpt-4o": o200k.encode_ordinary,
            "qwen": lambda text: qwen.encode_ordinary(unicodedata.normalize("NFC", text)),
            "qwen-without-nfc": qwen.encode_ordinary, "llama2": llama.encode}  # fmt: skip


def test_paper_config_published_rows_equal_their_owners_on_every_flores_line(data_root, flores_lines, monkeypatch):
    """The paper config's rows from the data root's tokenizers/ folder, resolved as a run resolves them."""
    config = load_config("paper")
    rows = resolve_pretrained(config.pretrained_rows, config.source, data_root)
    references = paper_references(data_root, monkeypatch)
    without_nfc = references.pop("qwen-without-nfc")
    assert list(rows) == ["cl100k", "mistral-v1", *references]
    assert rows["qwen"].to_json()["normalizer"] == "nfc"
    for label, reference in references.items():
        tokenizer = rows[label].load()
        for language in FLORES_LANGUAGES:
            lines = flores_lines[language]
            assert len(lines) == 2009
            assert [tokenizer.encode(line) for line in lines] == [reference(line) for line in lines], (label, language)
    # FLORES is already NFC; on text that is not, the Qwen row composes first and spans the text as given
    decomposed = unicodedata.normalize("NFD", "Çağrı café, 한국어 Ёлка")
    encoding = rows["qwen"].load().encode_with_spans(decomposed)
    assert encoding.ids == references["qwen"](decomposed) != without_nfc(decomposed)
    ends = [0, *(end for _, end in encoding.spans)]
    assert [start for start, _ in encoding.spans] == ends[:-1] and ends[-1] == len(decomposed.encode("utf-8"))


@pytest.mark.slow  # about 11 s: a whole run of every tokenizer known by name; CI runs it with -m slow
def test_every_tokenizer_known_by_name_runs_through_a_whole_run(tmp_path: Path, monkeypatch, capsys) -> None:
    """Every name of bpe.PRODUCTION as a row of one run, to the end: the results, the vocabulary audit (the
    chars row's surrogate code points have no UTF-8 form) and the report."""
    import pandas as pd

    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    names = ", ".join(json.dumps(name) for name in bpe.PRODUCTION)
    config = tmp_path / "named.toml"
    config.write_text(f'name = "named"\ncorpora = ["embedded-kor"]\nproduction = [{names}]\n'
                      'metrics = ["bytes_per_token"]\n[bootstrap]\nresamples = 20\n', encoding="utf-8")  # fmt: skip
    status = main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet", "--jobs", "1"])
    assert status == 0, capsys.readouterr().err
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert set(results["tokenizer"]) == set(bpe.PRODUCTION)
    entries = pd.read_csv(tmp_path / "out" / "audit-entries.csv", keep_default_na=False, dtype=str)
    assert all(piece.encode("utf-8") for piece in entries["piece"])
    assert "<U+D800>" in set(entries.loc[entries["tokenizer"] == "chars", "piece"])
    assert (tmp_path / "out" / "report.md").is_file()
