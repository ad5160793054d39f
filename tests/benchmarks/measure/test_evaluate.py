"""benchmarks.measure.evaluate: the bytes of a tokenizer's vocabulary, as the evaluator hands them to the
morphology metrics."""

from __future__ import annotations


def test_vocabulary_bytes_give_the_word_initial_prefix_of_each_family(embedded_text):
    """The Uzan filter looks the first morpheme up with a space where the vocabulary's word-initial tokens
    carry one (Ġ, ▁), bare where they do not."""
    import bpe
    from benchmarks.measure.evaluate import vocabulary_bytes

    lines = embedded_text["eng_Latn"][:100]
    for kind, prefix in (("byte-bpe", b" "), ("spm-unigram", b" "), ("char-bpe", b" "), ("char", b"")):
        tokenizer = bpe.train(kind, lines, vocab_size=600)
        vocabulary, found = vocabulary_bytes(tokenizer)
        assert found == prefix, kind
        assert len(vocabulary) <= tokenizer.vocab_size and b"e" in vocabulary
    vocabulary, found = vocabulary_bytes(bpe.load("cl100k"))
    assert found == b" " and b" walk" in vocabulary and b"ed" in vocabulary
