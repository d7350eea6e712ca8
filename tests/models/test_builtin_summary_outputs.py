"""The builtin summarizer's outputs on shipped cases, pinned by hash: a change meant to make it faster (or
otherwise leave it alone) must leave every summary byte-identical.

Each case is replayed through the compaction path as the default run replays it (default policy, the case's
window, the builtin summarizer), so each summary request after the first holds the summary before it.
A change to the summarizer's rules changes these on purpose: re-record them with
`python tests/models/test_builtin_summary_outputs.py --record` and say so in the commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from harness.cases import load_case
from harness.compaction import Compactor
from harness.compaction.summarizer import ModelSummarizer
from harness.models.builtin import BuiltinClient
from harness.policy import make_policy
from harness.run.config import RunConfig, plan_run

ROOT = Path(__file__).resolve().parents[2]
PINNED = Path(__file__).with_name("builtin_summary_hashes.json")
# long-editor-sync's three are the slowest summaries of the default run; the others add a sixfold chain
# (edge-32k-window), a summary over a previous one with many facts (long-billing-migration) and an
# autonomous session (auto-flaky-scheduler).
CASES = ("long-editor-sync", "edge-32k-window", "long-billing-migration", "auto-flaky-scheduler")


def summary_hashes(case_id: str) -> list[str]:
    """sha256 of each summary (finish reason, then text) the builtin writes in the case's default replay."""
    case = load_case(ROOT / "cases" / case_id)
    plan = plan_run(RunConfig())
    policy = make_policy("default", plan.policy_config(case))
    summarizer = ModelSummarizer(BuiltinClient(), "builtin")
    replay = Compactor(case.session, policy, summarizer, points=set(case.points) | {"end"}).run()
    return [hashlib.sha256(f"{call.result.finish_reason}\n{call.result.text}".encode()).hexdigest()
            for call in replay.summaries]


@pytest.mark.parametrize("case_id", CASES)
def test_builtin_summaries_are_unchanged(case_id):
    pinned = json.loads(PINNED.read_text())[case_id]
    assert pinned, "a pinned case must compact at least once"
    assert summary_hashes(case_id) == pinned


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    PINNED.write_text(json.dumps({case_id: summary_hashes(case_id) for case_id in CASES}, indent=1) + "\n")
    print(f"wrote {PINNED.relative_to(ROOT)}")
