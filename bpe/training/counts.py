"""Pre-token counts: the input every trainable family except sentencepiece learns from.

Training a word, char, char-bpe or byte-bpe tokenizer only needs each distinct pre-token of the text
with its count, so counting is a separate, first-class step:

* ``count_pretokens(texts, pretokenizer)`` counts texts on this machine (two or more threads run the
  compiled counter of ``bpe.kernels.count_kernel`` on chunks of ``CHUNK_CHARS`` characters);
* ``bpe.training.distributed.count_shards`` counts file or dataset shards on a Dask cluster;
* ``read_counts`` / ``PretokenCounts.save`` read and write the Parquet format of
  ``docs/formats.md``, which any engine (Spark, DuckDB, ...) can produce;
* every family's ``train`` accepts a ``PretokenCounts`` instead of texts, with the same result as
  training on the texts the counts were made from (the char family sums characters over the
  pre-tokens: every pre-tokenizer is lossless, so that equals counting the text).

sentencepiece cannot train from counts: it reads sentences and cuts them itself.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice, pairwise
from pathlib import Path
from typing import Any

import numpy as np
import regex

from bpe.atomic import atomic_write_bytes
from bpe.base import TokenizerError
from bpe.pipeline.normalizers import normalized_texts
from bpe.pipeline.pretokenizers import get_pretokenizer
from bpe.training.trainer import checked_texts

#: characters of training text per counting task
CHUNK_CHARS = 1 << 21
#: an input of at most this many chunks is counted in the calling thread whatever ``workers`` says:
#: on a few megabytes, starting the counting threads and summing their tables costs more time than
#: the second core saves (8 MB of the four languages: 0.18 s in one thread, 0.23 s in two), and the
#: tables the threads allocate stay resident in their own malloc arenas once freed (45 MB there), on
#: top of the merge kernel's arrays, where one thread's freed memory is reused
SERIAL_CHUNKS = 4
#: Parquet key-value metadata keys (docs/formats.md)
FORMAT_NAME = "tokbench-pretoken-counts"
FORMAT_VERSION = "1"
_META_PREFIX = "tokbench."

_CLASS_PATTERNS = {"letter": r"\p{L}", "mark": r"\p{M}", "number": r"\p{N}", "space": r"\s"}


def _kernel() -> Any:
    from bpe.kernels import count_kernel

    return count_kernel


# -- the counts -------------------------------------------------------------------------------


@dataclass(eq=False)
class PretokenCounts(Mapping[str, int]):
    """Every distinct pre-token of a text and how often it occurs, cut by ``pretokenizer``.

    A read-only mapping ``pre-token -> count`` (compare it with a ``Counter``); underneath, arrays:
    pre-token ``i`` is the code points ``units[offsets[i]:offsets[i + 1]]``, seen ``counts[i]``
    times.  The order of the pre-tokens is unspecified.  ``settings`` records how the counts were
    made (normalization, inputs, tokbench version: see ``docs/formats.md``).
    """

    pretokenizer: str
    units: np.ndarray
    offsets: np.ndarray
    counts: np.ndarray
    settings: dict[str, str] = field(default_factory=dict)
    _as_dict: dict[str, int] | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_table(
        cls, pretokenizer: str, table: tuple[np.ndarray, ...], settings: dict[str, str] | None = None
    ) -> PretokenCounts:
        """The counts held in a ``bpe.kernels.count_kernel`` table, trimmed to size."""
        units, offsets, counts = _kernel().table_arrays(table)
        return cls(pretokenizer, units, offsets, counts, settings or {})

    @classmethod
    def from_mapping(cls, counts: Mapping[str, int], pretokenizer: str) -> PretokenCounts:
        """Counts given as ``pre-token -> count`` (checked: non-empty strings, positive integer counts)."""
        get_pretokenizer(pretokenizer)
        pretokens = list(counts)
        values = list(counts.values())
        for index, (pretoken, value) in enumerate(zip(pretokens, values, strict=True)):
            if not isinstance(pretoken, str) or not pretoken:
                raise TokenizerError(f"pre-token #{index} must be a non-empty string, got {pretoken!r}",
                                     code="bad_counts", value=pretoken)  # fmt: skip
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise TokenizerError(f"count of pre-token {pretoken!r} must be a positive integer, got {value!r}",
                                     code="bad_counts", value=value)  # fmt: skip
        return _whole_pretokens(pretokens, np.asarray(values, dtype=np.int64), pretokenizer)

    # -- the mapping interface ----------------------------------------------------------------
    def _dict(self) -> dict[str, int]:
        if self._as_dict is None:
            joined = self.units.tobytes().decode("utf-32-le")
            pretokens = (joined[start:end] for start, end in pairwise(self.offsets.tolist()))
            self._as_dict = dict(zip(pretokens, self.counts.tolist(), strict=True))
        return self._as_dict

    def __getitem__(self, pretoken: str) -> int:
        return self._dict()[pretoken]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return int(self.counts.size)

    def has_text(self) -> bool:
        """True when some pre-token has a non-whitespace character."""
        return any(not pretoken.isspace() for pretoken in self)

    @property
    def total(self) -> int:
        """The number of pre-tokens in the text (the sum of the counts)."""
        return int(self.counts.sum())

    # -- combining and persisting ---------------------------------------------------------------
    def merged(self, *others: PretokenCounts) -> PretokenCounts:
        """The sum of these counts and ``others`` (same pre-tokenizer); settings of the first are kept."""
        for other in others:
            if other.pretokenizer != self.pretokenizer:
                raise TokenizerError(
                    f"cannot add counts made with pre-tokenizer {other.pretokenizer!r} to counts made with "
                    f"{self.pretokenizer!r}", code="pretokenizer_mismatch", value=other.pretokenizer)  # fmt: skip
        parts = [self, *others]
        table = _kernel().empty_table(max(sum(len(part) for part in parts), 1))
        for part in parts:
            table = _add_whole(table, part.units, part.offsets, part.counts)
        return PretokenCounts.from_table(self.pretokenizer, table, self.settings)

    def sorted_items(self) -> tuple[list[str], list[int]]:
        """Pre-tokens in code point order and their counts (the order of a saved file)."""
        items = sorted(self._dict().items())
        return [pretoken for pretoken, _ in items], [count for _, count in items]

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the counts as Parquet (``docs/formats.md``), atomically, rows in code point order."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        pretokens, counts = self.sorted_items()
        pattern = get_pretokenizer(self.pretokenizer).pattern
        metadata = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "pretokenizer": self.pretokenizer,
            "pretokenizer_pattern": "" if pattern is None else pattern,
            **self.settings,
        }
        schema = pa.schema(
            [pa.field("pretoken", pa.string(), nullable=False), pa.field("count", pa.int64(), nullable=False)],
            metadata={f"{_META_PREFIX}{key}": value for key, value in metadata.items()},
        )
        table = pa.table({"pretoken": pretokens, "count": counts}, schema=schema)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        atomic_write_bytes(Path(path), sink.getvalue().to_pybytes())


#: the largest number of characters the counts may stand for: every count the kernels derive (a
#: pre-token's summed count, a character's or a pair's) is at most this, so none overflows int64
MAX_COUNTED_CHARACTERS = 2**62


def _check_total(counts: np.ndarray, lengths: np.ndarray) -> None:
    """Refuse counts whose text (sum of count × characters, computed in floating point: it cannot
    overflow) would make a derived count overflow the kernels' int64."""
    total = float(np.dot(counts.astype(np.float64), lengths.astype(np.float64)))
    if total > MAX_COUNTED_CHARACTERS:
        raise TokenizerError(f"the counts stand for {total:.3g} characters of text, more than the "
                             f"{MAX_COUNTED_CHARACTERS:.3g} whose counts fit in 64-bit integers; a count is "
                             "likely wrong", code="bad_counts", value=total)  # fmt: skip


