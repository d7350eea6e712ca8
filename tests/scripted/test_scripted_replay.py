"""A real case replayed by a small agent: every recorded output comes back byte for byte and every step is used
once; a reordered reply is a drift that stops that case only; retries, a runtime's own hand-back after a
compaction, and the request log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.builtin import BuiltinClient
from harness.models.emulator.faults import EmulatorError
from harness.models.emulator.reply import exchange
from harness.models.emulator.chat import request_from_openai
from harness.scripted import (RequestLog, ScriptedModel, load_signatures, open_replay, script_from_session,
                              write_workspace)
from harness.session import Message, Session, ToolCall
from scripted_agent import BASH, run_agent

CASE = Path("cases/edge-32k-window")


def _direct(replay, log_headers: dict | None = None):
    """The agent's requests as the emulator hands them to the responder (Chat Completions converter)."""
    def send(messages: list[dict], tools: tuple[dict, ...]):
        payload = {"model": "stub-model", "messages": messages, "stream": False,
                   "tools": [{"type": "function", "function": t} for t in tools]}
        request = request_from_openai(payload, 4096)
        request = type(request)(**{**request.__dict__, "tools": tools})
        reply = replay.model(request, exchange("openai", "/v1/chat/completions", payload, log_headers, False))
        return reply.text, [(c.id, c.name, c.arguments) for c in reply.tool_calls]
    return send


def test_the_real_case_replays_every_output_byte_for_byte_and_uses_every_step_once(tmp_path):
    replay = open_replay(CASE, tmp_path / "ws", log_path=tmp_path / "requests.jsonl")
    outputs = run_agent(replay.script.prompts, _direct(replay), replay.workspace)
    recorded = {c.id: c.output for c in replay.script.calls}
    assert len(outputs) == 53 and outputs == recorded  # every output, byte for byte
    outcome = replay.model.outcome()
    assert (outcome.used, outcome.steps, outcome.stopped, outcome.exit_code) == (69, 69, None, 0)
    replay.close()
    logged = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    assert [r["step"] for r in logged] == list(range(1, 70)) and {r["kind"] for r in logged} == {"turn"}


def test_a_reordered_reply_drifts_at_that_step_and_stops_that_case_only(tmp_path):
    drifting = open_replay(CASE, tmp_path / "a")
    fine = open_replay(CASE, tmp_path / "b")
    calls = drifting.script.calls
    swap = lambda n, call_id, output: calls[n + 1].output if n == 4 else output  # noqa: E731
    with pytest.raises(EmulatorError) as caught:
        run_agent(drifting.script.prompts, _direct(drifting), drifting.workspace, tamper=swap)
    step = next(s for s in drifting.script.steps if any(e.call_id == calls[4].id for e in s.before))
    message = str(caught.value.message)
    assert message.startswith(f"drift at step {step.number}: expected the output of call {calls[4].id} ")
    assert f"got a tool result for call {calls[4].id} " in message
    assert caught.value.status == 400  # not a status an SDK retries
    assert drifting.model.outcome().exit_code == 1 and drifting.model.outcome().used == step.number - 1
    with pytest.raises(EmulatorError, match="^drift at step"):  # stopped: later requests get the same refusal
        run_agent(drifting.script.prompts[:1], _direct(drifting), drifting.workspace)
    assert drifting.model.outcome().used == step.number - 1  # nothing answered after the drift
    run_agent(fine.script.prompts, _direct(fine), fine.workspace)
    assert fine.model.outcome().exit_code == 0


def _tiny(tmp_path: Path, signatures: str = "all", log: RequestLog | None = None) -> ScriptedModel:
    session = Session((Message("user", "look"), Message("assistant", "reading", (ToolCall("c1", "grep", {}),)),
                       Message("tool", "match: x = 1", tool_call_id="c1"), Message("assistant", "x is 1")), None)
    script = script_from_session(session)
    write_workspace(script, tmp_path)
    return ScriptedModel(script, signatures=load_signatures(signatures), summarizer=BuiltinClient(),
                         workspace=tmp_path, log=log)


