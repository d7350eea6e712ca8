"""Claude Code's requests, as captured from 2.1.332 (tests/runtimes/data/claude-code-requests.json, trimmed),
told apart by its adapter's signatures alone: its summarization request offers its tools and puts its prompt
after the last tool result, and is still a compaction; its hand-back without a kept tail resumes the turn; a
request no signature places is shown in the drift error by its last text block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.models.emulator.messages import request_from_anthropic
from harness.runtimes.adapter import load
from harness.scripted.alignment import drift
from harness.scripted.signatures import signatures_from
from harness.scripted.steps import Expected, ScriptStep

DATA = json.loads((Path(__file__).parent / "data" / "claude-code-requests.json").read_text())
ADAPTER = load("claude-code")
SIGNATURES = signatures_from({ADAPTER.name: ADAPTER.signatures}, ADAPTER.source)


def _request(kind: str):
    return request_from_anthropic(DATA[kind]["body"], 8192), DATA[kind]["headers"]


def test_its_summarization_request_offers_tools_and_is_a_compaction():
    request, headers = _request("compaction")
    assert [t["name"] for t in request.tools] == ["Bash", "DeferredToolPlaceholder", "Read"]
    assert request.messages[-2].role == "tool"  # the prompt follows the last tool result, in the same message
    assert request.messages[-1].content.startswith("CRITICAL: Respond with TEXT ONLY")
    assert SIGNATURES.classify(request, headers) == "compaction"


def test_its_turn_requests_are_turns():
    request, headers = _request("turn")
    assert request.tools and SIGNATURES.classify(request, headers) == "turn"
    assert not SIGNATURES.resumes(request, headers)


def test_its_environment_system_message_joins_the_system_text():
    """2.1.332 sends its environment as a `system` message after the first user message: it is system text,
    so the newest message stays the prompt or the tool results the script checks."""
    body = DATA["first_turn"]["body"]
    assert [m["role"] for m in body["messages"]] == ["user", "system"]
    request, _ = _request("first_turn")
    assert request.messages[-1].role == "user" and "Add per-route upstream timeouts" in request.messages[-1].content
    assert "# Environment" in request.system and request.system.startswith("x-anthropic-billing-header")
    assert all(m.role != "system" for m in request.messages)


def test_its_hand_back_without_a_kept_tail_resumes_the_turn():
    request, headers = _request("resume_without_tail")
    assert request.messages[-1].role == "user" and "Result of calling the Read tool" in request.messages[-1].content
    assert SIGNATURES.classify(request, headers) == "turn" and SIGNATURES.resumes(request, headers)


def test_a_request_no_signature_places_is_shown_by_its_last_text_block():
    """Without Claude Code's signature (a runtime's new release changed its prompt), its summarization
    request is met as a turn and the drift names what it was: its last text block, the prompt."""
    request, headers = _request("compaction")
    others = signatures_from({"pi": load("pi").signatures}, "pi")
    assert others.classify(request, headers) == "turn"
    last_call = request.messages[-3].tool_calls[0].id
    step = ScriptStep(12, "next", (), (Expected("tool", "an output that never came", "call_x"),), 3, 24)
    message = drift(step, 69, request)
    assert message.startswith("drift at step 12: expected the output of call call_x")
    assert f"got a tool result for call {last_call}" in message
    assert "no compaction or side signature matched" in message
    assert "last text block from the user 'CRITICAL: Respond with TEXT ONLY. Do NOT call any tools." in message


def test_a_drift_names_the_compaction_signatures_it_was_tried_against(tmp_path):
    """A newer release whose summarization prompt no longer opens as the adapter says: the case stops naming the
    request (its last text block) and the signature it failed, so the fix is that one line of the adapter."""
    from harness.models.builtin import BuiltinClient
    from harness.models.emulator.reply import Exchange
    from harness.models.emulator.faults import EmulatorError
    from harness.scripted.model import ScriptedModel
    from harness.scripted.steps import Script

    changed = signatures_from({"claude-code": {"compaction": {"user": ["CRITICAL: Respond with PLAIN TEXT"]}}}, "t")
    step = ScriptStep(1, "next", (), (Expected("tool", "an output", "call_x"),), 0, 1)
    model = ScriptedModel(Script(("p",), (step,)), signatures=changed, summarizer=BuiltinClient())
    request, headers = _request("compaction")
    exchange = Exchange("anthropic", "/v1/messages", DATA["compaction"]["body"], headers, True)
    with pytest.raises(EmulatorError) as err:
        model(request, exchange)
    message = str(err.value)
    assert "last text block from the user 'CRITICAL: Respond with TEXT ONLY." in message
    assert message.endswith("claude-code compaction signatures: newest user text opening with "
                            "'CRITICAL: Respond with PLAIN TEXT'")