def _whole_pretokens(pretokens: list[str], counts: np.ndarray, pretokenizer: str) -> PretokenCounts:
    """Counts of whole pre-tokens (duplicates are summed)."""
    text = np.frombuffer("".join(pretokens).encode("utf-32-le"), dtype=np.uint32)
    lengths = np.fromiter(map(len, pretokens), dtype=np.int64, count=len(pretokens))
    _check_total(counts, lengths)
    ends = np.cumsum(lengths)
    table = _kernel().empty_table(max(len(pretokens), 1))
    table = _add_whole(table, text, np.concatenate([[0], ends]), counts)
    return PretokenCounts.from_table(pretokenizer, table)


def _add_whole(table: tuple[np.ndarray, ...], units: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> tuple:
    """Add pre-tokens given whole (``units[offsets[i]:offsets[i + 1]]``, ``counts[i]`` times) to a table."""
    kernel = _kernel()
    return kernel.count_into(
        *table,
        np.ascontiguousarray(units, dtype=np.uint32),
        np.ascontiguousarray(offsets[1:], dtype=np.int64),
        np.ascontiguousarray(counts, dtype=np.int64),
        CLASSES,
        kernel.NONE,
    )


# -- counting text ------------------------------------------------------------------------------

#: class bits (``bpe.kernels.count_kernel``) of every code point seen so far, filled by ``classify``
CLASSES = np.zeros(0x110000, dtype=np.uint8)
_CLASSES_LOCK = threading.Lock()


def classify(code_points: np.ndarray) -> None:
    """Set the class bits of ``code_points`` in ``CLASSES``, decided by the ``regex`` module itself."""
    kernel = _kernel()
    bits = {"letter": kernel.LETTER, "mark": kernel.MARK, "number": kernel.NUMBER, "space": kernel.SPACE}
    compiled = {name: regex.compile(pattern) for name, pattern in _CLASS_PATTERNS.items()}
    for code_point in code_points.tolist():
        char = chr(code_point)
        value = kernel.KNOWN
        for name, pattern in compiled.items():
            if pattern.match(char):
                value |= bits[name]
        CLASSES[code_point] = value


def compiled_pattern(pretokenizer: str) -> int | None:
    """The ``bpe.kernels.count_kernel`` matcher of a pre-tokenizer, or None (counted with ``regex``)."""
    kernel = _kernel()
    return {"gpt2": kernel.GPT2, "unicode": kernel.UNICODE, "whitespace": kernel.WHITESPACE, "none": kernel.NONE}.get(
        pretokenizer
    )


@dataclass
class _Chunk:
    """Texts joined as UTF-32 code points, with the end of each text."""

    texts: list[str]
    text: np.ndarray
    ends: np.ndarray


def utf32_chunk(texts: list[str], first_index: int, what: str = "training text") -> _Chunk:
    """Join and encode a chunk, classifying new code points; a lone surrogate is an error naming
    its text (``what`` #index, counting from ``first_index``)."""
    joined = "".join(texts)
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))
    try:
        data = joined.encode("utf-32-le")
    except UnicodeEncodeError as exc:
        index = int(np.searchsorted(ends, exc.start, side="right"))
        start = int(ends[index - 1]) if index else 0
        raise TokenizerError(
            f"{what} #{first_index + index} is not valid Unicode: lone surrogate "
            f"{joined[exc.start]!r} at index {exc.start - start}", code="lone_surrogate",
            value=joined[exc.start]) from None  # fmt: skip
    text = np.frombuffer(data, dtype=np.uint32)
    with _CLASSES_LOCK:
        unknown = _kernel().unknown_code_points(text, CLASSES)
        if unknown.size:
            classify(unknown)
    return _Chunk(texts, text, ends)


