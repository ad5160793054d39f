""""How the tokenizers split": the run's example sentences (``benchmarks.run.examples``) encoded by every
tokenizer of the run at the report vocabulary size (``Run.tokenizers``), each token shown as the text it
covers (``bpe.render``), with its token count.  Nothing for a run without ``examples.json``."""

from __future__ import annotations

from typing import Any

import bpe.render
from benchmarks.report.cells import tokenizer_order
from benchmarks.report.document import Block, Heading, Inline, Paragraph, SplitExample, SplitRow, Splits, Verbatim, text
from benchmarks.report.explorer import ExplorerSentence, explorer_payload
from benchmarks.report.findings import vocab_label
from benchmarks.report.load import RunTokenizers
from benchmarks.report.sections.context import Context
from benchmarks.run.examples import EXAMPLE_CHARS, Example
from bpe.render import EMPTY, SEPARATOR


def splits_section(context: Context) -> list[Block]:
    run = context.run
    if run.examples is None:
        return []
    document, examples = run.examples
    tokenizers, order, at = run.tokenizers, tokenizer_order(run.results), vocab_label(run.report_vocab_size)
    kinds = run.results.drop_duplicates("tokenizer").set_index("tokenizer")["kind"]
    if document.get("role") == "test":
        which = (f"the first test documents of each corpus (a longer one cut at a space after at most "
                 f"{EXAMPLE_CHARS} characters, marked …)")  # fmt: skip
    else:
        which = (f"sentences of the parallel set `{document.get('set')}`, the same in every language (the "
                 f"{len(document.get('keys', []))} whose longest translation is shortest)")  # fmt: skip
    intro = (f"Every tokenizer of the run at {at} (trained rows: the one trained on that corpus; a row not run at "
             f"{at} is named with the size it is shown at) on {which}. Each token is shown as the text it covers, "
             f"tokens separated by {SEPARATOR}: ␣ is a space (whatever marker the tokenizer uses), <0xEB> a byte "
             f"of a UTF-8 character the token covers only in part, {EMPTY} a token that covers no text, <unk:…> an "
             "unknown token. The sentences are quoted from the run's corpora (licenses: the corpora listed "
             "above).")  # fmt: skip
    groups: dict[str, list[Example]] = {}
    for example in examples:
        heading = f"Sentence `{example.key}`" if example.key is not None else f"{example.language} ({example.corpus})"
        groups.setdefault(heading, []).append(example)
    shown: list[tuple[Inline, list[SplitExample]]] = []
    for heading, group in groups.items():
        rendered = []
        for example in group:
            rows = []
            for label in order:
                found = tokenizers.of(example.corpus, label)
                if found is not None:
                    name, tokenizer = found
                    encoding = tokenizer.encode_with_spans(example.text)
                    pieces = bpe.render.render(example.text, encoding, tokenizer.unk_id)
                    rows.append(SplitRow(name, str(kinds[label]), len(encoding), pieces))
            where = example.language if example.key is not None else example.id
            rendered.append(SplitExample(where, example.language, example.text, example.cut, rows))
        shown.append((text(heading, escape=False), rendered))
    return [Heading(2, Verbatim("How the tokenizers split")), Paragraph(intro),
            Splits(shown, list(tokenizers.notes), explorer_data(examples, order, kinds, tokenizers))]  # fmt: skip


def explorer_data(examples: list[Example], order: list[str], kinds: Any, tokenizers: RunTokenizers) -> Any:
    """The token explorer's payload (``benchmarks.report.explorer``) of the same sentences and tokenizers: a parallel
    sentence keeps its key in every language, a test document is keyed by corpus and id; trained rows encode
    the sentences of their own corpus.  None when no tokenizer could be re-loaded."""
    sentences = [ExplorerSentence(example.language, example.key if example.key is not None
                                  else f"{example.corpus}/{example.id}", example.text, example.corpus)
                 for example in examples]  # fmt: skip
    rows: list[tuple[str, str, Any]] = []
    for label in order:
        if label in tokenizers.pretrained:
            rows.append((label, str(kinds[label]), tokenizers.pretrained[label]))
            continue
        per_corpus = {corpus: tokenizer for (corpus, name), (_, tokenizer) in tokenizers.trained.items()
                      if name == label}  # fmt: skip
        if per_corpus:
            rows.append((label, str(kinds[label]), per_corpus))
    return explorer_payload(sentences, rows) if rows and sentences else None
