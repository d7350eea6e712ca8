"""Anthropic compaction through the official SDK (beta `compact-2026-09-04`): the explicit request
`messages.create(..., compaction={"type": "summarize", "instructions": ...})` writes one signed `compaction`
block, and later requests send that block first in `messages`, unchanged.

Spec `anthropic-compact:MODEL[@emulator]`. The block's `content` is readable (the harness measures
`retained` on it), but the block as a whole is only valid to this provider, so probes on it are answered
here too. The client keeps each block byte for byte, from the response body, and puts it back in place of
its marker text. The compaction's tokens are in `usage.iterations` (read by `anthropic.usage_from`).
"""

from __future__ import annotations

import time
from typing import Any

import anthropic as anthropic_sdk
import httpx2

from harness.models.anthropic import ANTHROPIC_BASE_URL, EMULATOR_BASE_URL, message_params, usage_from
from harness.models.base import ChatMessage, ModelClient, ModelRequest, ModelResponse, ModelSpec
from harness.models.compaction_item import CompactionItem, ItemStore, NoCompactionReturned
from harness.models.reply import checked_reply
from harness.models.transport import latency_from, sdk_errors

COMPACTION_BETA = "compact-2026-09-04"


class AnthropicCompactClient(ModelClient):
    provider = "anthropic"

    def __init__(self, spec: ModelSpec, *, api_key: str, transport: httpx2.BaseTransport, max_retries: int = 2,
                 timeout: float = 600.0):
        self.spec = str(spec)
        self.name = spec.model
        base_url = EMULATOR_BASE_URL if spec.emulated else (spec.base_url or ANTHROPIC_BASE_URL)
        self._http = httpx2.Client(transport=transport, timeout=httpx2.Timeout(timeout, connect=10.0))
        self._sdk = anthropic_sdk.Anthropic(api_key=api_key, base_url=base_url, http_client=self._http,
                                            max_retries=max_retries, timeout=httpx2.Timeout(timeout, connect=10.0))
        self.items = ItemStore()

    def compact(self, system: str | None, messages: tuple[ChatMessage, ...],
                instructions: str | None = None, max_tokens: int = 4096) -> tuple[CompactionItem, ModelResponse]:
        """The explicit compaction request; `instructions` replace the provider's default prompt."""
        request = ModelRequest(self.name, system, messages, max_tokens, label="compaction")
        params = self._params(request)
        params["compaction"] = {"type": "summarize", **({"instructions": instructions} if instructions else {})}
        body, latency, source = self._send(params)
        item = self._block_from(body)
        self.items.add(item)
        response = ModelResponse(item.text(), usage_from(body.get("usage") or {}), latency, self.name,
                                 body.get("stop_reason") or "unknown", source, body)  # type: ignore[arg-type]
        return item, response

    def _block_from(self, body: dict[str, Any]) -> CompactionItem:
        blocks = [b for b in body.get("content") or [] if isinstance(b, dict) and b.get("type") == "compaction"]
        if not blocks:
            raise NoCompactionReturned(f"{self.spec}: the compaction reply holds no compaction block "
                                       f"(stop_reason {body.get('stop_reason')!r}); not compacted")
        if blocks[0].get("content") is None:
            raise NoCompactionReturned(f"{self.spec}: the compaction block has content null "
                                       "(the provider's compaction failed); not compacted")
        return CompactionItem(self.spec, "anthropic", blocks[0], blocks[0]["content"])

    def complete(self, request: ModelRequest) -> ModelResponse:
        body, latency, source = self._send(self._params(request))
        text = "".join(b.get("text", "") for b in body.get("content") or [] if b.get("type") == "text")
        return ModelResponse(text, usage_from(body.get("usage") or {}), latency, body.get("model") or request.model,
                             body.get("stop_reason") or "unknown", source, body)  # type: ignore[arg-type]

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        """The Messages arguments, with each marker text block replaced by the block it stands for."""
        params = message_params(request)
        for message in params["messages"]:
            message["content"] = [self._restored(block) for block in message["content"]]
        params["betas"] = [COMPACTION_BETA]
        return params

    def _restored(self, block: dict[str, Any]) -> dict[str, Any]:
        stored = self.items.find(block["text"]) if block.get("type") == "text" else None
        if stored is None:
            return block
        restored = dict(stored.item)  # the block as returned; a breakpoint on it is a request-side addition
        if "cache_control" in block:
            restored["cache_control"] = block["cache_control"]
        return restored

    def _send(self, params: dict[str, Any]) -> tuple[dict[str, Any], float, str]:
        started = time.perf_counter()
        with sdk_errors(self.spec, anthropic_sdk):
            raw = self._sdk.beta.messages.with_raw_response.create(**params)
            body = checked_reply(self.spec, raw.http_response)
            raw.parse()  # the SDK's own parsing must accept the body
        latency, source = latency_from(raw.headers, time.perf_counter() - started)
        return body, latency, source

    def close(self) -> None:
        self._http.close()
