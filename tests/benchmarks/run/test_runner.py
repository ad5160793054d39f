"""The runner end to end on a small real grid: embedded Korean and English package text,
four families and a production row.  One run is shared by the module; the tests then
check its outputs, determinism, caching, resuming, the spawn start method, the
output-directory guard and the regression check built on it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import bpe
from benchmarks.check import compare, is_failure, parse_baseline, read_baseline, write_baseline
from benchmarks.cli import main
from benchmarks.errors import BenchmarkError
from benchmarks.files import options_label, result_columns
from benchmarks.measure.metrics import METRICS
from benchmarks.run import runner
from benchmarks.run.config import parse_config
from benchmarks.run.runner import run_experiment
from benchmarks.run.units import read_unit_result
from corpora import silver
from tests.errors import raises_code

TINY = {
    "name": "tiny",
    "corpora": ["embedded-kor", "embedded-eng"],
    "production": ["cl100k"],
    "tokenizers": [
        {"kind": "char", "vocab_sizes": [2000]},
        {"kind": "char-bpe", "vocab_sizes": [800, 1500], "options": {"end_of_word": "separate"}},
        {"kind": "byte-bpe", "vocab_sizes": [1000]},
        {"kind": "word", "vocab_sizes": [2000]},
    ],
    "bootstrap": {"resamples": 200},
    "report": {"vocab_size": 800},
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def isolated_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKBENCH_CACHE", str(cache))


@pytest.fixture(scope="module")
def config():
    return parse_config(TINY, source="tiny.toml")


def _blas_threads() -> set[int]:
    return {library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"}


#: the collector's thresholds and BLAS threads the caller had set, as ``run_dir``'s run left them
_CALLER_AFTER_RUN: dict[str, object] = {}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory, cache: Path, config) -> Path:
    """The tiny run, called with the collector's thresholds and the BLAS thread count set to values of the
    caller's own (the run changes both while it goes)."""
    import gc

    before = gc.get_threshold()
    with pytest.MonkeyPatch.context() as patch, threadpool_limits(limits=2, user_api="blas"):
        patch.setenv("TOKBENCH_CACHE", str(cache))
        gc.set_threshold(701, 11, 12)
        try:
            run = run_experiment(config, tmp_path_factory.mktemp("runs") / "tiny", jobs=2, progress=False)
            _CALLER_AFTER_RUN.update(threshold=gc.get_threshold(), blas=_blas_threads())
        finally:
            gc.set_threshold(*before)
    return run


def results(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "results.csv", keep_default_na=False, na_values=[""])


def test_outputs_are_tidy_and_complete(run_dir: Path) -> None:
    for name in ("results.parquet", "results.csv", "costs.csv", "paired.csv", "manifest.json"):
        assert (run_dir / name).is_file(), name
    frame = results(run_dir)
    # the schema's columns, of the options only those the config sets
    assert list(frame.columns) == [c for c in result_columns() if not c.startswith("opt_") or c == "opt_end_of_word"]
    assert set(frame["metric"]) <= set(METRICS)
    units = frame.groupby(["corpus", "tokenizer", "vocab_size"], dropna=False).size()
    assert len(units) == 2 * (1 + 2 + 1 + 1 + 1)  # corpora x (char, char-bpe x2, byte-bpe, word, cl100k)
    # the rows at the report size (char-bpe 800) and the production row, paired per corpus: one overlap row each
    overlap = frame[frame["metric"] == "vocab_overlap"]
    assert list(zip(overlap["corpus"], overlap["tokenizer"], overlap["partner"], strict=True)) == [
        ("embedded-eng", "char-bpe", "cl100k"), ("embedded-kor", "char-bpe", "cl100k")]
    assert frame.loc[frame["metric"] != "vocab_overlap", "partner"].isna().all()  # empty in results.csv
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert set(manifest["corpora"]) == {"embedded-kor", "embedded-eng"}
    assert manifest["config_fingerprint"] == parse_config(TINY).fingerprint()
    # the analyses this run made (none for answers this worker process or the cache already held)
    analysis_seconds = manifest["timings"]["silver_analysis_seconds"]
    assert set(analysis_seconds) <= {"kiwi", "lemminflect"} and all(s > 0 for s in analysis_seconds.values())
    saved = sorted(p.name for p in (run_dir / "tokenizers" / "embedded-kor").iterdir())
    assert saved == ["byte-bpe-1000.json", "char-2000.json", "char-bpe-1500.json", "char-bpe-800.json",
                     "word-2000.json"]  # fmt: skip
    assert bpe.load(run_dir / "tokenizers" / "embedded-kor" / "char-bpe-800.json").vocab_size <= 800


