"""Codex 0.171.0 driven end to end on a real case at its own 32K window: streamed Responses with tool calls, every
recorded output reaching it (behind its "Output:" header), every step used once, its mid-turn compactions
(asked with the compaction header) captured with what it re-injected ahead of the summary."""

from __future__ import annotations


import pytest

from harness.cases import load_case
from harness.models.builtin import BuiltinClient
from harness.runtimes.checks import check
from harness.runtimes.driver import drive
from harness.runtimes.record import sent_outputs
from runtime_helpers import CASE, require


@pytest.fixture(scope="module")
def codex_drive(tmp_path_factory):
    codex = require("codex")
    case = load_case(CASE)
    return case, drive(case, codex.adapter, codex.binary, codex.version, BuiltinClient(),
                       tmp_path_factory.mktemp("logs"))


def test_every_output_arrives_and_every_step_is_used_once(codex_drive):
    case, done = codex_drive
    assert done.ok, done.failure
    assert done.outcome.used == done.outcome.steps == 69
    recorded = {m.tool_call_id: m.content for m in case.session.messages if m.role == "tool"}
    sent = sent_outputs(done)
    assert set(sent) == set(recorded)
    assert all(sent[k].endswith(recorded[k]) and "Output:\n" in sent[k] for k in recorded)


def test_its_mid_turn_compactions_keep_user_messages_ahead_and_resume(codex_drive):
    case, done = codex_drive
    assert done.compactions
    for found in done.compactions:
        first = found.requests[0]
        assert '"request_kind":"compaction"' in first.headers.get("x-codex-turn-metadata", "").replace(" ", "")
        assert found.mid_turn and found.kept  # codex re-injects its context and earlier user messages
        assert any(item["content"] == case.session.messages[0].content for item in found.kept)
        checks = check(found, case.session, case.context_window)
        assert checks["resumed"] and checks["well_formed"]
