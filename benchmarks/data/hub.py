"""Published tokenizers from the Hugging Face Hub: ``hf:ORG/NAME[@REVISION]``.

``hub_tokenizer_file`` downloads the repository's ``tokenizer.json`` (a ``tokenizers`` file), or its
``tokenizer.model`` (a sentencepiece model) when it has none, with ``huggingface_hub`` into tokbench's
cache (``$TOKBENCH_CACHE/hub``).  The file lies under ``snapshots/<commit>/``: the commit the revision
(default ``main``) pointed to when it was fetched, so a run's manifest, which records the file and its
SHA-256 (``benchmarks.run.pretrained``), pins exactly what was measured.  A file already in the cache is
used without the network when the Hub cannot be reached (or with ``HF_HUB_OFFLINE=1``); ``HF_ENDPOINT``
selects another hub (a mirror), ``HF_TOKEN`` a gated repository's access.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from benchmarks.errors import BenchmarkError
from corpora.sources import cache_home

HUB_PREFIX = "hf:"
#: the files tried, in order: a ``tokenizers`` tokenizer.json, else a sentencepiece model
HUB_FILES = ("tokenizer.json", "tokenizer.model")
_SOURCE = re.compile(r"hf:(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?:@(?P<revision>[^\s@]+))?")


def is_hub_source(source: object) -> bool:
    """Whether ``source`` names a tokenizer of the Hub (``hf:ORG/NAME[@REVISION]``)."""
    return isinstance(source, str) and source.startswith(HUB_PREFIX)


def hub_label(source: str) -> str:
    """A row's default label for a Hub source: the repository's name (``hf:openai-community/gpt2`` -> ``gpt2``)."""
    match = _SOURCE.fullmatch(source)
    return match["repo"].split("/")[1] if match else source


def hub_tokenizer_file(source: str) -> Path:
    """The local file of ``source`` (``hf:ORG/NAME[@REVISION]``), downloaded into the cache if it is not there
    (see the module docstring); a BenchmarkError naming the repository, the revision and what went wrong."""
    match = _SOURCE.fullmatch(source)
    if match is None:
        raise BenchmarkError(f"{source!r}: a Hub tokenizer is hf:ORG/NAME or hf:ORG/NAME@REVISION "
                             "(e.g. hf:openai-community/gpt2@main)", code="bad_hub_source", value=source)  # fmt: skip
    repo, revision = match["repo"], match["revision"] or "main"
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f"{repo}@{revision}"
    for name in HUB_FILES:
        try:
            return Path(hf_hub_download(repo, name, revision=revision, cache_dir=cache_home() / "hub",
                                        endpoint=os.environ.get("HF_ENDPOINT") or None))
        except GatedRepoError:
            raise BenchmarkError(f"{where}: a gated repository: accept its terms on the Hub and set HF_TOKEN",
                                 code="gated_dataset", value=repo) from None  # fmt: skip
        except RepositoryNotFoundError:
            raise BenchmarkError(f"{where}: no such repository on the Hub (or it is private: set HF_TOKEN)",
                                 code="unknown_tokenizer", value=repo) from None  # fmt: skip
        except RevisionNotFoundError:
            raise BenchmarkError(f"{where}: the repository has no revision {revision!r}", code="unknown_tokenizer",
                                 value=revision) from None  # fmt: skip
        except LocalEntryNotFoundError:
            raise BenchmarkError(f"{where}: the Hub cannot be reached and {name} is not in the cache "
                                 f"({cache_home() / 'hub'})", code="unreachable", value=repo) from None  # fmt: skip
        except EntryNotFoundError:
            continue  # no tokenizer.json: try the sentencepiece model
        except (HfHubHTTPError, OSError) as exc:
            reason = str(exc).splitlines()[0]
            raise BenchmarkError(f"{where}: download failed ({reason})", code="unreachable", value=repo) from None
    raise BenchmarkError(f"{where}: the repository has none of {', '.join(HUB_FILES)}", code="missing_file",
                         value=repo)  # fmt: skip
