"""A tokenizer file as read once, for every format's ``sniff`` and ``load`` (``bpe.pretrained.formats``)."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bpe.base import TokenizerError

#: the file a Hugging Face tokenizer directory holds; a directory given as a tokenizer is read as it
HF_FILE = "tokenizer.json"


@dataclass(frozen=True)
class TokenizerFile:
    """The bytes of a tokenizer file and, when it is a JSON document, its parsed JSON.

    ``name`` is the source as given (a directory, for a Hugging Face tokenizer), which messages and
    the loaded tokenizer's ``name`` use; ``path`` is the file read.
    """

    name: str
    path: Path
    data: bytes
    document: Any = None  # the parsed JSON of a file whose first non-blank byte is "{"; else None

    @classmethod
    def read(cls, source: str | os.PathLike[str]) -> TokenizerFile:
        """Read ``source`` (a file, or a directory holding ``tokenizer.json``) once; an unreadable
        file, or one that starts like JSON but is not, is a TokenizerError naming it."""
        path = Path(source)
        if path.is_dir():
            if not (path / HF_FILE).is_file():
                raise TokenizerError(
                    f"{path}: a directory without {HF_FILE} (a Hugging Face tokenizer directory holds one; "
                    "other formats are single files)",
                    code="missing_file",
                    value=path / HF_FILE,
                )
            path = path / HF_FILE
        try:
            data = read_regular_file(path)
        except FileNotFoundError:
            raise TokenizerError(f"{path}: no such tokenizer file", code="missing_file", value=path) from None
        except OSError as exc:
            raise TokenizerError(f"{path}: cannot read tokenizer file ({exc.strerror or exc})", code="unreadable_file",
                                 value=path) from None  # fmt: skip
        if data.lstrip()[:1] != b"{":
            return cls(str(source), path, data)
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise TokenizerError(f"{path}: not a JSON file ({exc})", code="not_json", value=path) from None
        except RecursionError:  # Python's parser recurses once per level of nesting
            raise TokenizerError(
                f"{path}: not a tokenizer file: its JSON is nested too deeply to read (no tokenizer format nests "
                "more than a few levels)",
                code="unrecognized_file",
                value=path,
            ) from None
        return cls(str(source), path, data, document)

    @property
    def is_json(self) -> bool:
        return self.document is not None

    @property
    def json_object(self) -> dict[str, Any]:
        """The parsed JSON when it is an object, else an empty one (what the JSON formats sniff)."""
        return self.document if isinstance(self.document, dict) else {}


def read_regular_file(path: Path) -> bytes:
    """The bytes of ``path``, refused unless it is a regular file: a device or FIFO (``/dev/zero``, a
    pipe) may never end, and nothing is read from it before the refusal."""
    with open(path, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise TokenizerError(f"{path}: not a regular file (a device, pipe or socket); give a tokenizer file",
                                 code="not_regular_file", value=path)  # fmt: skip
        return handle.read()
