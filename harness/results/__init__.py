"""Run results: `results/<run-id>/run.json` and one file per case.

schema (the typed, versioned records: the one place field names live), aggregate (incremental
aggregates), folder (atomic I/O, resume, merge).
"""
