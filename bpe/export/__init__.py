"""Writing a trained tokenizer in another library's format."""
