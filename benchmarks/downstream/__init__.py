"""Does a tokenizer make a better language model?  Small causal LMs per tokenizer row, scored in bits per byte.

A run whose config has a ``[downstream]`` table (``settings.Downstream``) trains, once every unit is done,
one small causal language model per (corpus, tokenizer row, seed) on that tokenizer's ids, and scores it on
held-out text in bits per byte (BPB): the summed negative log-likelihood in bits divided by the UTF-8
bytes of the text, which compares across vocabularies where per-token loss does not.

* ``data``: the ids a model sees: the same training bytes for every row, the context in bytes, the
  compact output classes, the held-out items and the bytes under ``<unk>``.
* ``bpb``: bits per item from per-token log-probabilities (the ``<unk>`` charge, the unseen-id split).
* ``model``: the model (``transformers``' Llama decoder), its training and scoring (PyTorch).
* ``validity``: Spearman and Kendall correlations of every intrinsic metric with BPB, with bootstrap CIs
  over tokenizers.
* ``stage``: the run's step that plans, caches, trains and writes it all.

PyTorch and ``transformers`` are the optional extra ``downstream`` (``pip install -e '.[downstream]'``);
only ``model`` imports them.  Definitions: docs/metrics.md (``bpb``) and docs/downstream.md.
"""