class _Counter:
    """Counts chunks into one table; ``table`` is the ``bpe.kernels.count_kernel`` table so far.

    One counter is used by one thread at a time (``count_pretokens`` gives each counting thread its own)."""

    def __init__(self, pretokenizer: str) -> None:
        self.pretokenizer = pretokenizer
        self.pattern = compiled_pattern(pretokenizer)
        self._fallback = get_pretokenizer(pretokenizer)  # without a compiled matcher: regex, or its own split
        regular = self._fallback.is_regex and self._fallback.pattern is not None
        self._regex = regex.compile(self._fallback.pattern) if regular else None
        self.table: tuple[np.ndarray, ...] = _kernel().empty_table()

    def count(self, chunk: _Chunk) -> None:
        if self.pattern is not None:
            weights = np.ones(chunk.ends.size, dtype=np.int64)
            self.table = _kernel().count_into(*self.table, chunk.text, chunk.ends, weights, CLASSES, self.pattern)
            return
        counter: Counter[str] = Counter()
        for text in chunk.texts:
            if self._regex is not None:
                counter.update(self._regex.findall(text, concurrent=True))  # releases the GIL while matching
            else:
                counter.update(self._fallback.split(text))
        pretokens = list(counter)
        whole = np.frombuffer("".join(pretokens).encode("utf-32-le"), dtype=np.uint32)
        offsets = np.zeros(len(pretokens) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, pretokens), dtype=np.int64, count=len(pretokens)), out=offsets[1:])
        self.table = _add_whole(self.table, whole, offsets, np.fromiter(counter.values(), np.int64, len(pretokens)))