def test_the_report_shows_how_every_tokenizer_splits_the_first_test_documents(run_dir: Path, tmp_path: Path) -> None:
    import bpe.render
    from benchmarks.report import code_span, write_report
    from corpora import load_corpus

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    (copy / "tokenizers" / "embedded-eng" / "byte-bpe-1000.json").unlink()  # a tokenizer the run no longer has
    report = write_report(copy).read_text(encoding="utf-8")
    section = report.split("## How the tokenizers split\n")[1].split("\n## ")[0]
    examples = json.loads((copy / "examples.json").read_text(encoding="utf-8"))
    assert examples["role"] == "test"
    # at the report size (800) where a row was run at it, else at its closest size, named beside it
    shown = {"byte-bpe (1k)": "byte-bpe-1000", "char (2k)": "char-2000", "char-bpe": "char-bpe-800",
             "word (2k)": "word-2000", "cl100k": None}  # fmt: skip
    for corpus_id in ("embedded-kor", "embedded-eng"):
        documents = load_corpus(corpus_id).documents("test")[:3]
        chosen = [example for example in examples["examples"] if example["corpus"] == corpus_id]
        assert [example["id"] for example in chosen] == [document.id for document in documents]
        for example, document in zip(chosen, documents, strict=True):
            assert document.text.startswith(example["text"]) and len(example["text"]) <= 160
            assert example["cut"] == (example["text"] != document.text)
            for label, file in shown.items():
                if corpus_id == "embedded-eng" and label == "byte-bpe (1k)":
                    assert "_Note: byte-bpe on embedded-eng is not shown: " in section
                    continue
                tokenizer = bpe.load(copy / "tokenizers" / corpus_id / f"{file}.json" if file else "cl100k")
                encoding = tokenizer.encode_with_spans(example["text"])
                pieces = code_span(bpe.render.render(example["text"], encoding, tokenizer.unk_id))
                row = rf"\| {re.escape(label)} +\| +{len(encoding)} \| {re.escape(pieces)} +\|"
                assert re.search(row, section), (corpus_id, label)


def test_the_run_gives_the_caller_its_collector_and_blas_threads_back(run_dir: Path) -> None:
    """The run freezes its long-lived objects out of the collector's passes, collects less often and runs
    BLAS on one thread while it runs; a caller's process gets all three back as it had them."""
    import gc

    assert gc.get_freeze_count() == 0
    assert (_CALLER_AFTER_RUN["threshold"], _CALLER_AFTER_RUN["blas"]) == ((701, 11, 12), {2})


def test_values_are_consistent_with_their_intervals(run_dir: Path) -> None:
    frame = results(run_dir).dropna(subset=["ci_low"])
    assert len(frame) > 100
    assert (frame["ci_low"] <= frame["value"] + 1e-12).all()
    assert (frame["value"] <= frame["ci_high"] + 1e-12).all()


def test_known_relations_between_rows(run_dir: Path) -> None:
    for corpus in ("embedded-kor", "embedded-eng"):
        frame = results(run_dir)
        test = frame[(frame["corpus"] == corpus) & (frame["eval_set"] == "test")]
        per = test.set_index(["tokenizer", "vocab_size", "metric"])["value"]
        assert per[("char", 2000, "chars_per_token")] == pytest.approx(1.0)
        assert per[("char", 2000, "tokens_vs_char")] == pytest.approx(1.0)
        # more merges, fewer tokens; byte-level BPE never produces <unk>
        assert per[("char-bpe", 1500, "tokens_per_kchar")] < per[("char-bpe", 800, "tokens_per_kchar")]
        assert per[("byte-bpe", 1000, "unk_token_rate")] == 0.0
    # morphology rows exist for the silver references of both corpora
    morph = results(run_dir).query("eval_set == 'reference'")
    assert {"kiwi", "lemminflect"} <= set(morph["reference"])


