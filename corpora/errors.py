"""User-facing errors and warnings of the corpora package."""


class CorpusError(ValueError):
    """Bad corpus spec, missing or malformed data file: the message names the file/field/value and what is expected."""


class CorpusWarning(UserWarning):
    """Something was repaired while loading (e.g. invalid UTF-8 replaced): loading went on, the message says what."""
