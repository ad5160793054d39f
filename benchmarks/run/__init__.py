"""A run: its config, grid, units of work, pretrained rows, parallel sets and the runner."""
