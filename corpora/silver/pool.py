"""Running the silver analyzers and keeping their answers: ``analyze`` (a silver reference of some words),
the in-memory cache it answers from, and the worker processes that fill it ahead (``Prefetch``,
``Preloaded``).

An analyzer may keep state between words (zemberek's guessed stems leave traces that change a later word's
analysis), so each word sequence is answered by a fresh analyzer: on a spawned worker, or on a forked copy of
a worker that has just loaded a fork-safe analyzer.  A hash-order-dependent analyzer (zemberek) runs on a
process started with ``PYTHONHASHSEED=HASH_SEED`` (``segment_seeded``).

Results are cached in memory per (analyzer, word), and on disk (``$TOKBENCH_CACHE/silver/``, ``store``) per
analyzer, version and the whole sequence of words one fresh analyzer was given (``Prefetch``), so a later run
asking the same words (another config over the same corpora, a rerun) reads the answers instead of analyzing.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from corpora.errors import CorpusError
from corpora.morph import Coverage, MorphReference, nfc
from corpora.silver.registry import SILVER
from corpora.silver.store import Segmentation, store_answers, stored_answers

_CAN_FORK = hasattr(os, "fork")
#: the hash seed of the processes that run a ``hash_order_dependent`` analyzer
HASH_SEED = "0"


def _seeded_pool(processes: int, initializer: Callable[..., None] | None = None, initargs: tuple = ()) -> Any:
    """A pool of ``processes`` spawned workers started with ``PYTHONHASHSEED=HASH_SEED`` (this process's
    environment is put back once they are started), each running ``initializer(*initargs)`` first."""
    before = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = HASH_SEED
    try:
        return multiprocessing.get_context("spawn").Pool(processes, initializer, initargs)
    finally:
        if before is None:
            del os.environ["PYTHONHASHSEED"]
        else:
            os.environ["PYTHONHASHSEED"] = before


def segment_seeded(analyzer: str, batches: list[list[str]]) -> tuple[list[list[Segmentation]], float]:
    """``_timed_segment``, on a worker started with the fixed hash seed when the analyzer's answers depend on
    it and this process was started with another (or none); else in this process."""
    if not SILVER[analyzer].hash_order_dependent or os.environ.get("PYTHONHASHSEED") == HASH_SEED:
        return _timed_segment(analyzer, batches)
    pool = _seeded_pool(1)
    try:
        return pool.apply(_timed_segment, (analyzer, batches))
    finally:
        pool.terminate()
        pool.join()


def _stored_version(analyzer: str) -> str:
    """The version its answers are stored under: a hash-order-dependent analyzer's with the hash seed."""
    spec = SILVER[analyzer]
    return f"{spec.version()} hash seed {HASH_SEED}" if spec.hash_order_dependent else spec.version()


# analyzer name -> word -> result; analyses are deterministic (under ``HASH_SEED``), so caching never changes an
# answer
_CACHE: dict[str, dict[str, Segmentation]] = {}


def analyzers_loaded() -> bool:
    """Whether this process has loaded a silver analyzer (a loaded kiwi holds worker threads, which a
    forked child would inherit dead: fork only a process that has loaded none)."""
    loaders = [spec.loader for spec in SILVER.values() if spec.loader is not None]
    return any(loader.cache_info().currsize for loader in loaders)  # type: ignore[attr-defined]  # functools.cache


def _words_to_analyze(analyzer: str, words: Iterable[str]) -> tuple[list[str], list[str]]:
    """``words`` NFC-normalized without duplicates (first-seen order), and those of them the cache does not
    hold yet; words an analyzer would split or reject are answered in the cache right away."""
    unique = list(dict.fromkeys(nfc(word) for word in words))
    cache = _CACHE.setdefault(analyzer, {})
    for word in unique:
        if not word or any(ch.isspace() for ch in word):  # analyzers would split or reject it
            cache[word] = "not a word (empty or contains whitespace)"
    return unique, [word for word in unique if word not in cache]


#: analyzer -> the seconds this process took to load it ahead of its words (``Preloaded``), counted once in the
#: seconds of its analysis
_PRELOAD_SECONDS: dict[str, float] = {}


def _preload(analyzer: str) -> None:
    """Load ``analyzer`` in this (worker) process, before it is given any word (``Preloaded``)."""
    started = time.perf_counter()
    SILVER[analyzer].segment([])
    _PRELOAD_SECONDS[analyzer] = time.perf_counter() - started


def _timed_segment(analyzer: str, batches: list[list[str]]) -> tuple[list[list[Segmentation]], float]:
    """``SILVER[analyzer].segment`` of each batch of words by a fresh analyzer, and the seconds it all took,
    loading it included (on a worker process: a module-level function).  A fork-safe analyzer is loaded once
    and the batches after the first are segmented on forked copies of this process, taken before it segments
    anything, so each copy starts from the freshly loaded analyzer; any other analyzer gets one batch per call
    (``Prefetch``)."""
    started = time.perf_counter() - _PRELOAD_SECONDS.pop(analyzer, 0.0)
    segment = SILVER[analyzer].segment
    if len(batches) == 1:
        answers = [segment(batches[0])]
    else:
        segment([])  # loads the analyzer: the copies start from here
        children = [_fork_segment(segment, batch) for batch in batches[1:]]
        try:
            first = segment(batches[0])
        except BaseException:  # no copy outlives the analysis it belongs to
            for pid, read in children:
                os.kill(pid, signal.SIGKILL)
                os.close(read)
                os.waitpid(pid, 0)
            raise
        answers = [first] + [_forked_answers(analyzer, *child) for child in children]
    return answers, round(time.perf_counter() - started, 2)


