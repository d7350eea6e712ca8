"""Compaction requests in each runtime's recorded shape (RUNTIMES.md) are classified as compactions and answered
by the builtin in the sections that runtime's prompt asks for; a title request is answered aside."""

from __future__ import annotations

import pytest

from harness.models.builtin import BuiltinClient
from harness.models.emulator.reply import exchange
from harness.models.emulator.gemini import request_from_gemini
from harness.models.emulator.responses import request_from_responses
from harness.models.emulator.chat import request_from_openai
from harness.scripted import ScriptedModel, load_signatures, script_from_session
from harness.session import Message, Session, ToolCall

HISTORY = ('[User]: Add a per-route timeout to tollgate; keep internal/config names stable.\n\n'
           '[Assistant tool calls]: bash(command="cat internal/config/config.go")\n\n'
           '[Tool result]: package config\n// DefaultUpstreamTimeoutMS is the global default.\nconst '
           'DefaultUpstreamTimeoutMS = 1800\n\n[Assistant]: The global default is 1800 ms in internal/config/config.go.')
PI_SYSTEM = ("You are a context summarization assistant. Your task is to read a conversation between a user and an "
             "AI coding assistant, then produce a structured summary following the exact format specified.")
PI_USER = (f"<conversation>\n{HISTORY}\n</conversation>\n\nThe messages above are a conversation to summarize. Create "
           "a structured context checkpoint summary another LLM will use to continue the work.\n\nUse this EXACT "
           "format:\n\n## Goal\n[What is the user trying to accomplish?]\n\n## Constraints & Preferences\n- [...]\n\n"
           "## Progress\n### Done\n- [x] [...]\n\n## Key Decisions\n- [...]\n\n## Next Steps\n1. [...]\n\n"
           "## Critical Context\n- [...]")
OPENCODE_SYSTEM = ("You are a context summarization agent. You are given a conversation between a user and an agent. "
                   "Your goal is to produce a structured summary matching the format specified so another coding "
                   "agent can continue the work.")
OPENCODE_USER = (f"Here is the conversation so far:\n\n<conversation>\n{HISTORY.replace('bash(command=', 'bash(')}"
                 "\n</conversation>\n\nCreate a new anchored summary from the conversation history in the "
                 "<conversation> tags above so another coding agent can continue the work.\n\nOutput exactly the "
                 "Markdown structure shown inside <template>:\n<template>\n## Objective\n\n## Important Details\n\n"
                 "## Work State\n### Completed\n### Active\n### Blocked\n\n## Next Move\n\n## Relevant Files\n"
                 "</template>")
CODEX_PROMPT = ("You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that "
                "will resume the task.\n\nInclude:\n- Current progress and key decisions made\n- Important context, "
                "constraints, or user preferences\n- What remains to be done (clear next steps)\n- Any critical "
                "data, examples, or references needed to continue\n\nBe concise, structured, and focused on helping "
                "the next LLM seamlessly continue the work.")
SNAPSHOT_TAGS = ("overall_goal", "key_knowledge", "file_system_state", "recent_actions", "current_plan")
GEMINI_SYSTEM = ("You are a specialized system component responsible for distilling chat history into a structured "
                 "XML <state_snapshot>.\n\n<state_snapshot>\n"
                 + "".join(f"    <{t}>\n        <!-- ... -->\n    </{t}>\n" for t in SNAPSHOT_TAGS) + "</state_snapshot>")
QWEN_TAGS = ("primary_request_and_intent", "key_technical_concepts", "all_user_messages", "next_step")
QWEN_SYSTEM = ("You are the component that summarizes a conversation when its context window is about to overflow."
               "\n\n<state_snapshot>\n" + "".join(f"  <{t}>\n  </{t}>\n" for t in QWEN_TAGS) + "</state_snapshot>")
