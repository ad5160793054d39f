"""Numbers about tokenizers: metrics, evaluation, statistics, audit, segmentation diff."""
