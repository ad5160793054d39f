"""``raises_code``: assert a user-facing error by its class, code and offending value, not by its wording.

Every user-facing error (``bpe.errors.CodedError``) carries a stable ``code`` (docs/errors.md), the
offending ``value`` and, for a validated table, the ``field``: a test pins those, so rewording a message
changes no test.  The message must still name a given str or int value (that is behaviour: the user
sees what is wrong)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

#: a ``value`` or ``field`` not to check (for parametrized rows where only some name one)
UNSET: Any = object()


@contextmanager
def raises_code(
    error_class: type[BaseException], code: str, *, value: Any = UNSET, field: Any = UNSET
) -> Iterator[pytest.ExceptionInfo[Any]]:
    """Like ``pytest.raises(error_class)``, and the error's ``code`` is ``code`` (and, when given, its
    ``value`` and ``field`` are these); yields the ``ExceptionInfo``."""
    with pytest.raises(error_class) as caught:
        yield caught
    error = caught.value
    given = getattr(error, "code", None)
    assert given == code, f"expected code {code!r}, got {given!r}: {error}"
    if value is not UNSET:
        assert error.value == value, f"expected value {value!r}, got {error.value!r}: {error}"  # type: ignore[attr-defined]
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            spellings = {str(value), repr(value), f"{value:,}" if isinstance(value, int) else str(value)}
            named = any(spelling in str(error) for spelling in spellings)
            assert named, f"the message does not name the value {value!r}: {error}"
    if field is not UNSET:
        assert error.field == field, f"expected field {field!r}, got {error.field!r}: {error}"  # type: ignore[attr-defined]
