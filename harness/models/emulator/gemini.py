"""The Gemini API wire as the emulator reads and writes it (what Gemini CLI sends with a custom base URL):
`POST /v1beta/models/{model}:generateContent`, and `:streamGenerateContent` (`?alt=sse`: Server-Sent Events,
one response chunk each; without it a JSON array of the chunks).

In: `contents` [{role user|model, parts [{text} | {functionCall {name, args, id?}} | {functionResponse {name,
response, id?}}]}], `systemInstruction` {parts [{text}]}, `tools` [{functionDeclarations [...]}],
`generationConfig.maxOutputTokens`. Thought parts (`thought: true`) are a model's reasoning sent back: left
out. Out: `candidates[0].content.parts` (text, then a functionCall part per call), `finishReason` (STOP, or
MAX_TOKENS for a cut reply; calls finish with STOP too) and `usageMetadata`."""

from __future__ import annotations

import json
import re
from typing import Any

from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.emulator.faults import EmulatorError
from harness.models.emulator.reply import Reply
from harness.models.emulator.streaming import event, pieces
from harness.models.emulator.wire import neutral_tools

PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$")
DEFAULT_MAX_OUTPUT = 65536  # Gemini 2.5's output limit, used when generationConfig sets none


def route(path: str) -> tuple[str, bool] | None:
    """(model, streamed) for a Gemini generate path (query string removed), else None."""
    found = PATH.search(path)
    return (found["model"], found["method"] == "streamGenerateContent") if found else None


def request_from_gemini(payload: dict[str, Any], model: str) -> ModelRequest:
    """The request as provider-neutral messages. Calls without ids get `call-N` in order; a response
    without an id answers the oldest unanswered call of its name."""
    contents = payload.get("contents")
    if not isinstance(contents, list) or not contents:
        raise EmulatorError(400, "invalid_request_error", "contents: field required (a non-empty list)")
    messages: list[ChatMessage] = []
    pending: list[ToolCallSpec] = []
    for content in contents:
        parts = [p for p in (content or {}).get("parts") or [] if isinstance(p, dict) and not p.get("thought")]
        text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str))
        if content.get("role") == "model":
            calls = tuple(_call(p["functionCall"], len(pending) + i) for i, p in enumerate(parts) if "functionCall" in p)
            pending += calls
            messages.append(ChatMessage("assistant", text, calls))
            continue
        for part in parts:
            if "functionResponse" in part:
                messages.append(_answer(part["functionResponse"], pending))
        if text or not any("functionResponse" in p for p in parts):
            messages.append(ChatMessage("user", text))
    system = payload.get("systemInstruction") or {}
    system_text = "\n".join(p.get("text", "") for p in system.get("parts") or [] if isinstance(p, dict))
    config = payload.get("generationConfig") or {}
    limit = config.get("maxOutputTokens") if isinstance(config.get("maxOutputTokens"), int) else DEFAULT_MAX_OUTPUT
    return ModelRequest(model, system_text or None, tuple(messages), limit, tools=neutral_tools(payload.get("tools")))


def _call(call: dict[str, Any], number: int) -> ToolCallSpec:
    args = call.get("args")
    return ToolCallSpec(call.get("id") or f"call-{number}", call.get("name", ""), args if isinstance(args, dict) else {})


def _answer(response: dict[str, Any], pending: list[ToolCallSpec]) -> ChatMessage:
    """A function response as a tool message. Its text: the `output` (or `content`) string when that is the
    whole response (as Gemini CLI sends a shell's output), else the response as JSON."""
    name, call_id = response.get("name", ""), response.get("id")
    match = next((c for c in pending if (c.id == call_id if call_id else c.name == name)), None)
    if match is not None:
        pending.remove(match)
    body = response.get("response")
    if isinstance(body, dict) and len(body) == 1 and isinstance(next(iter(body.values())), str) \
            and next(iter(body)) in ("output", "content"):
        text = next(iter(body.values()))
    else:
        text = json.dumps(body, sort_keys=True)
    return ChatMessage("tool", text, tool_call_id=match.id if match else call_id or name)


def response_body(serial: int, model: str, reply: Reply, prompt: int) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text or not reply.tool_calls else []
    parts += [{"functionCall": {"id": c.id, "name": c.name, "args": c.arguments}} for c in reply.tool_calls]
    output = reply.output_tokens
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "MAX_TOKENS" if reply.stop == "length" else "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": output,
                              "totalTokenCount": prompt + output},
            "modelVersion": model, "responseId": f"emu-{serial}"}


def stream_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The body as stream chunks: text in pieces, the calls together (Gemini sends a call whole), then the
    finish reason and usage on the last chunk."""
    candidate = body["candidates"][0]
    parts = candidate["content"]["parts"]
    texts = [{"text": p} for part in parts if "text" in part for p in pieces(part["text"])]
    calls = [part for part in parts if "functionCall" in part]
    groups = [[t] for t in texts] + ([calls] if calls else [])
    meta = {"modelVersion": body["modelVersion"], "responseId": body["responseId"]}
    chunks = [{"candidates": [{"content": {"role": "model", "parts": group}, "index": 0}], **meta} for group in groups]
    chunks[-1]["candidates"][0]["finishReason"] = candidate["finishReason"]
    chunks[-1]["usageMetadata"] = body["usageMetadata"]
    return chunks


def gemini_stream(body: dict[str, Any], sse: bool) -> tuple[str, bytes]:
    """(content type, bytes) of a streamed reply: SSE data lines, or one JSON array without `alt=sse`."""
    chunks = stream_chunks(body)
    if sse:
        return "text/event-stream", "".join(event(chunk) for chunk in chunks).encode()
    return "application/json", json.dumps(chunks).encode()
