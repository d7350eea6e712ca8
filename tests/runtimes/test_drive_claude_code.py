"""Claude Code 2.1.332 (proprietary, opt-in: `pytest -m runtime` after `compaction-harness runtimes install
claude-code`), driven root-safe on real cases: edge-32k-window's 69 steps with its compactions captured as its own
summarization requests (its tools offered, its prompt after the last tool result), and a case whose real session
compacted by hand driven through its `/compact` at that point."""

from __future__ import annotations

import pytest

from runtime_helpers import CASE, drive_whole

pytestmark = pytest.mark.runtime


def test_claude_code_drives_every_step_and_compacts_with_its_own_prompt(tmp_path):
    _, done = drive_whole("claude-code", CASE, tmp_path)
    assert done.outcome.steps == 69
    assert done.compactions, "at its rule's threshold for a 32K window (11,576 tokens) it compacts this case"
    for found in done.compactions:
        request = found.requests[0].request
        assert request.tools, "its summarization request offers its tools"
        assert request.messages[-1].content.startswith("CRITICAL: Respond with TEXT ONLY")
        assert found.summary.strip()


def test_a_manual_compaction_is_driven_through_its_compact_command(tmp_path):
    case, done = drive_whole("claude-code", CASE.parent / "edge-manual-compaction", tmp_path)
    [manual] = [record for record in case.session.compactions if record.origin == "manual"]
    assert (tmp_path / "prompt-14.out").read_text().startswith("{")  # prompt 14 of the drive was /compact
    assert manual.position in [found.position for found in done.compactions]
