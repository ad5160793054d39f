"""corpora: declarative corpus specs (``corpora/*.toml``) and their loader.

The package knows nothing about tokenizers.  Entry points::

    from corpora import CorpusError, list_corpora, load_spec, load_corpus
    corpus = load_corpus("ud-tur", data_dir=None)  # data_dir falls back to $TOKBENCH_DATA
    corpus.documents("train"), corpus.roles(), corpus.fingerprint, corpus.references()

See ``corpora/README.md`` for the spec format and how to add a language.
"""

from corpora.errors import CorpusError, CorpusWarning
from corpora.loader import Corpus, Document, load_corpus
from corpora.spec import CorpusSpec, list_corpora, load_spec

__all__ = [
    "Corpus",
    "CorpusError",
    "CorpusSpec",
    "CorpusWarning",
    "Document",
    "list_corpora",
    "load_corpus",
    "load_spec",
]