def _summed(pretokenizer: str, counters: list[_Counter]) -> PretokenCounts:
    """The counts of several counters: the others' pre-tokens added into the first one's table, in
    counter order (so the order of the distinct pre-tokens depends on the inputs and the number of
    counters only), each table freed once added."""
    table = counters[0].table
    counters[0].table = ()
    for counter in counters[1:]:
        units, offsets, counts = _kernel().table_arrays(counter.table)
        counter.table = ()
        table = _add_whole(table, units, offsets, counts)
    return PretokenCounts.from_table(pretokenizer, table)


class _Lane(threading.Thread):
    """A counting thread: counts the chunks put in its queue (None ends it) into its own table."""

    def __init__(self, pretokenizer: str, number: int) -> None:
        super().__init__(name=f"tokbench-count-{number}", daemon=True)
        self.counter = _Counter(pretokenizer)
        self.chunks: queue.Queue[_Chunk | None] = queue.Queue(maxsize=1)  # bounded: one chunk waits per lane
        self.error: BaseException | None = None

    def run(self) -> None:
        while (chunk := self.chunks.get()) is not None:
            if self.error is None:  # after an error, drain the queue so that the reader never blocks
                try:
                    self.counter.count(chunk)
                except BaseException as exc:  # re-raised by the reader
                    self.error = exc

    def put(self, chunk: _Chunk | None) -> None:
        if self.error is not None:
            raise self.error
        self.chunks.put(chunk)