def test_metrics_apply_by_capability(run_dir: Path) -> None:
    frame = results(run_dir)
    # word-level OOV rates: only for the tokenizer whose tokens are whole pre-tokens, on every eval set
    oov = frame[frame["metric"].isin(["oov_token_rate", "oov_type_rate"])]
    assert set(oov["kind"]) == {"word"} and len(oov) == 2 * 2  # two metrics x two corpora (test sets)
    assert (oov["value"] > 0).all()  # a 2,000-word vocabulary meets unknown words
    unk = frame.query("metric == 'unk_token_rate' and kind == 'word'").set_index("corpus")["value"]
    assert (oov.query("metric == 'oov_token_rate'").set_index("corpus")["value"] == unk).all()
    # every row gets the metrics that need no capability
    per_unit = frame.query("metric == 'bytes_per_token'").groupby(["corpus", "tokenizer", "vocab_size"], dropna=False)
    assert per_unit.ngroups == 2 * 6


def test_identical_results_on_a_second_run_without_retraining(run_dir: Path, config, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    def refuse(*args, **kwargs):
        raise AssertionError("the second run retrained a tokenizer")

    monkeypatch.setattr(bpe, "train", refuse)
    second = run_experiment(config, tmp_path / "again", jobs=1, progress=False)
    for name in ("results.csv", "results.parquet", "paired.csv", "audit.csv", "audit-entries.csv"):
        assert (second / name).read_bytes() == (run_dir / name).read_bytes(), name


def test_an_interrupted_run_resumes(run_dir: Path, config, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    units = sorted((copy / "units").iterdir())
    units[0].unlink()
    (copy / "results.csv").unlink()
    run_experiment(config, copy, jobs=1, progress=False)
    assert units[0].is_file()
    assert (copy / "results.csv").read_bytes() == (run_dir / "results.csv").read_bytes()


def test_units_computed_while_analyzers_run_equal_the_pool_units(run_dir: Path, config, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Analyses that stay busy until the run waits for them: a worker of its own trains every sweep and the
    run's process evaluates every unit meanwhile (``_work_while_analyzing``), and the results are the pool's."""

    class BusyAnalyses(silver.Prefetch):
        def ready(self, analyzers=None) -> bool:
            return analyzers is not None  # each corpus's analyses are there, "all of them" never

    evaluated = []
    original = runner.run_unit
    monkeypatch.setattr(runner.silver, "Prefetch", BusyAnalyses)
    monkeypatch.setattr(runner, "run_unit", lambda unit, context: evaluated.append(unit) or original(unit, context))
    busy = run_experiment(config, tmp_path / "busy", jobs=2, progress=False)
    assert len(evaluated) == len(list((run_dir / "units").iterdir())) > 0
    for name in ("results.csv", "results.parquet", "paired.csv"):
        assert (busy / name).read_bytes() == (run_dir / name).read_bytes(), name


def test_a_sweep_training_when_the_analyses_end_is_handed_over(run_dir: Path, config, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Analyses that end while the first sweep trains (an empty cache): the pool queues that sweep's units once
    it ends, submits no sweep twice, and the results are those of a run without the hand-over."""

    class EndingAnalyses(silver.Prefetch):
        asked = 0

        def ready(self, analyzers=None) -> bool:
            EndingAnalyses.asked += 1
            return EndingAnalyses.asked > 2  # busy for the run's first look and the first sweep's start

    submitted = []

    class CountingPool(runner.ProcessPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            if fn is runner._train_sweep_in_worker:
                submitted.append(args[0])
            return super().submit(fn, *args, **kwargs)

    handed = []
    original = runner._run_units
    monkeypatch.setenv("TOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(runner.silver, "Prefetch", EndingAnalyses)
    monkeypatch.setattr(runner, "ProcessPoolExecutor", CountingPool)
    monkeypatch.setattr(runner, "_POLL_SECONDS", 0.0)  # the training cannot have ended at the first look
    monkeypatch.setattr(runner, "_run_units",
                        lambda *args, **kwargs: handed.append(args[-1]) or original(*args, **kwargs))  # fmt: skip
    ended = run_experiment(config, tmp_path / "ended", jobs=2, progress=False)
    assert len(handed) == 1 and handed[0] is not None and handed[0].sweep == submitted[0]
    assert len(submitted) == len(set(submitted)) > 1
    for name in ("results.csv", "results.parquet", "paired.csv"):
        assert (ended / name).read_bytes() == (run_dir / name).read_bytes(), name


def test_spawned_workers_give_the_same_results(run_dir: Path, tmp_path: Path) -> None:
    """Workers started with `spawn` get the corpora and config from the pool initializer (nothing is
    inherited from the parent): their units equal the module run's (forked workers).  Tokenizers come
    from the cache."""
    tokenizers = [{"kind": "char", "vocab_sizes": [2000]}, dict(TINY["tokenizers"][1], vocab_sizes=[800])]
    small = parse_config(dict(TINY, name="small", corpora=["embedded-eng"], production=[], tokenizers=tokenizers),
                         source="small.toml")  # fmt: skip
    spawned = run_experiment(small, tmp_path / "spawned", jobs=2, progress=False, start_method="spawn")
    paths = sorted((spawned / "units").iterdir())
    assert len(paths) == 2
    for path in paths:
        ours, forked = read_unit_result(path), read_unit_result(run_dir / "units" / path.name)
        assert ours.unit == forked.unit
        assert repr(ours.rows) == repr(forked.rows) and ours.counts == forked.counts, path.name  # repr: NaN == NaN


def test_a_sweep_trains_its_largest_size_once_and_derives_the_others(run_dir: Path, config) -> None:
    """char-bpe runs at 800 and 1500 on each corpus: 1500 is trained, 800 derived from it, and the derived
    tokenizer is the one training at 800 gives (saved JSON), with its derivation time as train_seconds."""
    from benchmarks.run.grid import training_texts
    from benchmarks.run.runner import tokenizer_cache_paths
    from benchmarks.run.units import Unit
    from corpora import load_corpus

    corpus = load_corpus("embedded-kor")
    direct = bpe.train("char-bpe", training_texts(corpus, None), 800, end_of_word="separate")
    ran = bpe.load(run_dir / "tokenizers" / "embedded-kor" / "char-bpe-800.json")
    assert ran.to_dict() == direct.to_dict()
    options = (("end_of_word", "separate"),)
    small, large = (Unit("embedded-kor", "kor_Hang", "char-bpe", "char-bpe", "family", size, options)
                    for size in (800, 1500))  # fmt: skip
    small_meta = json.loads(tokenizer_cache_paths(small, corpus, config)[1].read_text(encoding="utf-8"))
    large_meta = json.loads(tokenizer_cache_paths(large, corpus, config)[1].read_text(encoding="utf-8"))
    assert small_meta["derived_from_vocab_size"] == 1500 and "derived_from_vocab_size" not in large_meta
    costs = pd.read_csv(run_dir / "costs.csv").set_index(["corpus", "tokenizer", "vocab_size"])
    assert costs.loc[("embedded-kor", "char-bpe", 800), "train_seconds"] == small_meta["train_seconds"]


def test_a_train_chars_axis_trains_each_row_on_nested_prefixes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each train_chars value trains on the first training documents up to that many characters, exactly
    as max_train_chars caps them (the two share cached tokenizers); rows carry the value in `options`;
    the report shows the metric against train_chars."""
    from benchmarks.report import write_report
    from benchmarks.run.grid import training_texts
    from corpora import load_corpus

    axis = {"name": "axis", "corpora": ["embedded-eng"], "train_chars": [100000, 20000],
            "tokenizers": [{"kind": "char-bpe", "vocab_sizes": [400, 800], "options": {"end_of_word": "separate"}},
                           {"kind": "word", "vocab_sizes": [500]}],
            "metrics": ["bytes_per_token", "vocab_size_reached"], "bootstrap": {"resamples": 50},
            "report": {"vocab_size": 400}}  # fmt: skip
    run = run_experiment(parse_config(axis, source="axis.toml"), tmp_path / "axis", jobs=2, progress=False)
    frame = results(run)
    frame["options"] = [options_label(row) for row in frame.to_dict("records")]
    assert sorted(set(frame["options"])) == ["end_of_word=separate,train_chars=100000",
                                             "end_of_word=separate,train_chars=20000",
                                             "train_chars=100000", "train_chars=20000"]  # fmt: skip
    rate = frame[frame["metric"] == "bytes_per_token"].set_index(["tokenizer", "vocab_size", "options"])["value"]
    assert rate["char-bpe", 800, "end_of_word=separate,train_chars=100000"] != \
        rate["char-bpe", 800, "end_of_word=separate,train_chars=20000"]  # fmt: skip
    prefix = training_texts(load_corpus("embedded-eng"), 20000)
    direct = bpe.train("char-bpe", prefix, 400, end_of_word="separate")
    assert bpe.load(run / "tokenizers" / "embedded-eng" / "char-bpe-400-20000chars.json").to_dict() == direct.to_dict()

    def refuse(*args, **kwargs):
        raise AssertionError("max_train_chars retrained a tokenizer a train_chars value had trained")

    monkeypatch.setattr(bpe, "train", refuse)
    capped = dict(axis, name="capped", train_chars=None, max_train_chars=20000)
    del capped["train_chars"]
    same = results(run_experiment(parse_config(capped), tmp_path / "capped", jobs=1, progress=False))
    same["options"] = [options_label(row) for row in same.to_dict("records")]
    same_rate = same[same["metric"] == "bytes_per_token"].set_index(["tokenizer", "vocab_size", "options"])["value"]
    assert same_rate["char-bpe", 400, "end_of_word=separate"] == \
        rate["char-bpe", 400, "end_of_word=separate,train_chars=20000"]  # fmt: skip
    report = write_report(run).read_text(encoding="utf-8")
    assert "## Training data" in report and "20,000 chars |   100,000 chars |" in report
    assert (run / "plots" / "bytes_per_token-vs-train-chars.png").is_file()


def test_train_chars_values_that_give_the_same_text_are_refused(tmp_path: Path) -> None:
    """The first English training document has 1,827 characters: 1000 and 1500 both keep only it."""
    config = parse_config(dict(TINY, corpora=["embedded-eng"], train_chars=[1000, 1500]), source="same.toml")
    with raises_code(BenchmarkError, "same_training_text", field="train_chars", value=1500) as caught:
        run_experiment(config, tmp_path / "out", progress=False)
    assert "1000" in str(caught.value) and "'embedded-eng'" in str(caught.value)  # the other value, the corpus
    assert not (tmp_path / "out").exists()


def test_output_directory_guard(run_dir: Path, tmp_path: Path) -> None:
    other = parse_config(dict(TINY, name="other", production=[]), source="other.toml")
    with raises_code(BenchmarkError, "other_run", value=run_dir):
        run_experiment(other, run_dir, progress=False)
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine", encoding="utf-8")
    with raises_code(BenchmarkError, "not_a_run_folder", value=stranger):
        run_experiment(other, stranger, overwrite=True, progress=False)
    assert (stranger / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_unknown_corpus_leaves_no_output(tmp_path: Path) -> None:
    config = parse_config(dict(TINY, corpora=["embedded-klingon"]))
    from corpora import CorpusError

    with raises_code(CorpusError, "unknown_corpus", value="embedded-klingon"):
        run_experiment(config, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- regression check


def test_check_passes_on_its_own_baseline_and_catches_regressions(run_dir: Path, tmp_path: Path) -> None:
    baseline_path = tmp_path / "baseline.json"
    count = write_baseline(run_dir, baseline_path)
    assert count == len(results(run_dir))
    assert compare(run_dir, read_baseline(baseline_path)) == []
    assert main(["check", str(run_dir), "--baseline", str(baseline_path)]) == 0
    baseline = json.loads(baseline_path.read_text(encoding="utf-8"))

    # pretend the baseline compressed 10% better: the run now regressed on that row
    row = next(r for r in baseline["rows"] if r["metric"] == "bytes_per_token")
    row["value"] *= 1.10
    # and drop another row entirely from the run's point of view: it is "new", which does not fail
    baseline["rows"] = [r for r in baseline["rows"] if r["metric"] != "renyi_efficiency"]
    changes = compare(run_dir, parse_baseline(baseline))
    assert [c.status for c in changes if c.key[-1] == "bytes_per_token"] == ["regression"]
    assert {c.status for c in changes if c.key[-1] == "renyi_efficiency"} == {"new"}
    assert is_failure(changes)
    baseline_path.write_text(json.dumps(baseline), encoding="utf-8")
    assert main(["check", str(run_dir), "--baseline", str(baseline_path)]) == 1

    # a metric that disappeared from the run is a failure too
    baseline["rows"].append(dict(row, metric="boundary_f1", reference="made-up"))
    assert any(c.status == "missing" for c in compare(run_dir, parse_baseline(baseline)))

    # --update rewrites the baseline deliberately, keeping its tolerances
    baseline["tolerance"] = {"relative": 0.02, "absolute": 0.0}
    baseline_path.write_text(json.dumps(baseline), encoding="utf-8")
    assert main(["check", str(run_dir), "--baseline", str(baseline_path), "--update"]) == 0
    assert read_baseline(baseline_path).tolerance.model_dump() == {"relative": 0.02, "absolute": 0.0}
    assert main(["check", str(run_dir), "--baseline", str(baseline_path)]) == 0


def test_check_rejects_foreign_files(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"rows": []}', encoding="utf-8")
    assert main(["check", str(run_dir), "--baseline", str(foreign)]) == 2
    assert "not a tokbench baseline" in capsys.readouterr().err
    valid = tmp_path / "valid.json"
    write_baseline(run_dir, valid)
    assert main(["check", str(tmp_path), "--baseline", str(valid)]) == 2
    assert "no results.parquet" in capsys.readouterr().err


# --------------------------------------------------------------------------- vocabulary audit


@pytest.mark.slow  # 20-45 s: a whole run (or bench suite) end to end; CI runs it with -m slow
def test_the_run_audits_its_tokenizers_and_the_report_shows_the_counts(run_dir: Path, tmp_path: Path) -> None:
    """audit.csv: one row per corpus and tokenizer row at the report size (char-bpe at 800, cl100k), counts equal to
    ``audit_vocabulary`` on the saved tokenizer, "never used" equal to a direct count over the corpus's test text;
    audit-entries.csv lists exactly the unreachable entries, in order; the report's table prints those counts."""
    from benchmarks.measure.audit import STATUS_COLUMNS, audit_vocabulary
    from benchmarks.report import write_report
    from corpora import load_corpus

    audit = pd.read_csv(run_dir / "audit.csv")
    entries = pd.read_csv(run_dir / "audit-entries.csv", dtype=str, keep_default_na=False)
    assert list(zip(audit["corpus"], audit["tokenizer"], strict=True)) == [
        ("embedded-eng", "char-bpe"), ("embedded-eng", "cl100k"), ("embedded-kor", "char-bpe"),
        ("embedded-kor", "cl100k")]  # fmt: skip
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    section = write_report(copy).read_text(encoding="utf-8").split("## Vocabulary audit\n")[1].split("\n## ")[0]
    table = {(cells[0], cells[1]): cells for cells in pipe_cells(section)}
    for row in audit.itertuples():
        tokenizer = bpe.load(run_dir / "tokenizers" / row.corpus / "char-bpe-800.json" if row.tokenizer == "char-bpe"
                             else "cl100k")  # fmt: skip
        expected = audit_vocabulary(tokenizer)
        counts = expected.status_counts()
        assert row.entries == tokenizer.vocab_size == len(expected.entries)
        assert {status: getattr(row, column) for status, column in STATUS_COLUMNS.items()} == counts
        scripts = expected.script_counts()
        assert row.script_latin == scripts["Latin"] and row.script_hangul == scripts["Hangul"]
        assert row.script_hangul_share == pytest.approx(scripts["Hangul"] / tokenizer.vocab_size)
        test = load_corpus(row.corpus).documents("test")
        used = {token for document in test for token in tokenizer.encode(document.text)}
        assert row.unused == tokenizer.vocab_size - len(used) and row.unused_eval_set == "test"
        assert row.unused_reachable == sum(1 for entry in expected.entries
                                           if entry.id not in used and entry.status == "reachable")  # fmt: skip
        where = "" if row.row_type == "production" else row.corpus  # a production row's entries once
        listed = entries[(entries["corpus"] == where) & (entries["tokenizer"] == row.tokenizer)]
        assert [int(i) for i in listed["id"]] == [e.id for e in expected.entries if e.status == "unreachable"]
        shown = table[(row.corpus, row.tokenizer)]
        assert shown[2:9] == [f"{value:,}" for value in (row.entries, *counts.values())]
        assert shown[-1] == f"{row.unused:,} ({row.unused / row.entries:.1%})"
    assert list(zip(entries["corpus"], entries["tokenizer"], entries["id"].astype(int), strict=True)) == sorted(
        zip(entries["corpus"], entries["tokenizer"], entries["id"].astype(int), strict=True))
    korean = audit.set_index(["corpus", "tokenizer"]).loc[("embedded-kor", "char-bpe")]
    assert korean.script_hangul > korean.script_latin  # a vocabulary trained on Korean text is mostly Hangul
    assert "[audit.csv](audit.csv)" in section
    # a run without audit.csv has no such section
    (copy / "audit.csv").unlink()
    assert "## Vocabulary audit" not in write_report(copy).read_text(encoding="utf-8")


def pipe_cells(markdown: str) -> list[list[str]]:
    """The body rows of the first pipe table of ``markdown``, cells stripped."""
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def test_side_tables_on_worker_processes_equal_the_one_by_one_audit(run_dir: Path, config) -> None:
    """The module run computed the vocab_overlap rows and the audit files on two worker processes
    (``benchmarks.run.sidetables``); in this process, tokenizer after tokenizer (``sidetables.run_audit_tables``),
    they are the same bytes."""
    from benchmarks.files import read_results
    from benchmarks.measure.evaluate import overlap_vocabulary
    from benchmarks.measure.metrics import METRICS
    from benchmarks.run.evaluate import vocab_overlap_rows
    from benchmarks.run.grid import plan_units
    from benchmarks.run.sidetables import run_audit_tables
    from corpora import load_corpus

    corpora = {corpus_id: load_corpus(corpus_id) for corpus_id in config.corpora}
    pretrained = runner.resolve_pretrained(config.pretrained_rows, config.source, None)
    context = runner.RunContext(config, corpora, run_dir, pretrained, {})
    results = [read_unit_result(context.unit_path(unit), unit) for unit in plan_units(config, corpora, pretrained)]
    tokenizer_of = runner.run_tokenizer(context)
    overlap = vocab_overlap_rows(results, lambda unit: overlap_vocabulary(tokenizer_of(unit)),
                                 [METRICS["vocab_overlap"]], config)  # fmt: skip
    counts, entries = run_audit_tables(results, tokenizer_of, context.test_texts, config)
    written = read_results(run_dir)
    written = written[written["metric"] == "vocab_overlap"]
    assert len(overlap) == len(written) > 0
    assert {(row["corpus"], row["tokenizer"], row["partner"]): row["value"] for row in overlap} == dict(
        zip(zip(written["corpus"], written["tokenizer"], written["partner"], strict=True), written["value"],
            strict=True))  # fmt: skip
    assert counts.to_csv(index=False) == (run_dir / "audit.csv").read_text(encoding="utf-8")
    assert entries.to_csv(index=False) == (run_dir / "audit-entries.csv").read_text(encoding="utf-8")
    assert len(counts) == 4


def test_the_manifests_reference_coverage_is_computed_on_a_forked_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """With several jobs and no analyzer loaded here, the coverage runs on a forked child (which starts from
    this process's memory); on one job, or once an analyzer is loaded here (kiwi's threads would be dead in a
    child), in this process, when asked."""
    import os

    monkeypatch.setattr(runner, "_coverage_of", lambda corpora: {name: (len(text), os.getpid())
                                                                 for name, text in corpora.items()})  # fmt: skip
    monkeypatch.setattr(silver, "analyzers_loaded", lambda: False)
    forked = runner._reference_coverage({"a": "xyz"}, jobs=2)
    length, pid = forked.result()["a"]
    assert length == 3 and pid != os.getpid()
    assert runner._reference_coverage({"a": "xyz"}, jobs=1).result() == {"a": (3, os.getpid())}
    monkeypatch.setattr(silver, "analyzers_loaded", lambda: True)
    assert runner._reference_coverage({"a": "xyz"}, jobs=2).result() == {"a": (3, os.getpid())}
