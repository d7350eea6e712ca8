"""Cases: `cases/<id>/case.toml` + `session.jsonl`, loaded and validated with errors naming file, line and field."""

from harness.cases.schema import KINDS, POINT, POOLS, Case, Probe, discover, load_case, validate_case

__all__ = ["KINDS", "POINT", "POOLS", "Case", "Probe", "discover", "load_case", "validate_case"]
