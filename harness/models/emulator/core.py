"""The emulator's request handling: route, apply a queued fault, simulate the prompt cache, answer with the
builtin model, and report usage as the provider would bill it (figures from it are `modelled`)."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from harness.models import _tokens
from harness.models.base import LATENCY_SOURCE_HEADER, ModelRequest
from harness.models.builtin import respond
from harness.models.builtin.context import ContextCache
from harness.models.emulator.cache import AnthropicBreakpointCache, Clock, OpenAIPrefixCache
from harness.models.emulator.faults import STATUS_FAULTS, EmulatorError, EmulatorTimeout, Fault, fault_error
from harness.models.emulator.wire import (anthropic_blocks, anthropic_message, error_response, openai_completion,
                                          openai_prompt_tokens, request_from_anthropic, request_from_openai,
                                          require)

@dataclass
class Emulator:
    """One emulated provider endpoint pair; its caches (prompt caches, analysed contexts) are its own."""

    clock: Clock = time.monotonic
    openai_min_cache_tokens: int = 1024
    anthropic_min_cache_tokens: int = 1024
    faults: deque[Fault] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.openai_cache = OpenAIPrefixCache(self.clock, self.openai_min_cache_tokens)
        self.anthropic_cache = AnthropicBreakpointCache(self.clock, self.anthropic_min_cache_tokens)
        self.contexts = ContextCache()
        self.requests: list[dict[str, Any]] = []  # bodies received, for tests
        self._counter = 0
        self._lock = threading.Lock()

    def inject(self, *faults: Fault | str) -> None:
        """Queue faults: each applies to one following request, in order."""
        for fault in faults:
            self.faults.append(Fault(fault) if isinstance(fault, str) else fault)

    def handle(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """One HTTP exchange: (status, headers, body). Raises EmulatorTimeout for the timeout fault."""
        wire = path.split("?", 1)[0].rstrip("/")
        anthropic = wire.endswith("/messages")
        try:
            if method != "POST" or not (anthropic or wire.endswith("/chat/completions")):
                raise EmulatorError(404, "not_found_error", f"no route for {method} {wire}")
            fault = self._next_fault()
            if fault and fault.kind == "timeout":
                raise EmulatorTimeout()
            if fault and fault.kind in STATUS_FAULTS:
                raise fault_error(fault)
            payload = _json_payload(body)
            serial = self._received(payload)
            truncate = bool(fault and fault.kind == "truncate")
            reply = self._anthropic(payload, serial, truncate) if anthropic else self._openai(payload, serial, truncate)
            if fault and fault.kind == "malformed":
                return 200, {"content-type": "application/json"}, b'{"id": "broken", "choices": [ {'
            headers = {"content-type": "application/json", LATENCY_SOURCE_HEADER: "modelled"}
            return 200, headers, json.dumps(reply).encode()
        except EmulatorError as err:
            return error_response(err, anthropic)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.popleft() if self.faults else None

    def _received(self, payload: dict[str, Any]) -> int:
        """Keep the body and number the reply."""
        with self._lock:
            self.requests.append(payload)
            self._counter += 1
            return self._counter

    def _openai(self, payload: dict, serial: int, truncate: bool) -> dict:
        model = require(payload, "model", str)
        limit = payload.get("max_completion_tokens") or payload.get("max_tokens") or 4096
        request = request_from_openai(payload, int(limit))
        prompt_tokens = openai_prompt_tokens(payload)
        cached = self.openai_cache.lookup_and_store(model, prompt_tokens)
        text, finish = self._reply(request, truncate)
        return openai_completion(serial, int(self.clock()), model, text, finish, len(prompt_tokens), cached)

    def _anthropic(self, payload: dict, serial: int, truncate: bool) -> dict:
        model = require(payload, "model", str)
        limit = require(payload, "max_tokens", int)
        request = request_from_anthropic(payload, limit)
        result = self.anthropic_cache.process(model, anthropic_blocks(payload))
        text, finish = self._reply(request, truncate)
        return anthropic_message(serial, model, text, finish, result)

    def _reply(self, request: ModelRequest, truncate: bool) -> tuple[str, str]:
        text, finish = respond(request, self.contexts)
        tokens = _tokens.encode(text)
        if truncate:  # the truncation fault: stop halfway, as a model that ran out of output budget does
            return _tokens.decode(tokens[: max(1, len(tokens) // 2)]), "length"
        if len(tokens) > request.max_output_tokens:
            return _tokens.decode(tokens[: request.max_output_tokens]), "length"
        return text, finish


def _json_payload(body: bytes) -> dict[str, Any]:
    try:
        return json.loads(body or b"{}")
    except json.JSONDecodeError as exc:
        raise EmulatorError(400, "invalid_request_error", f"body is not JSON: {exc}") from None