AGENT_HISTORY = [
    {"role": "user", "content": "Add a per-route timeout to tollgate; keep internal/config names stable."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "run_shell_command", "arguments": '{"command": "cat internal/config/config.go"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "const DefaultUpstreamTimeoutMS = 1800"},
    {"role": "assistant", "content": "The global default is 1800 ms in internal/config/config.go."},
]


def _model() -> ScriptedModel:
    script = script_from_session(Session((Message("user", "hi"), Message("assistant", "hello")), None))
    return ScriptedModel(script, signatures=load_signatures(), summarizer=BuiltinClient())


def _chat(system: str, user: str | None, history: list | None = None) -> dict:
    messages = [{"role": "system", "content": system}, *(history or [])]
    if user is not None:
        messages.append({"role": "user", "content": [{"type": "text", "text": user}]})
    return {"model": "stub-model", "stream": True, "max_completion_tokens": 4096, "messages": messages}


def _answer(model: ScriptedModel, request, wire: str, payload: dict, headers: dict | None = None):
    kind = model.signatures.classify(request, headers or {})
    return kind, model(request, exchange(wire, "/v1/x", payload, headers, True))


@pytest.mark.parametrize(("system", "user", "headings"), [
    (PI_SYSTEM, PI_USER, ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "## Key Decisions",
                          "## Next Steps", "## Critical Context"]),
    (OPENCODE_SYSTEM, OPENCODE_USER, ["## Objective", "## Important Details", "## Work State", "### Completed",
                                      "### Active", "### Blocked", "## Next Move", "## Relevant Files"]),
], ids=["pi", "opencode"])
def test_pi_and_opencode_get_their_markdown_sections_written_from_the_serialised_conversation(system, user, headings):
    model = _model()
    payload = _chat(system, user)
    kind, reply = _answer(model, request_from_openai(payload, 4096), "openai", payload)
    assert kind == "compaction" and not reply.tool_calls and reply.finish == "stop"
    found = [line for line in reply.text.splitlines() if line.startswith("#")]
    assert [h for h in found if h in headings] == headings
    assert "1800" in reply.text and "internal/config" in reply.text  # read from inside <conversation>
    assert model.outcome().compactions == 1 and model.outcome().used == 0


