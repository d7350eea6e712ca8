"""The OpenAI Chat Completions and Anthropic Messages wire formats, as the emulator reads and writes them:
payload -> provider-neutral request, payload -> prompt tokens or cacheable blocks, reply -> response body.

Token counts: o200k for every model. Claude's tokenizer differs (Claude 4.7+ yields about 30% more tokens
for the same text per PROVIDERS.md; the ratio for other Claude models is unverified), so Anthropic figures
are an approximation of the real counts.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from harness.models import _tokens
from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.emulator.cache import AnthropicCacheResult, CacheBlock
from harness.models.emulator.faults import EmulatorError


def require(payload: dict, key: str, kind: type, nonempty: bool = False) -> Any:
    value = payload.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) or (nonempty and not value):
        raise EmulatorError(400, "invalid_request_error",
                            f"{key}: field required ({'a non-empty ' if nonempty else ''}{kind.__name__})")
    return value


def error_response(err: EmulatorError, anthropic: bool) -> tuple[int, dict[str, str], bytes]:
    if anthropic:
        error: dict[str, Any] = {"type": err.kind, "message": err.message}
        if err.code:
            error["details"] = {"error_code": err.code}
        body = {"type": "error", "error": error}
    else:
        body = {"error": {"message": err.message, "type": err.kind, "param": err.param, "code": err.code}}
    headers = {"content-type": "application/json"}
    if err.retry_after is not None:
        headers["retry-after"] = f"{err.retry_after:g}"
    elif err.status in (429, 500, 529):
        headers["x-should-retry"] = "true"
    return err.status, headers, json.dumps(body).encode()


def text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, dict):
            if block.get("type") == "text":
                parts.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                parts.append(text_of(block.get("content")))
        else:
            parts.append(str(block))
    return "\n".join(parts)


def request_from_openai(payload: dict, limit: int) -> ModelRequest:
    system_parts: list[str] = []
    messages: list[ChatMessage] = []
    for message in payload.get("messages") or []:
        role = message.get("role")
        text = text_of(message.get("content"))
        if role in ("system", "developer"):
            system_parts.append(text)
        elif role == "assistant":
            calls = tuple(
                ToolCallSpec(c.get("id", ""), c.get("function", {}).get("name", ""),
                             _json_object(c.get("function", {}).get("arguments")))
                for c in message.get("tool_calls") or [])
            messages.append(ChatMessage("assistant", text, calls))
        elif role == "tool":
            messages.append(ChatMessage("tool", text, tool_call_id=message.get("tool_call_id")))
        else:
            messages.append(ChatMessage("user", text))
    return ModelRequest(payload.get("model", ""), "\n".join(system_parts) or None, tuple(messages), limit)


def request_from_anthropic(payload: dict, limit: int) -> ModelRequest:
    messages: list[ChatMessage] = []
    for message in payload.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
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
    return ModelRequest(payload.get("model", ""), text_of(payload.get("system")) or None, tuple(messages), limit)


def _json_object(text: Any) -> dict:
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def openai_prompt_tokens(payload: dict, memo: dict | None = None) -> list[int]:
    """The prompt's tokens in wire order: tools, then each message as `<|role|>content` plus its calls.
    Parts are encoded one by one (memoised when `memo` is given, as the cost study replays many
    requests sharing a prefix); a part boundary may differ from a whole-prompt encoding by a token."""
    parts = [json.dumps(t, sort_keys=True) for t in payload.get("tools") or []]
    parts += [openai_part(message) for message in payload.get("messages") or []]
    tokens: list[int] = []
    for i, part in enumerate(parts):
        text = part if i == 0 else "\n" + part
        if memo is None:
            tokens += _tokens.encode(text)
            continue
        key = "o:" + hashlib.sha256(text.encode()).hexdigest()
        if key not in memo:
            memo[key] = _tokens.encode(text)
        tokens += memo[key]
    return tokens


def openai_part(message: dict) -> str:
    """One wire message as the prompt text it adds: `<|role|>content` plus its calls as JSON."""
    calls = json.dumps(message.get("tool_calls"), sort_keys=True) if message.get("tool_calls") else ""
    return f"<|{message.get('role')}|>{text_of(message.get('content'))}{calls}"


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


def openai_completion(serial: int, created: int, model: str, text: str, finish: str, prompt_tokens: int,
                      cached_tokens: int) -> dict:
    """A Chat Completions response body; cache writes cost nothing extra on OpenAI, so none are reported."""
    output = _tokens.count(text)
    return {
        "id": f"chatcmpl-emu-{serial}", "object": "chat.completion", "created": created,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                     "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": output,
                  "total_tokens": prompt_tokens + output,
                  "prompt_tokens_details": {"cached_tokens": cached_tokens, "cache_write_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0}},
    }


def anthropic_message(serial: int, model: str, text: str, finish: str, cache: AnthropicCacheResult) -> dict:
    """A Messages response body; input_tokens is only the uncached rest, as the API reports it."""
    uncached = cache.total_tokens - cache.read_tokens - cache.write_tokens
    return {
        "id": f"msg_emu_{serial}", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "max_tokens" if finish == "length" else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": uncached, "output_tokens": _tokens.count(text),
                  "cache_creation_input_tokens": cache.write_tokens,
                  "cache_read_input_tokens": cache.read_tokens,
                  "cache_creation": {"ephemeral_5m_input_tokens": cache.write_tokens - cache.write_1h_tokens,
                                     "ephemeral_1h_input_tokens": cache.write_1h_tokens}},
    }
