"""Cases: `cases/<id>/case.toml` + `session.jsonl`, loaded and validated with errors naming file, line and field.

The face the rest of the harness imports: the types (`schema`), the one case.toml reader and writer (`toml`)
and the candidate probes for a new case (`drafts`).
"""

from harness.cases.drafts import draft_probes, render_probes
from harness.cases.schema import KINDS, POINT, POOLS, Case, Probe
from harness.cases.toml import (case_tables, case_toml, discover, load_case, session_file_of, toml_string, toml_table,
                                toml_value, validate_case, write_case_files)

__all__ = ["KINDS", "POINT", "POOLS", "Case", "Probe", "case_tables", "case_toml", "discover", "draft_probes", "load_case",
           "render_probes", "session_file_of", "toml_string", "toml_table", "toml_value", "validate_case",
           "write_case_files"]
