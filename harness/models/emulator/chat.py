"""The OpenAI Chat Completions wire as the emulator reads and writes it: payload -> provider-neutral request,
its prompt tokens (for the prefix cache and usage), and the reply as a body or as streamed chunks (text
deltas, then each tool call's id and name, then its arguments in pieces), as the openai SDK assembles them."""

from __future__ import annotations

import json
from typing import Any

from harness.models import _tokens
from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.emulator.reply import Reply, arguments
from harness.models.emulator.resent import Made
from harness.models.emulator.streaming import event, pieces
from harness.models.emulator.wire import encoded, json_object, neutral_tools, text_of, tool_parts


def request_from_openai(payload: dict, limit: int, made: Made | None = None) -> ModelRequest:
    """`made`: each message read once, however many requests re-send it (resent.py)."""
    made = made or Made()
    system_parts: list[str] = []
    messages: list[ChatMessage] = []
    for message in payload.get("messages") or []:
        read = made.get("read", message, lambda: _read(message))
        (system_parts if isinstance(read, str) else messages).append(read)
    tools = payload.get("tools")
    return ModelRequest(payload.get("model", ""), "\n".join(system_parts) or None, tuple(messages), limit,
                        tools=made.get("tools", tools, lambda: neutral_tools(tools)))


def _read(message: dict) -> ChatMessage | str:
    """A wire message as a neutral one, or a system message's text."""
    role = message.get("role")
    text = text_of(message.get("content"))
    if role in ("system", "developer"):
        return text
    if role == "assistant":
        calls = tuple(ToolCallSpec(c.get("id", ""), c.get("function", {}).get("name", ""),
                                   json_object(c.get("function", {}).get("arguments")))
                      for c in message.get("tool_calls") or [])
        return ChatMessage("assistant", text, calls)
    if role == "tool":
        return ChatMessage("tool", text, tool_call_id=message.get("tool_call_id"))
    return ChatMessage("user", text)


def openai_prompt_tokens(payload: dict, memo: dict | None = None, made: Made | None = None) -> list[int]:
    """The prompt's tokens in wire order: tools, then each message as `<|role|>content` plus its calls.
    Parts are encoded one by one (memoised when `memo` is given, as the cost study replays many
    requests sharing a prefix); a part boundary may differ from a whole-prompt encoding by a token. `made`:
    each part's text made once per object it is made from (a re-sent message is the same object)."""
    made = made or Made()
    parts = tool_parts(payload.get("tools"), made)
    for message in payload.get("messages") or []:
        first = not parts  # each part after the first begins with a new line
        parts.append(made.get("first-part" if first else "part", message,
                              lambda: ("" if first else "\n") + openai_part(message)))
    if memo is None:  # still part by part, as the memoised count
        return [token for text in parts for token in _tokens.encode(text)]
    return encoded(parts, memo)


def openai_part(message: dict) -> str:
    """One wire message as the prompt text it adds: `<|role|>content` plus its calls as JSON."""
    calls = json.dumps(message.get("tool_calls"), sort_keys=True) if message.get("tool_calls") else ""
    return f"<|{message.get('role')}|>{text_of(message.get('content'))}{calls}"


def openai_completion(serial: int, created: int, model: str, reply: Reply, prompt_tokens: int,
                      cached_tokens: int) -> dict:
    """A Chat Completions response body; cache writes cost nothing extra on OpenAI, so none are reported.
    A reply with calls carries `tool_calls` (content null when it has no text), finish `tool_calls`."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
    if reply.tool_calls:
        message["content"] = reply.text or None
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": arguments(c)}} for c in reply.tool_calls]
    output = reply.output_tokens
    return {
        "id": f"chatcmpl-emu-{serial}", "object": "chat.completion", "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.stop, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": output,
                  "total_tokens": prompt_tokens + output,
                  "prompt_tokens_details": {"cached_tokens": cached_tokens, "cache_write_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0}},
    }


def openai_stream(body: dict[str, Any], include_usage: bool) -> bytes:
    """Chunks ending in `data: [DONE]`; usage only with `stream_options.include_usage`, as OpenAI does."""
    choice = body["choices"][0]
    message = choice["message"]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    calls = message.get("tool_calls") or []
    events = [chunk({"role": "assistant", "content": ""})]
    if message["content"] or not calls:
        events += [chunk({"content": piece}) for piece in pieces(message["content"] or "")]
    for index, call in enumerate(calls):
        opened = {"index": index, "id": call["id"], "type": "function",
                  "function": {"name": call["function"]["name"], "arguments": ""}}
        events.append(chunk({"tool_calls": [opened]}))
        events += [chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                   for piece in pieces(call["function"]["arguments"])]
    events.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        events.append(event({**base, "choices": [], "usage": body["usage"]}))
    return ("".join(events) + "data: [DONE]\n\n").encode()
