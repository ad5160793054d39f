"""Atomic file writes: the one way the project writes a file (saved tokenizers, pre-token counts, and every
file of the experiment layer through ``benchmarks.files``).

A file is written under a temporary name beside its target and renamed onto it (``os.replace``) only when
the write succeeded, so a crash or an error never leaves a half-written file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: see ``atomic_path``."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: see ``atomic_path``."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to (by name: pandas, pyarrow and matplotlib write
    to paths); renamed onto ``path`` when the block ends without an error, removed otherwise, so a
    crash or an error never leaves a half-written file.  The one atomic write of the project."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        mask = os.umask(0)
        os.umask(mask)
        tmp.chmod(0o666 & ~mask)  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through, as ``atomic_path``."""
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        yield handle
