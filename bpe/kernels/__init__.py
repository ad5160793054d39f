"""numba-compiled cores: counting pre-tokens, learning merges, batch encoding."""
