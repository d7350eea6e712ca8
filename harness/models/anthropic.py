"""Anthropic Messages through the official SDK, on an injected httpx2 client, with explicit cache breakpoints."""

from __future__ import annotations

import time
from typing import Any

import httpx2

from harness.models.base import ChatMessage, ModelClient, ModelRequest, ModelResponse, ModelSpec, Usage
from harness.models.transport import latency_from, sdk_errors

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
EMULATOR_BASE_URL = "http://anthropic.emulator.invalid"  # never resolved: the emulator transport answers
EPHEMERAL = {"type": "ephemeral"}


def anthropic_sdk():
    """The SDK, imported when a client is made: the request shapes below serve the cost and calibrate studies,
    which never call it and should not pay for its import (a third of `calibrate`'s time)."""
    import anthropic

    return anthropic


class AnthropicClient(ModelClient):
    def __init__(self, spec: ModelSpec, *, api_key: str, transport: httpx2.BaseTransport, max_retries: int = 2,
                 timeout: float = 600.0):
        self.spec = str(spec)
        self.name = spec.model
        base_url = EMULATOR_BASE_URL if spec.emulated else ANTHROPIC_BASE_URL
        # An explicit timeout also lifts the SDK's refusal of max_tokens > 21333 on non-streaming calls.
        self._http = httpx2.Client(transport=transport, timeout=httpx2.Timeout(timeout, connect=10.0))
        self._sdk = anthropic_sdk().Anthropic(api_key=api_key, base_url=base_url, http_client=self._http,
                                              max_retries=max_retries, timeout=httpx2.Timeout(timeout, connect=10.0))

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        with sdk_errors(self.spec, anthropic_sdk()):
            raw = self._sdk.messages.with_raw_response.create(**message_params(request))
            message = raw.parse()
        latency, source = latency_from(raw.headers, time.perf_counter() - started)
        data = message.model_dump()
        text = "".join(block.get("text", "") for block in data.get("content") or [] if block.get("type") == "text")
        return ModelResponse(
            text=text, usage=usage_from(data.get("usage") or {}), latency_s=latency,
            model=data.get("model") or request.model, finish_reason=data.get("stop_reason") or "unknown",
            latency_source=source, raw=data,  # type: ignore[arg-type]
        )

    def close(self) -> None:
        self._http.close()


def usage_from(usage: dict[str, Any]) -> Usage:
    """Anthropic's input_tokens is only the uncached rest: the whole prompt adds reads and writes. A server-side
    compaction bills its own tokens in `iterations` entries of type `compaction`, which the top-level fields
    leave out (PROVIDERS.md): they are added here. The sum is what was billed, never a window size."""
    total = _billed(usage)
    for entry in usage.get("iterations") or ():
        if isinstance(entry, dict) and entry.get("type") == "compaction":
            total = total + _billed(entry)
    return total


def _billed(usage: dict[str, Any]) -> Usage:
    read = usage.get("cache_read_input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    return Usage(
        input_tokens=(usage.get("input_tokens") or 0) + read + written,
        cached_input_tokens=read, cache_write_tokens=written, output_tokens=usage.get("output_tokens") or 0,
    )


def message_params(request: ModelRequest) -> dict[str, Any]:
    messages, last_block_of = _wire_messages(request.messages)
    params: dict[str, Any] = {"model": request.model, "max_tokens": request.max_output_tokens, "messages": messages}
    tools = [{"name": t["name"], "description": t.get("description", ""),
              "input_schema": t.get("parameters") or {"type": "object", "properties": {}}} for t in request.tools]
    if tools:
        params["tools"] = tools
    if request.system:
        params["system"] = [{"type": "text", "text": request.system}]
    if request.cache:
        _place_breakpoints(params, request, last_block_of)
    return params


def _place_breakpoints(params: dict[str, Any], request: ModelRequest, last_block_of: list[tuple[int, int]]) -> None:
    """One breakpoint closing tools+system, one on the last message of the shared prefix (the last message
    when the prefix length is not given). Two of the four allowed."""
    control = {**EPHEMERAL, "ttl": request.cache_ttl} if request.cache_ttl else dict(EPHEMERAL)
    if "system" in params:  # the prefix is tools -> system -> messages: this closes both
        params["system"][-1]["cache_control"] = dict(control)
    elif "tools" in params:
        params["tools"][-1]["cache_control"] = dict(control)
    shared = len(request.messages) if request.cache_prefix_messages is None else request.cache_prefix_messages
    shared = min(shared, len(request.messages))
    if shared > 0:
        wire_index, block_index = last_block_of[shared - 1]
        params["messages"][wire_index]["content"][block_index]["cache_control"] = dict(control)


def _wire_messages(messages: tuple[ChatMessage, ...]) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """Messages API turns, consecutive same-role turns merged (tool results travel as user turns), and for
    every input message the (turn, block) position of its last block, for breakpoint placement."""
    wire: list[dict[str, Any]] = []
    positions: list[tuple[int, int]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
        positions.append((len(wire) - 1, len(wire[-1]["content"]) - 1))
    return wire, positions


def message_blocks(message: ChatMessage) -> list[dict[str, Any]]:
    """One message's content blocks as the Messages API gets them (the cost study digests them once)."""
    return _blocks(message)


def _blocks(message: ChatMessage) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id or "",
                 "content": message.content or "(empty)", "is_error": message.is_error}]
    blocks: list[dict[str, Any]] = []
    if message.content.strip():  # the API rejects empty text blocks
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    return blocks or [{"type": "text", "text": "(empty)"}]
