"""Run results: `results/<run-id>/run.json` and one file per case."""