def _ask(model: ScriptedModel, *messages: ChatMessage, tools=(BASH,), headers=None, path="/v1/chat/completions"):
    request = ModelRequest("stub-model", "sys", messages, 4096, tools=tools)
    return model(request, exchange("openai", path, {"messages": [m.content for m in messages]}, headers, False))


PROMPT = ChatMessage("user", "look")
CALLED = ChatMessage("assistant", "reading", (ToolCallSpec("c1", "bash", {"command": "cat .replay/c1.txt"}),))
RESULT = ChatMessage("tool", "match: x = 1", tool_call_id="c1")


def test_a_retried_request_gets_the_same_step_again(tmp_path):
    model = _tiny(tmp_path)
    first, again = _ask(model, PROMPT), _ask(model, PROMPT)
    assert first == again and first.tool_calls[0].arguments == {"command": "cat .replay/c1.txt"}
    assert first.finish == "tool_calls" and model.outcome().used == 1


def test_a_turn_request_after_the_last_step_is_a_drift(tmp_path):
    model = _tiny(tmp_path)
    _ask(model, PROMPT)
    assert _ask(model, PROMPT, CALLED, RESULT).text == "x is 1"
    with pytest.raises(EmulatorError, match=r"^drift at step 3: expected no more turn requests \(all 2 steps used\), "
                                            r"got a user message 'again'"):
        _ask(model, PROMPT, CALLED, RESULT, ChatMessage("assistant", "x is 1"), ChatMessage("user", "again"))
    assert model.outcome().exit_code == 1


def test_a_runtimes_hand_back_after_compacting_mid_turn_takes_the_next_step_unchecked(tmp_path):
    model = _tiny(tmp_path, "opencode")
    _ask(model, PROMPT)
    nudge = ChatMessage("user", "Continue if you have next steps, or stop and ask for clarification if you are "
                                "unsure how to proceed.")
    summary = ChatMessage("assistant", "## Objective\n- look")
    assert _ask(model, ChatMessage("user", "What did we do so far?"), summary, nudge).text == "x is 1"
    assert model.outcome().exit_code == 0
    other = _tiny(tmp_path / "pi", "pi")  # pi declares no such hand-back: the same request is a drift
    _ask(other, PROMPT)
    with pytest.raises(EmulatorError, match="^drift at step 2: expected the output of call c1"):
        _ask(other, ChatMessage("user", "What did we do so far?"), summary, nudge)


def test_the_turns_own_prompt_sent_again_right_after_a_compaction_takes_the_next_step(tmp_path):
    """opencode, compacting mid-turn, may hand the turn back with its prompt rather than its "Continue" nudge."""
    compact = ModelRequest("stub-model", "You are a context summarization agent.",
                           (ChatMessage("user", "Here is the conversation so far: ..."),), 4096)
    summary = ChatMessage("assistant", "## Objective\n- look")
    again = (ChatMessage("user", "What did we do so far?"), summary, PROMPT)
    model = _tiny(tmp_path / "a", "opencode")
    _ask(model, PROMPT)
    model(compact, exchange("openai", "/v1/chat/completions", {"messages": []}, None, False))
    assert _ask(model, *again).text == "x is 1" and model.outcome().exit_code == 0
    other = _tiny(tmp_path / "b", "opencode")  # the same request with no compaction before it: a drift
    _ask(other, PROMPT)
    with pytest.raises(EmulatorError, match="^drift at step 2: expected the output of call c1"):
        _ask(other, *again)