def count_pretokens(
    texts: Iterable[str], pretokenizer: str, *, workers: int | None = None, require_text: bool = True
) -> PretokenCounts:
    """Count every distinct pre-token of ``texts`` (pre-tokenizer by name).

    The texts are read once, in chunks of ``CHUNK_CHARS`` characters.  With ``workers`` > 1 (default:
    all available cores) this thread reads and encodes the chunks and ``workers`` counting threads
    count them (the compiled counter releases the GIL), chunk ``k`` in thread ``k % workers``, each
    into its own table; the tables are then summed in thread order.  So on two cores both count,
    and reading (about a quarter of the work) runs while they do.  With 1, this thread does
    everything, and so does any number of workers for an input of at most ``SERIAL_CHUNKS``
    chunks.  The counts do not depend on ``workers``; the order of the distinct pre-tokens
    depends only on the texts and ``workers``.  Raises TokenizerError for a text that is not a
    string or not valid Unicode, and (unless ``require_text`` is False: a shard of a larger text)
    for an input with no non-whitespace character.
    """
    workers = workers if workers is not None else len(os.sched_getaffinity(0))
    if not get_pretokenizer(pretokenizer).is_regex:  # (fails early on an unknown name)
        workers = min(workers, 2)  # one counting thread: kiwipiepy's analyzer is not shared across threads
        lanes = 1
    else:
        lanes = workers
    chunks = _chunks(checked_texts(texts, check_unicode=False, require_text=require_text), CHUNK_CHARS)
    if workers > 1:  # look ahead (the chunks' lists of texts only, not encoded yet): is the input small?
        first_chunks = list(islice(chunks, SERIAL_CHUNKS + 1))
        if len(first_chunks) <= SERIAL_CHUNKS:
            workers = 1
        chunks = chain(first_chunks, chunks)
    if workers <= 1:
        counter = _Counter(pretokenizer)
        for first_index, texts_of_chunk in chunks:
            counter.count(utf32_chunk(texts_of_chunk, first_index))
        return _summed(pretokenizer, [counter])
    threads = [_Lane(pretokenizer, number) for number in range(lanes)]
    for thread in threads:
        thread.start()
    try:
        for number, (first_index, texts_of_chunk) in enumerate(chunks):
            threads[number % lanes].put(utf32_chunk(texts_of_chunk, first_index))
    finally:  # also after an error reading: every thread ends before this function does
        for thread in threads:
            thread.chunks.put(None)
        for thread in threads:
            thread.join()
    for thread in threads:
        if thread.error is not None:
            raise thread.error
    return _summed(pretokenizer, [thread.counter for thread in threads])


def _chunks(texts: Iterator[str], size: int) -> Iterator[tuple[int, list[str]]]:
    """Lists of consecutive texts of about ``size`` characters, with the index of their first text."""
    chunk: list[str] = []
    length = first = 0
    for index, text in enumerate(texts):
        if not chunk:
            first = index
        chunk.append(text)
        length += len(text)
        if length >= size:
            yield first, chunk
            chunk, length = [], 0
    if chunk:
        yield first, chunk


# -- reading a counts file ------------------------------------------------------------------------


