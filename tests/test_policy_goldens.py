"""Every policy's compaction events on every shipped case, against goldens/policy/<policy>.json.

The placeholder summarizer makes these replays deterministic, so any change to a trigger, a tail rule or
the fold shows up here as a reviewable diff. After an intended change, regenerate and review:

    UPDATE_POLICY_GOLDENS=1 pytest tests/test_policy_goldens.py
"""

import json
import os
from pathlib import Path

import pytest

from harness.cases import discover
from harness.studies.simulate import Simulator, Target, config_for

ROOT = Path(__file__).parents[1]
GOLDENS = ROOT / "goldens" / "policy"
POLICIES = ["default", "pi", "opencode", "codex", "claude-code", "gemini-cli", "ratio-20", "truncate"]
FIELDS = ("send_index", "source", "head_start", "tail_start", "turns_kept", "steps_kept", "truncated_to_step",
          "tokens_before_est", "tokens_after_est", "tokens_before_true", "tokens_after_true")


@pytest.fixture(scope="module")
def simulators():
    return {case.id: Simulator(Target(case.id, case.session, case.context_window, case.max_output_tokens))
            for case in discover(ROOT / "cases")}


def events(simulator: Simulator, policy: str) -> dict:
    result = simulator.run(policy, config_for(simulator.target, {}))
    return {"events": [{k: getattr(e, k) for k in FIELDS} for e in result.replay.events],
            "risks": result.replay.risk_counts()}


@pytest.mark.parametrize("policy", POLICIES)
def test_policy_events_match_the_goldens(simulators, policy):
    now = {case_id: events(simulator, policy) for case_id, simulator in sorted(simulators.items())}
    path = GOLDENS / f"{policy}.json"
    if os.environ.get("UPDATE_POLICY_GOLDENS"):  # written, not checked: comparing it with itself proves nothing
        before = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps(now, indent=1) + "\n")
        changed = sorted(c for c in set(before) | set(now) if before.get(c) != now.get(c))
        pytest.skip(f"UPDATE_POLICY_GOLDENS: wrote {path.name}, {len(changed)} case(s) changed"
                    f"{': ' + ', '.join(changed) if changed else ''}; review the diff, then run without it")
    golden = json.loads(path.read_text())
    for case_id in sorted(set(golden) | set(now)):
        assert now.get(case_id) == golden.get(case_id), f"{policy} on {case_id} differs from {path}"
