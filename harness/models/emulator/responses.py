"""The OpenAI Responses wire format as the emulator reads and writes it: input items -> provider-neutral
request (a compaction item is unsealed here, server-side, into the summary text it carries), and the bodies
of `POST /responses` and `POST /responses/compact`."""

from __future__ import annotations

import json
from typing import Any

from harness.models import _tokens
from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.emulator.faults import EmulatorError
from harness.models.emulator.sealing import unseal
from harness.models.emulator.wire import text_of


def input_items(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """`input` as a list of items; a bare string is one user message. Empty input is the API's 400."""
    items = payload.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise EmulatorError(400, "invalid_request_error", "input: field required (a non-empty list of items)")
    return items


def request_from_responses(payload: dict[str, Any], limit: int) -> ModelRequest:
    messages: list[ChatMessage] = []
    for item in input_items(payload):
        kind = item.get("type", "message")
        if kind == "compaction":
            messages.append(ChatMessage("user", unseal(item.get("encrypted_content"))))
        elif kind == "function_call":
            call = ToolCallSpec(item.get("call_id", ""), item.get("name", ""), _arguments(item.get("arguments")))
            if messages and messages[-1].role == "assistant":
                last = messages.pop()
                messages.append(ChatMessage("assistant", last.content, (*last.tool_calls, call)))
            else:
                messages.append(ChatMessage("assistant", "", (call,)))
        elif kind == "function_call_output":
            messages.append(ChatMessage("tool", text_of(item.get("output")), tool_call_id=item.get("call_id")))
        elif kind == "message":
            role = item.get("role")
            messages.append(ChatMessage("assistant" if role == "assistant" else "user", _content(item)))
        else:
            raise EmulatorError(400, "invalid_request_error", f"input item type {kind!r} is not supported here")
    return ModelRequest(payload.get("model", ""), payload.get("instructions") or None, tuple(messages), limit)


def _content(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _arguments(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def prompt_tokens(request: ModelRequest) -> list[int]:
    """The prompt's tokens in order (instructions, then each item's text), for the cache simulation."""
    parts = [request.system or ""] + [f"<|{m.role}|>{m.content}" + "".join(c.name for c in m.tool_calls)
                                       for m in request.messages]
    return _tokens.encode("\n".join(parts))


def usage(prompt: int, cached: int, output: int) -> dict[str, Any]:
    return {"input_tokens": prompt, "output_tokens": output, "total_tokens": prompt + output,
            "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0}}


def response_body(serial: int, created: int, model: str, text: str, finish: str, prompt: int, cached: int) -> dict:
    incomplete = {"reason": "max_output_tokens"} if finish == "length" else None
    return {
        "id": f"resp_emu_{serial}", "object": "response", "created_at": created, "model": model,
        "status": "incomplete" if incomplete else "completed", "incomplete_details": incomplete,
        "output": [{"type": "message", "id": f"msg_emu_{serial}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
        "usage": usage(prompt, cached, _tokens.count(text)),
    }


def compacted_body(serial: int, created: int, items: list[dict[str, Any]], sealed: str, prompt: int, cached: int,
                   output: int) -> dict:
    """All user messages of the input, in order, then one compaction item (`CompactedResponse`)."""
    kept = [{"type": "message", "id": f"msg_emu_{serial}_{i}", "role": "user", "status": "completed",
             "content": [{"type": "input_text", "text": _content(item)}]}
            for i, item in enumerate(items)
            if item.get("type", "message") == "message" and item.get("role") == "user"]
    compaction = {"type": "compaction", "id": f"cmp_emu_{serial}", "encrypted_content": sealed,
                  "created_by": "emulator"}
    return {"id": f"resp_emu_{serial}", "object": "response.compaction", "created_at": created,
            "output": [*kept, compaction], "usage": usage(prompt, cached, output)}
