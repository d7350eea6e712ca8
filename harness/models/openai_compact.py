"""OpenAI Responses compaction through the official SDK: `responses.compact` writes the compaction, and
`responses.create` answers on a context that holds the item (the only way to read it).

Spec `openai-compact:MODEL[@emulator|@URL]`. The compacted output is the user messages followed by one
`compaction` item whose `encrypted_content` only this provider can read; the client keeps each item it
received (byte for byte, from the response body) and sends it back in place of its marker text.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2
import openai as openai_sdk

from harness.models.base import ChatMessage, ModelClient, ModelRequest, ModelResponse, ModelSpec, Usage
from harness.models.compaction_item import CompactionItem, ItemStore, NoCompactionReturned
from harness.models.openai import openai_sdk_client
from harness.models.reply import checked_reply
from harness.models.transport import latency_from, sdk_errors


class OpenAICompactClient(ModelClient):
    provider = "openai"

    def __init__(self, spec: ModelSpec, *, api_key: str, transport: httpx2.BaseTransport, max_retries: int = 2,
                 timeout: float = 600.0):
        self.spec = str(spec)
        self.name = spec.model
        self._http, self._sdk = openai_sdk_client(spec, api_key, transport, max_retries, timeout)
        self.items = ItemStore()

    def compact(self, system: str | None, messages: tuple[ChatMessage, ...],
                instructions: str | None = None) -> tuple[CompactionItem, ModelResponse]:
        """POST /responses/compact. The session's system prompt goes as `instructions` (the API's system
        message); the compaction prompt is the provider's own, so the harness's `instructions` are unused."""
        started = time.perf_counter()
        params: dict[str, Any] = {"model": self.name, "input": self._input(messages)}
        if system:
            params["instructions"] = system
        with sdk_errors(self.spec, openai_sdk):
            raw = self._sdk.responses.with_raw_response.compact(**params)
            body = checked_reply(self.spec, raw.http_response)
            raw.parse()  # the SDK's own parsing must accept the body
        latency, source = latency_from(raw.headers, time.perf_counter() - started)
        item = self._item_from(body)
        self.items.add(item)
        response = ModelResponse(item.text(), responses_usage(body.get("usage") or {}), latency,
                                 self.name, "compaction", source, body)  # type: ignore[arg-type]
        return item, response

    def _item_from(self, body: dict[str, Any]) -> CompactionItem:
        output = body.get("output") or []
        found = [o for o in output if isinstance(o, dict) and o.get("type") == "compaction"]
        if not found or not found[-1].get("encrypted_content"):
            raise NoCompactionReturned(f"{self.spec}: the compaction reply holds no compaction item "
                                       f"({len(output)} output item(s)); not compacted")
        kept = tuple(_text_of(o.get("content")) for o in output
                     if isinstance(o, dict) and o.get("type", "message") == "message" and o.get("role") == "user")
        return CompactionItem(self.spec, "openai", found[-1], None, kept)

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        params: dict[str, Any] = {"model": request.model, "input": self._input(request.messages),
                                  "max_output_tokens": request.max_output_tokens, "store": False}
        if request.system:
            params["instructions"] = request.system
        if request.cache_key:
            params["prompt_cache_key"] = request.cache_key
        with sdk_errors(self.spec, openai_sdk):
            raw = self._sdk.responses.with_raw_response.create(**params)
            checked_reply(self.spec, raw.http_response)
            parsed = raw.parse()
        latency, source = latency_from(raw.headers, time.perf_counter() - started)
        data = parsed.model_dump()
        finish = "length" if (data.get("incomplete_details") or {}).get("reason") == "max_output_tokens" else "stop"
        return ModelResponse(parsed.output_text or "", responses_usage(data.get("usage") or {}), latency,
                             data.get("model") or request.model, finish, source, data)  # type: ignore[arg-type]

    def _input(self, messages: tuple[ChatMessage, ...]) -> list[dict[str, Any]]:
        """Responses input items; a message standing for one of this client's items becomes the item."""
        items: list[dict[str, Any]] = []
        for message in messages:
            stored = self.items.find(message.content) if message.role == "user" else None
            if stored is not None:
                items.append(stored.item)
            else:
                items.extend(_items(message))
        return items

    def close(self) -> None:
        self._http.close()


def _items(message: ChatMessage) -> list[dict[str, Any]]:
    if message.role == "tool":
        output = f"[error] {message.content}" if message.is_error else message.content
        return [{"type": "function_call_output", "call_id": message.tool_call_id or "", "output": output}]
    out: list[dict[str, Any]] = []
    if message.content or not message.tool_calls:
        out.append({"role": message.role, "content": message.content})
    out += [{"type": "function_call", "call_id": c.id, "name": c.name,
             "arguments": json.dumps(c.arguments, sort_keys=True)} for c in message.tool_calls]
    return out


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def responses_usage(usage: dict[str, Any]) -> Usage:
    """Responses usage: input_tokens is the whole prompt (PROVIDERS.md); None counts as 0."""
    details = usage.get("input_tokens_details") or {}
    return Usage(usage.get("input_tokens") or 0, details.get("cached_tokens") or 0,
                 details.get("cache_write_tokens") or 0, usage.get("output_tokens") or 0)
