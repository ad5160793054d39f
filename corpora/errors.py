"""User-facing errors and warnings of the corpora package."""

from bpe.errors import CodedError
from bpe.validation import Problem


class CorpusError(CodedError, ValueError):
    """Bad corpus spec, missing or malformed data file: the message names the file/field/value and what is expected;
    ``code`` names the kind of problem (docs/errors.md), ``value`` the offending value, ``field`` where it was given."""

    default_code = "corpus_error"


def spec_error(label: str, problem: Problem) -> CorpusError:
    """The error of a corpus spec's validation problem: its code and value, and where it is, as a TOML reader
    counts (tables and list entries from 1): ``[[sources]] #2 [[sources.hub]] #1: key 'split' must be a
    string, got 3``."""
    tables = [
        f"[[{'sources.hub' if name == 'hub' else name}]] #{position + 1}"
        for name, position in zip(problem.table[::2], problem.table[1::2], strict=False)
    ]
    if len(problem.table) % 2:  # a plain table inside the last list entry: [sources.parallel]
        tables.append(f"[sources.{problem.table[-1]}]")
    where = [" ".join(tables)] if tables else []
    if problem.key:
        key = f"key {problem.key[0]!r}" + "".join(f" entry #{position + 1}" for position in problem.key[1:])
        where.append(f"{key} {problem.message}")
    else:
        where.append(problem.message)
    return CorpusError(f"{label}: {': '.join(where)}", code=problem.kind, value=problem.value, field=problem.path)


class CorpusWarning(UserWarning):
    """Something was repaired while loading (e.g. invalid UTF-8 replaced): loading went on, the message says what."""
