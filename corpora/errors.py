"""User-facing errors of the corpora package."""


class CorpusError(ValueError):
    """Bad corpus spec, missing or malformed data file: the message names the file/field/value and what is expected."""
