"""Uses of a finished run's results besides the report: exporting and comparing runs."""
