"""Usage on every wire is the harness's token count over the request's content (not JSON bytes), so a
runtime's trigger sees its context grow as with a real provider; the declared window is enforced on every
wire with that provider's own error."""

from __future__ import annotations

import json

import httpx2
import pytest

from harness.models import _tokens
from harness.models.emulator import Emulator, EmulatorTransport

# A tool output whose JSON form is much longer than its text (quotes, backslashes, newlines escaped).
OUTPUT = "".join(f'line {i}: "path\\to\\file_{i}.py"\n\t{{"key": "value {i}"}}\n' for i in range(120))
CALL = {"id": "call_1", "name": "bash", "arguments": '{"command": "cat notes.txt"}'}


def chat(output: str) -> tuple[str, dict]:
    return "/v1/chat/completions", {"model": "m", "messages": [
        {"role": "user", "content": "Read it."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": CALL["id"], "type": "function", "function": {"name": CALL["name"], "arguments": CALL["arguments"]}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": output}]}


def messages(output: str) -> tuple[str, dict]:
    return "/v1/messages", {"model": "m", "max_tokens": 100, "messages": [
        {"role": "user", "content": "Read it."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "bash",
                                           "input": {"command": "cat notes.txt"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": output}]}]}


def responses(output: str) -> tuple[str, dict]:
    return "/v1/responses", {"model": "m", "input": [
        {"role": "user", "content": "Read it."},
        {"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": CALL["arguments"]},
        {"type": "function_call_output", "call_id": "call_1", "output": output}]}


def gemini(output: str) -> tuple[str, dict]:
    return "/v1beta/models/m:generateContent", {"contents": [
        {"role": "user", "parts": [{"text": "Read it."}]},
        {"role": "model", "parts": [{"functionCall": {"name": "bash", "args": {"command": "cat notes.txt"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "bash", "response": {"output": output}}}]}]}


def prompt_tokens(body: dict) -> int:
    usage = body.get("usage") or {}
    if "usageMetadata" in body:
        return body["usageMetadata"]["promptTokenCount"]
    if "prompt_tokens" in usage:
        return usage["prompt_tokens"]
    if "cache_read_input_tokens" in usage:  # Messages: the uncached rest plus the cache's parts
        return usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
    return usage["input_tokens"]


def send(emulator: Emulator, path: str, payload: dict) -> httpx2.Response:
    with httpx2.Client(transport=EmulatorTransport(emulator)) as http:
        return http.post(f"http://e.invalid{path}", json=payload)


@pytest.mark.parametrize("wire", [chat, messages, responses, gemini])
def test_usage_grows_by_the_tokens_of_the_content_not_its_json(wire) -> None:
    emulator = Emulator()
    short = prompt_tokens(send(emulator, *wire("ok")).json())
    long = prompt_tokens(send(emulator, *wire(OUTPUT)).json())
    grown, expected = long - short, _tokens.count(OUTPUT)
    assert abs(grown - expected) <= 3, (grown, expected)
    assert abs(grown - len(json.dumps(OUTPUT)) // 4) > 500  # JSON bytes / 4 would have said something else


@pytest.mark.parametrize("wire, status, field, wording", [
    (chat, 400, ("error", "code"), "context_length_exceeded"),
    (responses, 400, ("error", "code"), "context_length_exceeded"),
    (messages, 400, ("error", "message"), "prompt is too long: "),
    (gemini, 400, ("error", "status"), "INVALID_ARGUMENT"),
])
def test_the_window_is_enforced_on_every_wire(wire, status, field, wording) -> None:
    path, payload = wire(OUTPUT)
    refused = send(Emulator(windows={"*": 200}), path, payload)
    outer, inner = field
    assert refused.status_code == status and refused.json()[outer][inner].startswith(wording)
    assert send(Emulator(windows={"*": 200, "m": 100_000}), path, payload).status_code == 200  # the model's own wins


def test_the_window_errors_name_the_counts() -> None:
    path, payload = gemini(OUTPUT)
    message = send(Emulator(windows={"m": 200}), path, payload).json()["error"]["message"]
    assert message.startswith("The input token count (") and message.endswith("exceeds the maximum number of "
                                                                               "tokens allowed (200).")
    path, payload = responses(OUTPUT)
    error = send(Emulator(windows={"m": 200}), path, payload).json()["error"]
    assert (error["param"], error["type"]) == ("input", "invalid_request_error")


def test_serve_takes_windows_and_refuses_a_bad_one(capsys) -> None:
    from harness.cli import build_parser, main

    args = build_parser().parse_args(["serve", "--window", "32768", "--window", "stub-model=16000"])
    assert dict(args.window) == {"*": 32768, "stub-model": 16000}
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--window", "stub-model=lots"])
    assert exit_.value.code == 2
    assert "expected N or MODEL=N with N a positive token count, not 'stub-model=lots'" in capsys.readouterr().err


@pytest.mark.parametrize("wire, limit_field", [(chat, "max_completion_tokens"), (responses, "max_output_tokens")])
def test_only_a_requested_output_limit_counts_against_the_window(wire, limit_field) -> None:
    """Codex sends no max_output_tokens and compacts at 90% of its window: the prompt alone must fit then."""
    path, payload = wire(OUTPUT)
    window = prompt_tokens(send(Emulator(), path, payload).json()) + 10
    assert send(Emulator(windows={"m": window}), path, payload).status_code == 200
    refused = send(Emulator(windows={"m": window}), path, {**payload, limit_field: 4096})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "context_length_exceeded"
