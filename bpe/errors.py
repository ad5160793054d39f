"""Error codes: what kind of problem a user-facing error reports, stable when its message is reworded.

The user-facing errors of every package (``bpe.base.TokenizerError``, ``corpora.errors.CorpusError``,
``benchmarks.errors.BenchmarkError``) mix in ``CodedError``: besides the one-line message (``str(error)``,
what the CLI prints) an error carries

* ``code``: a snake_case name for the kind of problem (``vocab_below_floor``, ``unknown_key``); the
  declared list, with what each means, is docs/errors.md (tests/test_error_codes.py keeps the two equal);
* ``value``: the offending value (the number, name or path given; None when there is none to name);
* ``field``: where it was given (``tokenizers[0].vocab_sizes[1]``), for errors of a validated table.

Programs (and tests) branch on ``code``, never on the wording of the message.
"""

from __future__ import annotations

from typing import Any, ClassVar


class CodedError(Exception):
    """Mixin of the user-facing errors: ``code``, ``value`` and ``field`` next to the message.

    A subclass names its ``default_code``: the code of a raise that gives none."""

    default_code: ClassVar[str]

    def __init__(self, *args: object, code: str | None = None, value: Any = None, field: str | None = None) -> None:
        super().__init__(*args)
        self.code = code or self.default_code
        self.value = value
        self.field = field
