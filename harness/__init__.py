"""compaction-harness: evaluate automatic context compaction in LLM agents (quality and cost).

The library face, for use from Python:

    import harness
    cases = harness.discover("cases")
    replay = harness.replay(cases[0].session, harness.make_policy("default", config), summarizer)
    run = harness.run_cases(cases, harness.RunConfig(), harness.RunFolder(path), run_id="mine")

Names resolve on first use (PEP 562), so `import harness.session` stays as cheap as the module itself and
this face adds no import edge to the layout.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_FACE = {
    "Case": "harness.cases", "Probe": "harness.cases", "discover": "harness.cases", "load_case": "harness.cases",
    "Session": "harness.session", "read_session": "harness.session",
    "PolicyConfig": "harness.policy", "make_policy": "harness.policy", "policy_names": "harness.policy",
    "Compactor": "harness.compaction", "replay": "harness.compaction",
    "ModelRequest": "harness.models", "check_spec": "harness.models", "open_client": "harness.models",
    "RunConfig": "harness.run", "plan_run": "harness.run", "run_cases": "harness.run",
    "RunFolder": "harness.results", "read_run": "harness.results",
}
__all__ = sorted(_FACE)


def __getattr__(name: str) -> Any:
    if name not in _FACE:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(import_module(_FACE[name]), name)
