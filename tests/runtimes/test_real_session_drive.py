"""A real Claude Code session driven through a real runtime to its end (issue 39): real-apollo-bd ends on an
interrupt nothing answers and holds sub-agent calls and an output the runtime cuts, each listed as what the
replay could not reproduce, never a drift; with `--window recorded` the runtime's own trigger fires where the
recorded session compacted (message 156), so its compaction is graded on the probes asked there."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from runtime_helpers import require

CASE = "real-apollo-bd"
RECORDED = 156  # the case message the real session's compaction came before


@pytest.mark.parametrize("name", ["pi", "codex", pytest.param("opencode", marks=pytest.mark.runtime)])
def test_a_real_session_drives_to_its_end_and_compacts_where_the_real_one_did(tmp_path, name):
    require(name)
    out = tmp_path / "run"
    assert main(["run", "--runtime", name, "--policy", "recorded", "--cases", CASE, "--window", "recorded",
                 "--out", str(out)]) == 0
    folder = next(p for p in out.iterdir() if p.name.startswith(f"runtime-{name}"))
    case = json.loads((folder / "cases" / f"{CASE}.json").read_text())
    record = case["runtime"]
    assert record["failure"] is None and record["stopped"] is None
    assert record["steps_used"] == record["steps"] == 67
    window = record["window"]
    assert window["mode"] == "recorded" and window["recorded_position"] == RECORDED
    assert 0 < window["context_at_point"] < window["window"] < 200_000  # below the session's own 200K
    positions = [c["position"] for c in record["compactions"]]
    assert positions and abs(positions[0] - RECORDED) <= 4, positions
    kinds = {d["kind"] for d in record["not_reproduced"]}
    assert {"trailing", "sub-agent", "calls"} <= kinds, kinds
    assert record["cpu_seconds"]["runtime"] > 0 < record["cpu_seconds"]["harness"]
    graded = [p for p in case["probes"] if p["at"] == "compaction:1"]
    assert graded and all(p["compactions_before"] for p in graded)
    report = (folder / "report.md").read_text()
    assert f"What the replay could not reproduce in {CASE}" in report and "--window recorded" in report
