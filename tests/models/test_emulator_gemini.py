"""The Gemini wire (what Gemini CLI sends with GOOGLE_GEMINI_BASE_URL), over raw HTTP (no SDK dependency):
generateContent and streamGenerateContent?alt=sse with a function call, the response sent back, errors in
Google's shape."""

from __future__ import annotations

import json

import httpx2
import pytest
from agent_responder import COMMAND, SHELL_TOOL, CallThenText

from harness.models.emulator import Emulator, EmulatorError, EmulatorTransport
from harness.models.emulator.gemini import request_from_gemini
from harness.models.emulator.reply import Reply

BASE = "http://gemini.invalid/v1beta/models/stub-model"
OUTPUT = "SECRET-FACT: the deploy key rotates on Tuesdays."
TOOLS = [{"functionDeclarations": [{"name": "bash", "description": SHELL_TOOL["description"],
                                    "parametersJsonSchema": SHELL_TOOL["parameters"]}]}]
FIRST = {"systemInstruction": {"parts": [{"text": "You are an agent."}]}, "tools": TOOLS,
         "contents": [{"role": "user", "parts": [{"text": "Read notes.txt fully."}]}],
         "generationConfig": {"maxOutputTokens": 2000, "temperature": 1}}


def post(emulator: Emulator, method: str, body: dict) -> httpx2.Response:
    with httpx2.Client(transport=EmulatorTransport(emulator)) as http:
        return http.post(f"{BASE}:{method}", json=body, headers={"x-goog-api-key": "k"})


def sse_chunks(response: httpx2.Response) -> list[dict]:
    assert response.headers["content-type"] == "text/event-stream"
    blocks = [b for b in response.text.split("\n\n") if b.strip()]
    assert all(b.startswith("data: ") for b in blocks)
    return [json.loads(b[len("data: "):]) for b in blocks]


def followup(call: dict) -> dict:
    return {**FIRST, "contents": [
        *FIRST["contents"], {"role": "model", "parts": [{"functionCall": call}]},
        {"role": "user", "parts": [{"functionResponse": {"id": call.get("id"), "name": call["name"],
                                                         "response": {"output": OUTPUT}}}]}]}


def test_generate_content_calls_the_tool_then_answers() -> None:
    responder = CallThenText()
    emulator = Emulator(responder=responder)
    first = post(emulator, "generateContent", FIRST).json()
    candidate = first["candidates"][0]
    assert candidate["finishReason"] == "STOP" and candidate["content"]["role"] == "model"
    (part,) = candidate["content"]["parts"]
    assert part["functionCall"] == {"id": "call_1", "name": "bash", "args": {"command": COMMAND}}
    request, exchange = responder.seen[0]
    assert request.tools == (SHELL_TOOL,) and request.system == "You are an agent." and request.model == "stub-model"
    assert (exchange.wire, exchange.stream, request.max_output_tokens) == ("gemini", False, 2000)
    second = post(emulator, "generateContent", followup(part["functionCall"])).json()
    assert second["candidates"][0]["content"]["parts"] == [{"text": f"The file says: {OUTPUT} (answer to call_1)"}]
    usage = second["usageMetadata"]
    assert usage["promptTokenCount"] > first["usageMetadata"]["promptTokenCount"]
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"]


def test_stream_generate_content_over_sse() -> None:
    emulator = Emulator(responder=CallThenText(preamble="I will read the file with cat, all of it."))
    chunks = sse_chunks(post(emulator, "streamGenerateContent?alt=sse", FIRST))
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    assert len(chunks) >= 3 and "".join(p.get("text", "") for p in parts) == "I will read the file with cat, all of it."
    assert [p["functionCall"]["name"] for p in parts if "functionCall" in p] == ["bash"]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP" and "usageMetadata" in chunks[-1]
    assert all("finishReason" not in c["candidates"][0] for c in chunks[:-1])
    call = next(p["functionCall"] for p in parts if "functionCall" in p)
    answer = sse_chunks(post(emulator, "streamGenerateContent?alt=sse", followup(call)))
    assert "".join(p["text"] for c in answer for p in c["candidates"][0]["content"]["parts"]) == \
        f"The file says: {OUTPUT} (answer to call_1)"
    plain = post(emulator, "streamGenerateContent", FIRST)  # without alt=sse: one JSON array of the chunks
    assert isinstance(plain.json(), list) and plain.json()[-1]["candidates"][0]["finishReason"] == "STOP"


def test_the_builtin_answers_gemini_in_text() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Summarize:\n## Goal\n## Files"}]}]}
    reply = post(Emulator(), "generateContent", body).json()
    assert reply["candidates"][0]["content"]["parts"][0]["text"].startswith("## Goal")


def test_gemini_requests_become_neutral_messages() -> None:
    """Calls without ids are numbered; a response without an id answers the oldest open call of its name;
    thought parts are left out; a response that is not a lone output string is kept as JSON."""
    payload = {"contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"text": "thinking...", "thought": True},
                                    {"functionCall": {"name": "ls", "args": {"dir": "."}}},
                                    {"functionCall": {"name": "ls", "args": {"dir": "src"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a.py"}}},
                                   {"functionResponse": {"name": "ls", "response": {"error": "denied", "code": 1}}}]}]}
    request = request_from_gemini(payload, "m")
    assert [(m.role, m.content) for m in request.messages] == [
        ("user", "go"), ("assistant", ""), ("tool", "a.py"), ("tool", '{"code": 1, "error": "denied"}')]
    assert [c.id for c in request.messages[1].tool_calls] == ["call-0", "call-1"]
    assert [m.tool_call_id for m in request.messages[2:]] == ["call-0", "call-1"]
    assert request.max_output_tokens == 65536  # no generationConfig: Gemini's own output limit


def test_errors_come_back_in_googles_shape() -> None:
    def drift(request, exchange) -> Reply:
        raise EmulatorError(409, "invalid_request_error", "drift at step 2: expected a, got b")

    conflict = post(Emulator(responder=drift), "generateContent", FIRST)
    assert conflict.status_code == 409
    assert conflict.json() == {"error": {"code": 409, "message": "drift at step 2: expected a, got b",
                                         "status": "ABORTED"}}
    empty = post(Emulator(), "generateContent", {"contents": []})
    assert empty.status_code == 400 and empty.json()["error"]["status"] == "INVALID_ARGUMENT"
    with httpx2.Client(transport=EmulatorTransport(Emulator())) as http:
        wrong = http.get(f"{BASE}:generateContent")
    assert wrong.status_code == 405 and wrong.json()["error"]["status"] == "UNIMPLEMENTED"


@pytest.mark.parametrize("method", ["generateContent", "streamGenerateContent?alt=sse"])
def test_the_truncate_fault_cuts_a_gemini_reply(method: str) -> None:
    emulator = Emulator(responder=lambda request, exchange: Reply("one two three four five six seven eight"))
    emulator.inject("truncate")
    response = post(emulator, method, FIRST)
    chunks = sse_chunks(response) if "alt=sse" in method else [response.json()]
    assert chunks[-1]["candidates"][0]["finishReason"] == "MAX_TOKENS"
    assert "".join(p["text"] for c in chunks for p in c["candidates"][0]["content"]["parts"]) == "one two three four"
