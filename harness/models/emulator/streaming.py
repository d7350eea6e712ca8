"""Server-Sent Events as each SDK expects them, built from a finished reply body: Chat Completions chunks
ending in `data: [DONE]` (usage only with `stream_options.include_usage`, as OpenAI does), and Anthropic's
message_start / content_block_* / message_delta / message_stop events."""

from __future__ import annotations

import json
from typing import Any

CHUNK_CHARS = 24  # text per delta: several deltas for any real reply, so clients really assemble a stream


def _pieces(text: str) -> list[str]:
    return [text[i:i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)] or [""]


def _event(data: dict[str, Any], name: str | None = None) -> str:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data)}\n\n"


def openai_stream(body: dict[str, Any], include_usage: bool) -> bytes:
    choice = body["choices"][0]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return _event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in _pieces(choice["message"]["content"] or "")]
    events.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        events.append(_event({**base, "choices": [], "usage": body["usage"]}))
    return ("".join(events) + "data: [DONE]\n\n").encode()


def anthropic_stream(body: dict[str, Any]) -> bytes:
    usage = body["usage"]
    start = {**body, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 0}}
    events = [_event({"type": "message_start", "message": start}, "message_start")]
    for index, block in enumerate(body["content"]):
        events += _block_events(index, block)
    delta = {"stop_reason": body["stop_reason"], "stop_sequence": body.get("stop_sequence")}
    events.append(_event({"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}},
                         "message_delta"))
    events.append(_event({"type": "message_stop"}, "message_stop"))
    return "".join(events).encode()


def _block_events(index: int, block: dict[str, Any]) -> list[str]:
    if block["type"] == "text":
        opened, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
    else:  # a compaction block arrives whole in one delta (its signature covers the whole content)
        opened = {k: v for k, v in block.items() if k not in ("content", "encrypted_content")}
        deltas = [{"type": "compaction_delta", "content": block.get("content"),
                   "encrypted_content": block.get("encrypted_content")}]
    out = [_event({"type": "content_block_start", "index": index, "content_block": opened}, "content_block_start")]
    out += [_event({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta") for d in deltas]
    out.append(_event({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return out
