"""Tokenizer families trained here, the sentencepiece reference rows, and what they share."""
