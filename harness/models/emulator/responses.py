"""The OpenAI Responses wire as the emulator reads and writes it: input items -> provider-neutral request
(stateless: the whole history is in `input`; a compaction item is unsealed here, server-side, into the
summary text it carries), and the bodies of `POST /responses` (a message, then a `function_call` item per
call) and `POST /responses/compact`. The streamed form is responses_stream.py."""

from __future__ import annotations

from typing import Any

from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.emulator.compaction import DEFAULT_PROMPT as PROVIDER_PROMPT
from harness.models.emulator.faults import EmulatorError
from harness.models.emulator.reply import Reply, arguments
from harness.models.emulator.resent import Made
from harness.models.emulator.sealing import unseal
from harness.models.emulator.wire import json_object, neutral_tools, text_of

IGNORED_ITEMS = ("reasoning",)  # a runtime's own reasoning summaries sent back: not model input here
TRIGGER = "compaction_trigger"  # on the normal stream: compact now, answered by exactly one compaction item


def input_items(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """`input` as a list of items; a bare string is one user message. Empty input is the API's 400."""
    items = payload.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise EmulatorError(400, "invalid_request_error", "input: field required (a non-empty list of items)")
    return items


def request_from_responses(payload: dict[str, Any], limit: int, made: Made | None = None) -> ModelRequest:
    """Messages (roles user/developer/system/assistant; developer and system text joins `instructions` as
    the system prompt), function calls (consecutive ones are one assistant turn) and their outputs. `made`:
    each item read, and each assistant turn put together, once however many requests re-send it."""
    made = made or Made()
    system = [payload["instructions"]] if payload.get("instructions") else []
    messages: list[ChatMessage] = []
    turn: tuple[dict[str, Any], ...] = ()  # the items of messages[-1]
    for item in input_items(payload):
        read = made.get("read", item, lambda: _read(item))
        if isinstance(read, str):
            system.append(read)
        elif isinstance(read, ToolCallSpec) and messages and messages[-1].role == "assistant":
            last, turn = messages.pop(), (*turn, item)
            messages.append(made.get_group("turn", turn, lambda: ChatMessage("assistant", last.content,
                                                                       (*last.tool_calls, read))))
        elif isinstance(read, ToolCallSpec):
            turn = (item,)
            messages.append(made.get_group("turn", turn, lambda: ChatMessage("assistant", "", (read,))))
        elif read is not None:
            turn = (item,)
            messages.append(read)
    tools = payload.get("tools")
    return ModelRequest(payload.get("model", ""), "\n".join(system) or None, tuple(messages), limit,
                        tools=made.get("tools", tools, lambda: neutral_tools(tools)))


def _read(item: dict[str, Any]) -> ChatMessage | ToolCallSpec | str | None:
    """One input item: a message, a call (joined to the assistant turn before it), system text, or nothing."""
    kind = item.get("type", "message")
    if kind == "compaction":
        return ChatMessage("user", unseal(item.get("encrypted_content")))
    if kind == TRIGGER:  # the provider's own prompt stands where the client asks it to compact
        return ChatMessage("user", PROVIDER_PROMPT)
    if kind == "function_call":
        return ToolCallSpec(item.get("call_id", ""), item.get("name", ""), json_object(item.get("arguments")))
    if kind == "function_call_output":
        return ChatMessage("tool", text_of(item.get("output")), tool_call_id=item.get("call_id"))
    if kind == "message" and item.get("role") in ("developer", "system"):
        return text_of(item.get("content"))
    if kind == "message":
        role = item.get("role")
        return ChatMessage("assistant" if role == "assistant" else "user", text_of(item.get("content")))
    if kind not in IGNORED_ITEMS:
        raise EmulatorError(400, "invalid_request_error", f"input item type {kind!r} is not supported here")
    return None


def triggered(payload: dict[str, Any]) -> bool:
    """The request asks the provider to compact on the normal /responses stream (Codex's remote compaction)."""
    return any(isinstance(item, dict) and item.get("type") == TRIGGER for item in input_items(payload))


def triggered_body(serial: int, created: int, model: str, sealed: str, prompt: int, cached: int, output: int) -> dict:
    """The answer to a compaction trigger: exactly one `compaction` output item, its summary sealed."""
    item = {"type": "compaction", "id": f"cmp_emu_{serial}", "encrypted_content": sealed, "created_by": "emulator"}
    return {"id": f"resp_emu_{serial}", "object": "response", "created_at": created, "model": model,
            "status": "completed", "incomplete_details": None, "output": [item], "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "error": None, "usage": usage(prompt, cached, output)}


def usage(prompt: int, cached: int, output: int) -> dict[str, Any]:
    return {"input_tokens": prompt, "output_tokens": output, "total_tokens": prompt + output,
            "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0}}


def response_body(serial: int, created: int, model: str, reply: Reply, prompt: int, cached: int) -> dict:
    """A message item (unless the reply is calls alone), then a function_call item per call; a cut reply
    is `incomplete` (max_output_tokens)."""
    incomplete = {"reason": "max_output_tokens"} if reply.stop == "length" else None
    output: list[dict[str, Any]] = []
    if reply.text or not reply.tool_calls:
        output.append({"type": "message", "id": f"msg_emu_{serial}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": reply.text, "annotations": []}]})
    output += [{"type": "function_call", "id": f"fc_emu_{serial}_{i}", "call_id": c.id, "name": c.name,
                "arguments": arguments(c), "status": "completed"} for i, c in enumerate(reply.tool_calls)]
    return {
        "id": f"resp_emu_{serial}", "object": "response", "created_at": created, "model": model,
        "status": "incomplete" if incomplete else "completed", "incomplete_details": incomplete,
        "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
        "usage": usage(prompt, cached, reply.output_tokens),
    }


def compacted_body(serial: int, created: int, items: list[dict[str, Any]], sealed: str, prompt: int, cached: int,
                   output: int) -> dict:
    """All user messages of the input, in order, then one compaction item (`CompactedResponse`)."""
    kept = [{"type": "message", "id": f"msg_emu_{serial}_{i}", "role": "user", "status": "completed",
             "content": [{"type": "input_text", "text": text_of(item.get("content"))}]}
            for i, item in enumerate(items)
            if item.get("type", "message") == "message" and item.get("role") == "user"]
    compaction = {"type": "compaction", "id": f"cmp_emu_{serial}", "encrypted_content": sealed,
                  "created_by": "emulator"}
    return {"id": f"resp_emu_{serial}", "object": "response.compaction", "created_at": created,
            "output": [*kept, compaction], "usage": usage(prompt, cached, output)}
