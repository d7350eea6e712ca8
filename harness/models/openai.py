"""OpenAI Chat Completions through the official SDK, on an injected httpx2 client."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import httpx2

from harness.errors import HarnessError
from harness.models.base import ChatMessage, ModelClient, ModelRequest, ModelResponse, ModelSpec, Usage
from harness.models.transport import latency_from, sdk_errors

if TYPE_CHECKING:
    import openai

OPENAI_BASE_URL = "https://api.openai.com/v1"
EMULATOR_BASE_URL = "http://openai.emulator.invalid/v1"  # never resolved: the emulator transport answers


def openai_sdk():
    """The SDK, imported when a client is made: the request shapes below serve the cost and calibrate studies,
    which never call it and should not pay for its import."""
    import openai

    return openai


def openai_sdk_client(spec: ModelSpec, api_key: str, transport: httpx2.BaseTransport, max_retries: int,
                      timeout: float) -> tuple[httpx2.Client, openai.OpenAI]:
    """The SDK client over our transport (emulator, cassette or network), shared by chat and compaction."""
    base_url = EMULATOR_BASE_URL if spec.emulated else (spec.base_url or OPENAI_BASE_URL)
    http = httpx2.Client(transport=transport, timeout=httpx2.Timeout(timeout, connect=10.0))
    return http, openai_sdk().OpenAI(api_key=api_key, base_url=base_url, http_client=http, max_retries=max_retries,
                                     timeout=httpx2.Timeout(timeout, connect=10.0))


class OpenAIClient(ModelClient):
    def __init__(self, spec: ModelSpec, *, api_key: str, transport: httpx2.BaseTransport, max_retries: int = 2,
                 timeout: float = 600.0):
        self.spec = str(spec)
        self.name = spec.model
        self._http, self._sdk = openai_sdk_client(spec, api_key, transport, max_retries, timeout)

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        with sdk_errors(self.spec, openai_sdk()):
            raw = self._sdk.chat.completions.with_raw_response.create(**chat_params(request))
            completion = raw.parse()
        latency, source = latency_from(raw.headers, time.perf_counter() - started)
        data = completion.model_dump()
        if not data.get("choices"):
            raise HarnessError(f"{self.spec}: response has no choices")
        choice = data["choices"][0]
        return ModelResponse(
            text=(choice.get("message") or {}).get("content") or "",
            usage=usage_from(data.get("usage") or {}),
            latency_s=latency, model=data.get("model") or request.model,
            finish_reason=choice.get("finish_reason") or "unknown", latency_source=source, raw=data,  # type: ignore[arg-type]
        )

    def close(self) -> None:
        self._http.close()


def usage_from(usage: dict[str, Any]) -> Usage:
    """prompt_tokens already includes cached and written tokens (PROVIDERS.md); None counts as 0."""
    details = usage.get("prompt_tokens_details") or {}
    return Usage(
        input_tokens=usage.get("prompt_tokens") or 0,
        cached_input_tokens=details.get("cached_tokens") or 0,
        cache_write_tokens=details.get("cache_write_tokens") or 0,
        output_tokens=usage.get("completion_tokens") or 0,
    )


def chat_params(request: ModelRequest) -> dict[str, Any]:
    """The Chat Completions arguments for a request. OpenAI caches prefixes on its own, so `cache` off
    cannot switch it off here (the cost study bills such requests at the uncached rate instead)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages += [_message(m) for m in request.messages]
    params: dict[str, Any] = {"model": request.model, "messages": messages,
                              "max_completion_tokens": request.max_output_tokens}
    if request.tools:
        params["tools"] = [{"type": "function", "function": {
            "name": t["name"], "description": t.get("description", ""),
            "parameters": t.get("parameters") or {"type": "object", "properties": {}}}} for t in request.tools]
    if request.cache_key:
        params["prompt_cache_key"] = request.cache_key
    return params


def _message(message: ChatMessage) -> dict[str, Any]:
    if message.role == "tool":
        content = f"[error] {message.content}" if message.is_error else message.content
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": content}
    if message.role == "assistant" and message.tool_calls:
        return {"role": "assistant", "content": message.content or None, "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.arguments, sort_keys=True)}}
            for c in message.tool_calls]}
    return {"role": message.role, "content": message.content}
