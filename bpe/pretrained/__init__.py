"""Published tokenizers used as they are (encode-only), by name or from a file."""
