"""The trained rows of an experiment config: ``[[tokenizers]]`` tables (one family, trained on each corpus of
the run) and ``[[multilingual]]`` tables (one family, trained once on a sample of several corpora and
evaluated on each of them; ``benchmarks.run.multilingual`` draws the sample)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, Strict, ValidationInfo, field_validator, model_validator

import bpe
from bpe.options import FamilyOptions
from bpe.validation import PositiveInt, Table, distinct, expecting, table_rule

Kind = Literal[tuple(bpe.FAMILIES)]  # type: ignore[valid-type]

#: a row label: letters and digits of any script (a label is a plain name in the user's language), then also
#: '.', '_', '-'; never a path
_LABEL = re.compile(r"^[^\W_][\w.-]*$")


def plain_label(label: str) -> str:
    if not _LABEL.fullmatch(label):
        raise ValueError(
            "must be a plain name (letters, digits, '.', '_', '-', starting with a letter or digit): "
            f"it names the row in tables and files, got {label!r}"
        )
    return label


class WrittenOptions(dict):
    """A tokenizer entry's options as the config writes them, carrying ``settings``: the same options
    parsed by the family's options model, once, where the config is read."""

    settings: FamilyOptions


class TokenizerEntry(Table):
    """One ``[[tokenizers]]`` table: a family trained at each vocabulary size with the same options."""

    kind: Kind
    #: a row name, also part of file names (cached tokenizers): a plain name like the run's
    label: Annotated[str, AfterValidator(plain_label)] = Field(
        default_factory=lambda validated: validated.get("kind", "")
    )
    vocab_sizes: Annotated[tuple[PositiveInt, ...], Strict(False), Field(min_length=1), AfterValidator(distinct)]
    options: dict[str, Any] = Field(default_factory=dict, validate_default=True)
    #: the corpora (spec ids) this entry runs on; None: every corpus of the config
    corpora: Annotated[tuple[Annotated[str, Field(min_length=1)], ...], Strict(False), Field(min_length=1),
                       AfterValidator(distinct)] | None = None  # fmt: skip

    @field_validator("options")
    @classmethod
    def _options_of_the_family(cls, options: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """Parsed by the family's options model, before any training: the one parse of a config's options.
        Kept as written (they are part of the config fingerprint and of each row's identity), carrying
        the parsed ones (``settings``)."""
        if "kind" not in info.data:
            return options
        written = WrittenOptions(options)
        written.settings = bpe.family_class(info.data["kind"]).options_model.parse(info.data["kind"], options)
        return written

    @property
    def settings(self) -> FamilyOptions:
        """The options parsed by the family's options model (``bpe.options``)."""
        return self.options.settings

    @model_validator(mode="after")
    def _seeds_from_the_run(self) -> TokenizerEntry:
        """A row that samples is encoded with every seed of the run's ``seeds``: its own ``seed`` would
        be overridden, so it is refused rather than silently ignored."""
        if self.samples and "seed" in self.options:
            raise table_rule("options.seed: a row that samples is encoded once per seed of the run's `seeds` "
                             "list (a top-level setting); remove `seed` here", value="seed")  # fmt: skip
        return self

    def identity(self) -> dict[str, Any]:
        """The entry as the config's fingerprint takes it; ``corpora`` only when given, so an entry
        without it keeps the identity it had before the field existed."""
        return self.model_dump(exclude={"corpora"} if self.corpora is None else set())

    @property
    def samples(self) -> bool:
        """True when the row's encoding is stochastic (``dropout`` > 0 or ``alpha`` set: ``bpe.options``)."""
        return self.settings.samples

    @model_validator(mode="after")
    def _sizes_above_the_family_floor(self) -> TokenizerEntry:
        """Below this floor no text can be trained on (the floor on the actual training text is
        checked before training, ``benchmarks.run.grid``)."""
        floor = bpe.family_class(self.kind).vocab_floor(None, **self.options)
        for position, size in enumerate(self.vocab_sizes):
            if size < floor.minimum:
                raise table_rule(f"vocab_sizes[{position}] = {size} is below the minimum {floor.minimum} for "
                                 f"{self.kind} ({floor.parts})", value=size)  # fmt: skip
            maximum = bpe.family_class(self.kind).options_model.max_vocab_size
            if size > maximum:
                raise table_rule(f"vocab_sizes[{position}] = {size} is above the maximum {maximum} for {self.kind} "
                                 "(token ids are 32-bit)", value=size)  # fmt: skip
        return self

    @property
    def row_type(self) -> str:
        return bpe.family_class(self.kind).facts.row_type




#: a sampling exponent: 1 keeps the corpora's proportions, 0 gives every language the same share
Alpha = Annotated[float, Field(ge=0), expecting("a number >= 0")]


class MultilingualEntry(TokenizerEntry):
    """One ``[[multilingual]]`` table: a family trained once per sampling exponent in ``alpha`` on a sample of
    several corpora of the run (``benchmarks.run.multilingual``), each such row evaluated on every one of them."""

    label: Annotated[str, AfterValidator(plain_label)] = Field(
        default_factory=lambda validated: f"{validated.get('kind', '')}-multilingual"
    )
    #: the sampling exponents: one row per value, labelled ``<label>-a<alpha>``
    alpha: Annotated[tuple[Alpha, ...], Strict(False), Field(min_length=1), AfterValidator(distinct)]
    #: characters of the sample; None: as many as the corpora's training texts hold together
    train_chars: PositiveInt | None = None
    corpora: Annotated[tuple[Annotated[str, Field(min_length=1)], ...], Strict(False), Field(min_length=2),
                       AfterValidator(distinct)] | None = None  # fmt: skip

    @model_validator(mode="after")
    def _trains_on_text(self) -> MultilingualEntry:
        if bpe.family_class(self.kind).facts.trains_on_references:
            raise table_rule(f"kind: {self.kind} trains on each corpus's gold morphemes, which a sample of several "
                             "corpora does not have; use a [[tokenizers]] table", value=self.kind)  # fmt: skip
        return self

    def rows(self) -> tuple[MultilingualEntry, ...]:
        """One entry per sampling exponent, each with that one ``alpha`` and its own label."""
        return tuple(self.model_copy(update={"label": f"{self.label}-a{alpha:g}", "alpha": (alpha,)})
                     for alpha in self.alpha)  # fmt: skip
