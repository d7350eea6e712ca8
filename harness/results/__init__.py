"""Run results: `results/<run-id>/run.json` and one file per case.

schema (the typed, versioned records: the one place field names live), aggregate (aggregates built case by
case), folder (atomic I/O, resume, merge).
"""

from harness.results.aggregate import Aggregator, aggregate
from harness.results.folder import RunFolder, merge_runs, read_run, strip_volatile, write_json
from harness.results.schema import SCHEMA_VERSION, CaseOutcome, CaseRecord, Configuration, ProbeRecord, RunHeader

__all__ = ["SCHEMA_VERSION", "Aggregator", "CaseOutcome", "CaseRecord", "Configuration", "ProbeRecord", "RunFolder",
           "RunHeader", "aggregate", "merge_runs", "read_run", "strip_volatile", "write_json"]
