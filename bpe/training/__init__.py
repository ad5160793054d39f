"""Learning a vocabulary: pre-token counts, BPE training, sweeps, counting on a cluster."""