def test_a_continuation_after_a_compaction_at_a_turns_end_closes_it_and_leaves_the_next_turn_its_step(tmp_path):
    """opencode compacts after a finished turn and goes on with its "Continue" nudge before the driver sends the
    next prompt (real-entireio-cd95 drifted on it): the nudge gets a closing reply, no step taken, and the next
    prompt then takes its own first step. Told nothing of the prompts sent, the nudge takes the next step."""
    session = Session((Message("user", "look"), Message("assistant", "x is 1"), Message("user", "and y?"),
                       Message("assistant", "y is 2")), None)
    script = script_from_session(session)
    write_workspace(script, tmp_path)
    nudge = ChatMessage("user", "Continue if you have next steps, or stop and ask for clarification if you are "
                                "unsure how to proceed.")
    summary = ChatMessage("assistant", "## Objective\n- look")
    model = ScriptedModel(script, signatures=load_signatures("opencode"), summarizer=BuiltinClient(),
                          workspace=tmp_path)
    model.prompts_sent = 1
    assert _ask(model, PROMPT).text == "x is 1"
    assert _ask(model, ChatMessage("user", "What did we do so far?"), summary, nudge).text == "(turn ended)"
    assert model.outcome().used == 1
    model.prompts_sent = 2
    later = (ChatMessage("user", "What did we do so far?"), summary, nudge, ChatMessage("assistant", "(turn ended)"),
             ChatMessage("user", "and y?"))
    assert _ask(model, *later).text == "y is 2" and model.outcome().exit_code == 0
    untold = ScriptedModel(script, signatures=load_signatures("opencode"), summarizer=BuiltinClient(),
                           workspace=tmp_path)
    _ask(untold, PROMPT)
    assert _ask(untold, ChatMessage("user", "What did we do so far?"), summary, nudge).text == "y is 2"


def test_a_request_without_a_shell_or_read_tool_stops_the_case(tmp_path):
    model = _tiny(tmp_path)
    with pytest.raises(EmulatorError, match=r"^step 1: call c1: the request offers no shell or read tool \(edit\)"):
        _ask(model, PROMPT, tools=({"name": "edit", "parameters": {"properties": {"path": {}}}},))
    assert model.outcome().stopped and model.outcome().exit_code == 1


def test_the_request_log_keeps_every_request_without_any_key(tmp_path, monkeypatch):
    secret = "sk-test-0123456789abcdefSECRET"
    gemini = "AIzaTESTKEY0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("GEMINI_API_KEY", gemini)
    log = RequestLog(tmp_path / "log" / "requests.jsonl")
    model = _tiny(tmp_path / "ws", log=log)
    headers = {"Authorization": f"Bearer {secret}", "x-api-key": secret, "x-goog-api-key": gemini,
               "x-codex-turn-metadata": '{"request_kind":"turn"}', "user-agent": f"agent/1 {gemini}"}
    _ask(model, ChatMessage("user", f"look {secret}"), headers=headers, path=f"/v1beta/x?alt=sse&key={gemini}")
    with pytest.raises(EmulatorError):
        _ask(model, ChatMessage("user", "something else"), headers=headers)
    log.close()
    text = (tmp_path / "log" / "requests.jsonl").read_text()
    assert secret not in text and gemini not in text
    first, second = (json.loads(line) for line in text.splitlines())
    assert set(first["headers"]) == {"x-codex-turn-metadata", "user-agent"}
    assert first["path"] == "/v1beta/x?alt=sse" and (first["kind"], first["step"]) == ("turn", 1)
    assert second["step"] is None and second["note"].startswith("refused: drift at step 2")


def test_results_without_the_call_ids_are_matched_in_call_order(tmp_path):
    model = _tiny(tmp_path)
    _ask(model, PROMPT)
    nameless = ChatMessage("tool", "match: x = 1", tool_call_id="call-0")  # Gemini may drop the id
    assert _ask(model, PROMPT, CALLED, nameless).text == "x is 1"
    other = _tiny(tmp_path / "b")
    _ask(other, PROMPT)
    with pytest.raises(EmulatorError, match=r"^drift at step 2: expected the output of call c1 'match: x = 1', got "
                                            r"a tool result for call call-0 'no match'"):
        _ask(other, PROMPT, CALLED, ChatMessage("tool", "no match", tool_call_id="call-0"))
