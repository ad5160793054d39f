"""The data root: downloading and verifying it (the shipped manifest is data/manifest.tsv)."""