def read_counts(path: str | os.PathLike[str]) -> PretokenCounts:
    """Read a counts file (``docs/formats.md``); a TokenizerError names what is wrong with it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise TokenizerError(f"{path}: no such counts file", code="missing_file", value=path) from None
    except (OSError, pa.ArrowException) as exc:
        raise TokenizerError(f"{path}: not a readable Parquet file ({exc})", code="bad_counts", value=path) from None
    raw = table.schema.metadata or {}
    metadata = {
        key.decode("utf-8").removeprefix(_META_PREFIX): value.decode("utf-8")
        for key, value in raw.items()
        if key.decode("utf-8", "replace").startswith(_META_PREFIX)
    }
    if "pretokenizer" not in metadata:
        raise TokenizerError(
            f'{path}: Parquet key-value metadata "{_META_PREFIX}pretokenizer" is missing (the pre-tokenizer that '
            "cut the text; see docs/formats.md)", code="bad_counts", field=f"{_META_PREFIX}pretokenizer")  # fmt: skip
    if metadata.get("format_version", FORMAT_VERSION) != FORMAT_VERSION:
        raise TokenizerError(
            f'{path}: "{_META_PREFIX}format_version" {metadata["format_version"]!r} is not supported '
            f"(expected {FORMAT_VERSION})", code="unsupported_version", value=metadata["format_version"],
            field=f"{_META_PREFIX}format_version")  # fmt: skip
    name = metadata["pretokenizer"]
    try:
        pattern = get_pretokenizer(name).pattern
    except TokenizerError as exc:
        raise TokenizerError(f"{path}: {exc}", code=exc.code, value=exc.value, field=exc.field) from None
    if "pretokenizer_pattern" in metadata and metadata["pretokenizer_pattern"] != (pattern or ""):
        raise TokenizerError(
            f'{path}: "{_META_PREFIX}pretokenizer_pattern" differs from the pattern of pre-tokenizer {name!r} '
            "in this version of tokbench; recount the text", code="pretokenizer_mismatch", value=name,
            field=f"{_META_PREFIX}pretokenizer_pattern")  # fmt: skip
    for column, types in (("pretoken", (pa.string(), pa.large_string())), ("count", (pa.int64(), pa.int32()))):
        if column not in table.column_names:
            raise TokenizerError(f'{path}: column "{column}" is missing (columns: {", ".join(table.column_names)})',
                                 code="bad_counts", value=column, field=column)  # fmt: skip
        if table.schema.field(column).type not in types:
            raise TokenizerError(
                f'{path}: column "{column}" has type {table.schema.field(column).type}, expected '
                + " or ".join(str(t) for t in types), code="bad_counts",
                value=str(table.schema.field(column).type), field=column)  # fmt: skip
        if table.column(column).null_count:
            raise TokenizerError(f'{path}: column "{column}" has null values', code="bad_counts", field=column)
    pretokens = table.column("pretoken").to_pylist()
    counts = table.column("count").to_numpy().astype(np.int64)
    if counts.size and counts.min() < 1:
        row = int(np.argmin(counts))
        raise TokenizerError(f'{path}: row {row}: "count" must be a positive integer, got {int(counts[row])}',
                             code="bad_counts", value=int(counts[row]), field="count")  # fmt: skip
    if not all(pretokens):
        raise TokenizerError(f'{path}: row {pretokens.index("")}: "pretoken" is empty', code="bad_counts",
                             value=pretokens.index(""), field="pretoken")  # fmt: skip
    try:
        counted = _whole_pretokens(pretokens, counts, name)
    except TokenizerError as exc:
        raise TokenizerError(f"{path}: {exc}", code=exc.code, value=exc.value, field=exc.field) from None
    recorded = ("format", "format_version", "pretokenizer", "pretokenizer_pattern")  # checked above
    counted.settings = {key: value for key, value in metadata.items() if key not in recorded}
    return counted


def training_counts(
    texts: Iterable[str] | PretokenCounts, pretokenizer: str, *, workers: int | None = None, normalizer: str = "none"
) -> PretokenCounts:
    """What a family trains on: ``texts`` through ``normalizer`` (``bpe.pipeline.normalizers``) counted with
    ``pretokenizer``, or ``texts`` itself when it already is a ``PretokenCounts`` made with that
    pre-tokenizer (counts hold the text as given, so only without a normalizer)."""
    if not isinstance(texts, PretokenCounts):
        return count_pretokens(normalized_texts(texts, normalizer), pretokenizer, workers=workers)
    check_counts_normalizer(normalizer)
    if texts.pretokenizer != pretokenizer:
        raise TokenizerError(
            f"the pre-token counts were made with pre-tokenizer {texts.pretokenizer!r}, not {pretokenizer!r}: "
            f"train with pretokenizer={texts.pretokenizer!r} or count the text again", code="pretokenizer_mismatch",
            value=pretokenizer)  # fmt: skip
    if not texts.has_text():
        raise TokenizerError("training input is empty or whitespace-only (the pre-token counts hold no other text)",
                             code="empty_training_input")  # fmt: skip
    return texts


def check_counts_normalizer(normalizer: str) -> None:
    """Refuse training from pre-token counts through a normalizer: counts hold the text as given."""
    if normalizer != "none":
        raise TokenizerError(
            f"pre-token counts hold the text as given, not through normalizer {normalizer!r}: train from the text",
            code="no_counts_training", value=normalizer)  # fmt: skip