def test_codex_compaction_by_its_header_gets_the_handoff_list_as_sections():
    model = _model()
    payload = {"model": "stub-model", "stream": True, "tools": [], "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": AGENT_HISTORY[0]["content"]}]},
        {"type": "function_call", "call_id": "c1", "name": "exec_command",
         "arguments": '{"cmd": "cat internal/config/config.go"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "const DefaultUpstreamTimeoutMS = 1800"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text":
            "The global default is 1800 ms in internal/config/config.go."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": CODEX_PROMPT}]}]}
    headers = {"x-codex-turn-metadata": '{"turn_id":"t1","request_kind":"compaction","window_id":"th:0"}'}
    request = request_from_responses(payload, 4096)
    assert model.signatures.classify(request, headers) == "compaction"
    no_header = request_from_responses({**payload, "input": payload["input"][:3]}, 4096)
    assert model.signatures.classify(no_header, headers={"x-codex-turn-metadata": '{"request_kind":"turn"}'}) == "turn"
    kind, reply = _answer(model, request, "responses", payload, headers)
    assert reply.text.startswith("## Goal\n- Add a per-route timeout")
    for title in ("## Current progress and key decisions made", "## Important context, constraints, or user "
                  "preferences", "## What remains to be done (clear next steps)"):
        assert title in reply.text
    assert "1800" in reply.text


@pytest.mark.parametrize(("system", "user", "tags"), [
    (GEMINI_SYSTEM, "Generate a new <state_snapshot> based on the provided history.\n\nFirst, reason in your "
                    "scratchpad. Then, generate the updated <state_snapshot>.", SNAPSHOT_TAGS),
    (QWEN_SYSTEM, "First, reason in your <analysis> block. Then, produce the <state_snapshot> XML.", QWEN_TAGS),
], ids=["gemini-cli", "qwen-code"])
def test_gemini_and_qwen_get_a_state_snapshot_in_their_tags(system, user, tags):
    model = _model()
    payload = _chat(system, user, AGENT_HISTORY)
    kind, reply = _answer(model, request_from_openai(payload, 4096), "openai", payload)
    assert kind == "compaction"
    lines = [line.strip() for line in reply.text.splitlines()]
    assert lines[0] == "<state_snapshot>" and lines[-1] == "</state_snapshot>"
    for tag in tags:
        assert f"<{tag}>" in lines and f"</{tag}>" in lines
    goal = reply.text.split(f"<{tags[0]}>")[1].split(f"</{tags[0]}>")[0]
    assert "Add a per-route timeout to tollgate" in goal


def test_gemini_self_check_is_a_compaction_too_and_an_echoed_snapshot_in_a_turn_is_not():
    model = _model()
    check = _chat("", "Critically evaluate the <state_snapshot> you just generated. Did you omit anything?",
                  AGENT_HISTORY)
    assert model.signatures.classify(request_from_openai(check, 4096), {}) == "compaction"
    echoed = {**_chat("You are Qwen Code, an interactive CLI agent.", "<state_snapshot>...</state_snapshot>\n\n"
                      "Resume the prior task using the summary above."),
              "tools": [{"type": "function", "function": {"name": "run_shell_command"}}]}
    request = request_from_openai(echoed, 4096)
    request = type(request)(**{**request.__dict__, "tools": ({"name": "run_shell_command"},)})
    assert model.signatures.classify(request, {}) == "turn"


def test_a_title_request_is_answered_aside_and_uses_no_step():
    model = _model()
    payload = _chat("You are a title generator. You output ONLY a thread title.", "Generate a title for this "
                    "conversation:\nAdd a per-route timeout")
    kind, reply = _answer(model, request_from_openai(payload, 4096), "openai", payload)
    assert (kind, reply.text, reply.tool_calls) == ("side", "Replayed session", ())
    assert model.outcome().side_requests == 1 and model.outcome().used == 0


def test_signatures_of_one_runtime_do_not_claim_another_runtimes_prompt():
    payload = _chat(OPENCODE_SYSTEM, OPENCODE_USER)
    assert load_signatures("pi").classify(request_from_openai(payload, 4096), {}) == "turn"
    assert load_signatures("opencode").classify(request_from_openai(payload, 4096), {}) == "compaction"


def _gemini(system: str, user: str) -> dict:
    """Gemini CLI's compression call: generateContent (not streamed), no tools, the history then the ask."""
    return {"systemInstruction": {"parts": [{"text": system}]}, "generationConfig": {"temperature": 1},
            "contents": [
                {"role": "user", "parts": [{"text": AGENT_HISTORY[0]["content"]}]},
                {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command",
                                                              "args": {"command": "cat internal/config/config.go"}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {
                    "output": "const DefaultUpstreamTimeoutMS = 1800"}}}]},
                {"role": "model", "parts": [{"text": AGENT_HISTORY[3]["content"]}]},
                {"role": "user", "parts": [{"text": user}]}]}


def test_gemini_clis_two_compression_calls_on_its_own_wire_are_compactions_in_its_tags():
    model = _model()
    first = _gemini(GEMINI_SYSTEM, "Generate a new <state_snapshot> based on the provided history.")
    path = "/v1beta/models/gemini-3.1-pro-preview-customtools:generateContent"
    reply = model(request_from_gemini(first, "gemini-3.1-pro-preview-customtools"),
                  exchange("gemini", path, first, {}, False))
    assert reply.text.startswith("<state_snapshot>\n    <overall_goal>\n        - Add a per-route timeout")
    check = _gemini(GEMINI_SYSTEM, "Critically evaluate the <state_snapshot> you just generated.")
    reply = model(request_from_gemini(check, "gemini-3.1-pro-preview-customtools"),
                  exchange("gemini", path, check, {}, False))
    assert "<key_knowledge>" in reply.text and model.outcome().compactions == 2 and model.outcome().used == 0
