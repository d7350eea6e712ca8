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
from harness.models.emulator.limits import RateLimits, window_error
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
    limits: RateLimits | None = None  # requests/tokens per minute: 429s and rate-limit headers (limits.py)
    windows: dict[str, int] | None = None  # model -> window, over the price table's; a request past it is a 400

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
            self._admit(len(body) // 4)
            serial = self._received(payload)
            truncate = bool(fault and fault.kind == "truncate")
            reply = self._anthropic(payload, serial, truncate) if anthropic else self._openai(payload, serial, truncate)
            if fault and fault.kind == "malformed":
                return 200, {"content-type": "application/json"}, b'{"id": "broken", "choices": [ {'
            headers = {"content-type": "application/json", LATENCY_SOURCE_HEADER: "modelled", **self._limit_headers(anthropic)}
            return 200, headers, json.dumps(reply).encode()
        except EmulatorError as err:
            status, headers, payload_bytes = error_response(err, anthropic)
            return status, {**headers, **self._limit_headers(anthropic)}, payload_bytes

    def _admit(self, tokens: int) -> None:
        """The rate limit: a request past a minute's budget is a 429 with the wait in retry-after."""
        wait = self.limits.admit(self.clock(), tokens) if self.limits is not None else None
        if wait is not None:
            raise EmulatorError(429, "rate_limit_error", "Rate limit reached for requests or tokens per minute",
                                retry_after=round(wait, 3))

    def _limit_headers(self, anthropic: bool) -> dict[str, str]:
        return self.limits.headers(anthropic) if self.limits is not None else {}

    def _check_window(self, model: str, prompt_tokens: int, max_output: int, anthropic: bool) -> None:
        error = window_error(model, prompt_tokens, max_output, anthropic, (self.windows or {}).get(model))
        if error is not None:
            raise error

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
        self._check_window(model, len(prompt_tokens), int(limit), anthropic=False)
        cached = self.openai_cache.lookup_and_store(model, prompt_tokens)
        text, finish = self._reply(request, truncate)
        return openai_completion(serial, int(self.clock()), model, text, finish, len(prompt_tokens), cached)

    def _anthropic(self, payload: dict, serial: int, truncate: bool) -> dict:
        model = require(payload, "model", str)
        limit = require(payload, "max_tokens", int)
        request = request_from_anthropic(payload, limit)
        blocks = anthropic_blocks(payload)
        self._check_window(model, sum(b.tokens for b in blocks), limit, anthropic=True)
        result = self.anthropic_cache.process(model, blocks)
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
