"""The text stages before a model: normalizers, pre-tokenizers, GPT-2's byte aliases."""
