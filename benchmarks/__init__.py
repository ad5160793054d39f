"""benchmarks: experiment configs, the runner, metrics, reports, the regression check and the CLI."""
