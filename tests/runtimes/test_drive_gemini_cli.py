"""Gemini CLI 0.61.0 (opt-in: `pytest -m runtime`; about 17 minutes here under load, one process per prompt),
driven on a real case at its own 32K window over the Gemini wire: every step used once, and every compaction it
makes captured as its two calls (the <state_snapshot>, then the self-check that may rewrite it), to another model
name, with the turn in flight resumed."""

from __future__ import annotations

import pytest

from runtime_helpers import CASE, drive_whole

pytestmark = pytest.mark.runtime


def test_gemini_cli_compacts_in_two_calls_and_goes_on(tmp_path):
    _, done = drive_whole("gemini-cli", CASE, tmp_path)
    assert done.outcome.steps == 69
    assert done.compactions, "at 0.5 of a 32K window it compacts this case"
    for found in done.compactions:
        assert len(found.requests) == 2  # the snapshot, then "Critically evaluate the <state_snapshot> ..."
        assert found.requests[0].request.system.startswith("You are a specialized system component")
        assert "Critically evaluate" in found.requests[1].request.messages[-1].content
        assert found.summary.strip()
        assert found.after is None or found.after.reply is not None  # the turn in flight went on