def _fork_segment(segment: Callable[[list[str]], list[Segmentation]], words: list[str]) -> tuple[int, int]:
    """Start ``segment(words)`` on a forked copy of this process; returns its pid and the pipe to read its
    answers from (``_forked_answers``)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: answer, write the pickled outcome, leave without running any cleanup of the parent
        status = 0
        try:
            os.close(read)
            try:
                outcome: tuple[bool, Any] = (True, segment(words))
            except Exception as exc:  # said by the parent, as an error of the analysis
                outcome = (False, f"{type(exc).__name__}: {exc}")
            with os.fdopen(write, "wb") as out:
                pickle.dump(outcome, out, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write)
    return pid, read


def _forked_answers(analyzer: str, pid: int, read: int) -> list[Segmentation]:
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        raise CorpusError(f"silver analyzer {analyzer!r}: a forked copy of its worker ended without answers "
                          f"(wait status {status})")  # fmt: skip
    ok, answers = pickle.loads(data)
    if not ok:
        raise CorpusError(f"silver analyzer {analyzer!r} failed: {answers}", code="library_failed", value=analyzer)
    return answers


class Preloaded:
    """One analyzer loading now, on a worker process of its own started with the fixed hash seed, before its
    words are known: ``Prefetch`` hands it that analyzer's words (or closes it when they are all answered
    from the disk cache).  A run starts the slowest analyzer of its corpora this way (``slowest``) while it
    loads its corpora, so that analysis, the floor of a cold run, starts as soon as its words are known."""

    def __init__(self, analyzer: str) -> None:
        if analyzer not in SILVER:
            raise CorpusError(f"unknown silver analyzer {analyzer!r}; choose one of: {', '.join(SILVER)}",
                              code="unknown_analyzer", value=analyzer)
        self.analyzer = analyzer
        self.pool: Any = _seeded_pool(1, _preload, (analyzer,))

    @classmethod
    def slowest(cls, analyzers: Iterable[str]) -> Preloaded | None:
        """The analyzer of ``analyzers`` that takes longest per word (``cost_per_word``), preloaded; None for
        none."""
        known = [analyzer for analyzer in dict.fromkeys(analyzers) if analyzer in SILVER]
        return cls(max(known, key=lambda analyzer: SILVER[analyzer].cost_per_word)) if known else None

    def close(self) -> None:
        """Stop its worker (an analysis running there is dropped); closing again does nothing."""
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


class Prefetch:
    """Silver analyses running on worker processes while the caller does other work (``tokbench run``
    trains and evaluates meanwhile); ``wait`` puts them in the cache, so that ``analyze`` then answers
    from it.

    ``requests``: analyzer name -> words.  The analyzers run side by side on up to ``processes``
    workers, the slowest first.  Each analyzer gets its words in one piece and in the order ``analyze``
    would give them, in a fresh process, because an analyzer may keep state between words (zemberek's
    guessed stems leave traces that change a later word's analysis): the answers are those of
    ``analyze`` in a fresh process.  ``afterwards``: analyzer name -> words asked later by a process that
    has the answers of ``requests`` in its cache but has not loaded the analyzer (the run's reference
    coverage, on a forked process): analyzed by another fresh analyzer, so they too are answered as that
    process would answer them (a fork-safe analyzer is loaded once for both: ``_timed_segment``).  A
    ``preloaded`` analyzer's words go to its own worker (one of the ``processes``).  Without it, with fewer
    than 2 processes or analyses everything is analyzed right away, in this process, ``afterwards`` by the
    analyzer that answered ``requests`` (as this process would answer them later).  Workers are spawned, not
    forked: a loaded analyzer may hold worker threads (kiwi), which a forked child would inherit dead."""

    def __init__(self, requests: Mapping[str, Iterable[str]], processes: int,
                 afterwards: Mapping[str, Iterable[str]] | None = None,
                 preloaded: Preloaded | None = None) -> None:  # fmt: skip
        tasks: list[tuple[str, list[list[str]]]] = []
        for analyzer in dict.fromkeys([*requests, *(afterwards or {})]):
            if analyzer not in SILVER:
                raise CorpusError(f"unknown silver analyzer {analyzer!r}; choose one of: {', '.join(SILVER)}",
                                  code="unknown_analyzer", value=analyzer)
            unique, todo = _words_to_analyze(analyzer, requests.get(analyzer, []))
            _, later = _words_to_analyze(analyzer, (afterwards or {}).get(analyzer, []))
            requested = set(unique)
            batches = [batch for batch in (todo, [word for word in later if word not in requested]) if batch]
            unanswered = []
            for batch in batches:
                stored = stored_answers(analyzer, _stored_version(analyzer), batch)
                if stored is not None:  # analyzed by an earlier run (or corpus set) with the same words
                    _CACHE[analyzer].update(zip(batch, stored, strict=True))
                else:
                    unanswered.append(batch)
            if len(unanswered) > 1 and not (SILVER[analyzer].fork_safe and _CAN_FORK):
                tasks += [(analyzer, [batch]) for batch in unanswered]  # one fresh process each
            elif unanswered:
                tasks.append((analyzer, unanswered))
        self._pools: list[Any] = []
        self._pending: list[tuple[str, list[list[str]], Any]] = []
        #: analyzer -> seconds its analyses took (loading the analyzer included), once waited for; an
        #: analyzer answered from the disk cache has none
        self.seconds: dict[str, float] = {}
        if preloaded is not None:
            own = next((task for task in tasks if task[0] == preloaded.analyzer), None)
            if own is None:
                preloaded.close()
            else:
                tasks.remove(own)
                self._start(preloaded.pool, [own])
                preloaded.pool = None  # this object stops it now
        if not self._pools and (processes < 2 or len(tasks) < 2):
            for analyzer, batches in tasks:
                if SILVER[analyzer].hash_order_dependent:  # on a seeded worker, as the pool would answer them
                    self._keep(analyzer, batches, *segment_seeded(analyzer, batches))
                    continue
                for batch in batches:  # one analyzer, as this process would answer them one after the other
                    self._keep(analyzer, [batch], *_timed_segment(analyzer, [batch]))
            return
        if tasks:
            tasks.sort(key=lambda task: -len(task[1][0]) * SILVER[task[0]].cost_per_word)
            self._start(_seeded_pool(max(1, min(processes - len(self._pools), len(tasks)))), tasks)

    def _start(self, pool: Any, tasks: list[tuple[str, list[list[str]]]]) -> None:
        self._pools.append(pool)
        self._pending += [(analyzer, batches, pool.apply_async(_timed_segment, (analyzer, batches)))
                          for analyzer, batches in tasks]  # fmt: skip

    def _keep(self, analyzer: str, batches: list[list[str]], answers: list[list[Segmentation]],
              seconds: float) -> None:  # fmt: skip
        for words, batch_answers in zip(batches, answers, strict=True):
            store_answers(analyzer, _stored_version(analyzer), words, batch_answers)
            _CACHE[analyzer].update(zip(words, batch_answers, strict=True))
        self.seconds[analyzer] = round(self.seconds.get(analyzer, 0.0) + seconds, 2)

    def _chosen(self, analyzers: Iterable[str] | None) -> list[tuple[str, list[list[str]], Any]]:
        chosen = None if analyzers is None else set(analyzers)
        return [task for task in self._pending if chosen is None or task[0] in chosen]

    def ready(self, analyzers: Iterable[str] | None = None) -> bool:
        """True when the analyses of ``analyzers`` (default: all) are finished."""
        return all(result.ready() for _, _, result in self._chosen(analyzers))

    def wait(self, analyzers: Iterable[str] | None = None) -> None:
        """Wait for the analyses of ``analyzers`` (default: all) and put them in the cache (an analyzer's
        error is raised here)."""
        for task in self._chosen(analyzers):
            analyzer, batches, result = task
            self._pending.remove(task)
            self._keep(analyzer, batches, *result.get())
        if not self._pending:
            self.close()

    def close(self) -> None:
        """Stop the workers (analyses still running are dropped)."""
        for pool in self._pools:
            pool.terminate()
            pool.join()
        self._pools.clear()
        self._pending.clear()


def analyze(analyzer: str, words: Iterable[str], language: str) -> MorphReference:
    """A silver reference for ``words`` (NFC, duplicates removed, first-seen order) by ``analyzer``.

    Coverage counts distinct words; words the analyzer cannot segment are dropped with the reason.
    """
    if analyzer not in SILVER:
        raise CorpusError(f"unknown silver analyzer {analyzer!r}; choose one of: {', '.join(SILVER)}",
                          code="unknown_analyzer", value=analyzer)
    spec = SILVER[analyzer]
    if language != spec.language:
        raise CorpusError(f"silver analyzer {analyzer!r} analyzes language {spec.language!r}, not {language!r}",
                          code="wrong_language", value=language)
    unique, todo = _words_to_analyze(analyzer, words)
    cache = _CACHE[analyzer]
    if todo:
        cache.update(zip(todo, segment_seeded(analyzer, [todo])[0][0], strict=True))
    analyses = {word: (cache[word],) for word in unique if isinstance(cache[word], frozenset)}
    dropped = Counter(cache[word] for word in unique if isinstance(cache[word], str))
    return MorphReference(
        name=analyzer,
        language=language,
        kind="silver",
        analyses=analyses,  # type: ignore[arg-type]  # the isinstance filter above keeps frozensets only
        coverage=Coverage(len(unique), len(analyses), dict(sorted(dropped.items()))),
        source=f"{analyzer} ({spec.distribution} {spec.version()}): {spec.method}",
        citation=spec.label,
    )
