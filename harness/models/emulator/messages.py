"""The Anthropic Messages wire as the emulator reads and writes it: payload -> provider-neutral request, the
payload as cacheable blocks (for the breakpoint cache and usage), and the reply as a body or as events
(message_start, content_block_* with text_delta / input_json_delta / compaction_delta, message_delta,
message_stop), as the anthropic SDK assembles them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from harness.models import _tokens
from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.emulator.cache import AnthropicCacheResult, CacheBlock
from harness.models.emulator.reply import Reply
from harness.models.emulator.streaming import event, pieces
from harness.models.emulator.wire import neutral_tools, text_of

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def request_from_anthropic(payload: dict, limit: int) -> ModelRequest:
    messages: list[ChatMessage] = []
    system = [text_of(payload.get("system"))]
    for message in payload.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        if message.get("role") == "system":  # a mid-conversation system message (Claude Code's environment)
            system.append(text_of(blocks))
            continue
        if message.get("role") == "assistant":
            calls = tuple(ToolCallSpec(b.get("id", ""), b.get("name", ""), b.get("input") or {})
                          for b in blocks if b.get("type") == "tool_use")
            messages.append(ChatMessage("assistant", text_of(blocks), calls))
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                messages.append(ChatMessage("tool", text_of(block.get("content")), tool_call_id=block.get("tool_use_id"),
                                            is_error=bool(block.get("is_error"))))
        text = text_of([b for b in blocks if b.get("type") == "text"])
        if text or not any(b.get("type") == "tool_result" for b in blocks):
            messages.append(ChatMessage("user", text))
    return ModelRequest(payload.get("model", ""), "\n\n".join(t for t in system if t) or None, tuple(messages), limit,
                        tools=neutral_tools(payload.get("tools")))


def anthropic_blocks(payload: dict, memo: dict | None = None) -> list[CacheBlock]:
    """Cacheable units in prefix order: tools, system blocks, message content blocks (token counts
    memoised by content when `memo` is given)."""
    memo = {} if memo is None else memo
    raw: list[dict] = list(payload.get("tools") or [])
    system = payload.get("system")
    raw += [{"type": "text", "text": system}] if isinstance(system, str) else list(system or [])
    for message in payload.get("messages") or []:
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        raw += [{**item, "_role": message.get("role")} for item in items]
    if payload.get("cache_control") and raw:  # top-level automatic caching: a breakpoint on the last block
        raw[-1] = {**raw[-1], "cache_control": payload["cache_control"]}
    return [cache_block(item, memo) for item in raw]


def cache_block(item: dict, memo: dict) -> CacheBlock:
    """One cacheable unit: its content hash (cache_control left out), o200k count and breakpoint TTL."""
    control = item.get("cache_control")
    content = {k: v for k, v in item.items() if k != "cache_control"}
    canonical = json.dumps(content, sort_keys=True)
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    if digest not in memo:
        text = text_of([content]) if content.get("type") in ("text", "tool_result") else canonical
        memo[digest] = _tokens.count(text)
    ttl = (control.get("ttl") or "5m") if isinstance(control, dict) else None
    return CacheBlock(digest, memo[digest], ttl)


def anthropic_message(serial: int, model: str, reply: Reply, cache: AnthropicCacheResult) -> dict:
    """A Messages response body: a text block (unless the reply is calls alone), then a `tool_use` block
    per call; input_tokens is only the uncached rest, as the API reports it."""
    uncached = cache.total_tokens - cache.read_tokens - cache.write_tokens
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text or not reply.tool_calls else []
    content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in reply.tool_calls]
    return {
        "id": f"msg_emu_{serial}", "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": STOP_REASONS[reply.stop], "stop_sequence": None,
        "usage": {"input_tokens": uncached, "output_tokens": reply.output_tokens,
                  "cache_creation_input_tokens": cache.write_tokens,
                  "cache_read_input_tokens": cache.read_tokens,
                  "cache_creation": {"ephemeral_5m_input_tokens": cache.write_tokens - cache.write_1h_tokens,
                                     "ephemeral_1h_input_tokens": cache.write_1h_tokens}},
    }


def anthropic_stream(body: dict[str, Any]) -> bytes:
    usage = body["usage"]
    start = {**body, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 0}}
    events = [event({"type": "message_start", "message": start}, "message_start")]
    for index, block in enumerate(body["content"]):
        events += _block_events(index, block)
    delta = {"stop_reason": body["stop_reason"], "stop_sequence": body.get("stop_sequence")}
    events.append(event({"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}},
                        "message_delta"))
    events.append(event({"type": "message_stop"}, "message_stop"))
    return "".join(events).encode()


def _block_events(index: int, block: dict[str, Any]) -> list[str]:
    if block["type"] == "text":
        opened, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
    elif block["type"] == "tool_use":  # the input arrives as JSON text in pieces, parsed when the block stops
        opened = {**block, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(json.dumps(block["input"]))]
    else:  # a compaction block arrives whole in one delta (its signature covers the whole content)
        opened = {k: v for k, v in block.items() if k not in ("content", "encrypted_content")}
        deltas = [{"type": "compaction_delta", "content": block.get("content"),
                   "encrypted_content": block.get("encrypted_content")}]
    out = [event({"type": "content_block_start", "index": index, "content_block": opened}, "content_block_start")]
    out += [event({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta") for d in deltas]
    out.append(event({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return out
