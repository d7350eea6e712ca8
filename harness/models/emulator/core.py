"""The emulator's request handling: route, apply a queued fault, simulate the prompt cache, answer with the
responder (the builtin model by default), and report usage as the provider would bill it (figures from it
are `modelled`). Wires: Chat Completions (chat.py), Messages (messages.py), Responses (responses.py,
responses_stream.py), Gemini (gemini.py); each streamed or not."""

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
from harness.models.emulator import compaction, gemini, responses
from harness.models.emulator.chat import openai_completion, openai_prompt_tokens, openai_stream, request_from_openai
from harness.models.emulator.limits import RateLimits, window_error
from harness.models.emulator.messages import (anthropic_blocks, anthropic_message, anthropic_stream,
                                              request_from_anthropic)
from harness.models.emulator.body import Bodies
from harness.models.emulator.request_schema import check_request
from harness.models.emulator.resent import Made, Resent
from harness.models.emulator.reply import Exchange, Reply, Responder, exchange
from harness.models.emulator.responses_stream import responses_stream
from harness.models.emulator.wire import content_tokens, error_response, require

JSON = "application/json"
# The models the emulator lists (GET /v1/models); it answers any model name it is sent.
# The wire each route speaks (Exchange.wire); /responses/compact is the Responses wire.
ROUTE_WIRES = {"openai": "openai", "anthropic": "anthropic", "responses": "responses", "compact": "responses",
               "gemini": "gemini"}
LISTED_MODELS = {"openai": ("gpt-5", "gpt-5.6", "gpt-5-mini"),
                 "anthropic": ("claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5")}

@dataclass
class Emulator:
    """One emulated provider endpoint pair; its caches (prompt caches, analysed contexts) are its own."""

    clock: Clock = time.monotonic
    openai_min_cache_tokens: int = 1024
    anthropic_min_cache_tokens: int = 1024
    faults: deque[Fault] = field(default_factory=deque)
    limits: RateLimits | None = None  # requests/tokens per minute: 429s and rate-limit headers (limits.py)
    windows: dict[str, int] | None = None  # model -> window ("*": any model), over the price table's; past it: 400
    responder: Responder | None = None  # who answers model requests (reply.py); None: the builtin, text only

    def __post_init__(self) -> None:
        self.openai_cache = OpenAIPrefixCache(self.clock, self.openai_min_cache_tokens)
        self.anthropic_cache = AnthropicBreakpointCache(self.clock, self.anthropic_min_cache_tokens)
        self.contexts = ContextCache()
        # each request part's tokens, by content: an agent re-sends its whole history on every turn, so each
        # request encodes only its new messages (the counts are the same: parts are encoded one by one)
        self.part_tokens: dict[str, list[int]] = {}
        self.resent = Resent()  # the histories recent requests carried: a request's check looks at its new items
        self.bodies = Bodies()  # a body is parsed from where it stopped being the route's previous one
        self.made = Made()  # what is read from a re-sent item (its message, its prompt text), once
        self.requests: list[dict[str, Any]] = []  # bodies received, for tests
        self._counter = 0
        self._lock = threading.Lock()

    def inject(self, *faults: Fault | str) -> None:
        """Queue faults: each applies to one following request, in order."""
        for fault in faults:
            self.faults.append(Fault(fault) if isinstance(fault, str) else fault)

    def handle(self, method: str, path: str, body: bytes,
               headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        """One HTTP exchange: (status, headers, body). Raises EmulatorTimeout for the timeout fault."""
        where = path.split("?", 1)[0].rstrip("/")
        wire = _wire_of(where, headers or {})
        anthropic = wire == "anthropic"
        try:
            if method == "GET" and where.endswith("/models"):
                return 200, {"content-type": JSON}, json.dumps(_model_list(anthropic)).encode()
            route = _route(method, where)
            wire = ROUTE_WIRES[route]
            fault = self._next_fault()
            if fault and fault.kind == "timeout":
                raise EmulatorTimeout()
            if fault and fault.kind in STATUS_FAULTS:
                raise fault_error(fault)
            payload = check_request(route, self.bodies.parse(route, body), self.resent)
            self._admit(len(body) // 4)
            serial = self._received(payload)
            kind = fault.kind if fault else None
            streamed = gemini.route(where)[1] if route == "gemini" else bool(payload.get("stream"))
            seen = exchange(wire, path, payload, headers, streamed)
            reply = getattr(self, f"_{route}")(payload, serial, kind, seen)
            if kind == "malformed":
                return 200, {"content-type": JSON}, b'{"id": "broken", "choices": [ {'
            status, answer_headers, data = self._answer(route, seen, reply)
            return status, {**answer_headers, **self._limit_headers(anthropic)}, data
        except EmulatorError as err:
            status, headers, payload_bytes = error_response(err, wire)
            return status, {**headers, **self._limit_headers(anthropic)}, payload_bytes

    def _admit(self, tokens: int) -> None:
        """The rate limit: a request past a minute's budget is a 429 with the wait in retry-after."""
        wait = self.limits.admit(self.clock(), tokens) if self.limits is not None else None
        if wait is not None:
            raise EmulatorError(429, "rate_limit_error", "Rate limit reached for requests or tokens per minute",
                                retry_after=round(wait, 3))

    def _limit_headers(self, anthropic: bool) -> dict[str, str]:
        return self.limits.headers(anthropic) if self.limits is not None else {}

    def _check_window(self, model: str, prompt_tokens: int, max_output: int, wire: str) -> None:
        """`max_output` is what the request reserves: 0 when it sets no limit (the prompt alone must fit)."""
        windows = self.windows or {}
        error = window_error(model, prompt_tokens, max_output, wire, windows.get(model, windows.get("*")))
        if error is not None:
            raise error

    def _answer(self, route: str, seen: Exchange, reply: dict) -> tuple[int, dict[str, str], bytes]:
        """The reply as JSON, or as the wire's stream when the request asked for one."""
        headers = {"content-type": JSON, LATENCY_SOURCE_HEADER: "modelled"}
        if not seen.stream:
            return 200, headers, json.dumps(reply).encode()
        kind = "text/event-stream"
        if route == "openai":
            stream = openai_stream(reply, bool((seen.payload.get("stream_options") or {}).get("include_usage")))
        elif route == "anthropic":
            stream = anthropic_stream(reply)
        elif route == "responses":
            stream = responses_stream(reply)
        elif route == "gemini":
            kind, stream = gemini.gemini_stream(reply, "alt=sse" in seen.path.partition("?")[2])
        else:
            raise EmulatorError(400, "invalid_request_error", f"stream=true is not emulated on {route} requests")
        return 200, {**headers, "content-type": kind}, stream

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.popleft() if self.faults else None

    def _received(self, payload: dict[str, Any]) -> int:
        """Keep the body and number the reply."""
        with self._lock:
            self.requests.append(payload)
            self._counter += 1
            return self._counter

    def _openai(self, payload: dict, serial: int, fault: str | None, seen: Exchange) -> dict:
        model = require(payload, "model", str)
        require(payload, "messages", list, nonempty=True)
        asked = payload.get("max_completion_tokens") or payload.get("max_tokens")
        request = request_from_openai(payload, int(asked or 4096), self.made)
        prompt_tokens = openai_prompt_tokens(payload, self.part_tokens, self.made)
        self._check_window(model, len(prompt_tokens), int(asked or 0), "openai")
        cached = self.openai_cache.lookup_and_store(model, prompt_tokens)
        reply = self._reply(request, seen, fault == "truncate")
        return openai_completion(serial, int(self.clock()), model, reply, len(prompt_tokens), cached)

    def _anthropic(self, payload: dict, serial: int, fault: str | None, seen: Exchange) -> dict:
        model = require(payload, "model", str)
        limit = require(payload, "max_tokens", int)
        require(payload, "messages", list, nonempty=True)
        if payload.get("compaction") is not None:
            compaction.check_compaction_request(payload)
        readable = compaction.unfold_blocks(payload)
        request = request_from_anthropic(readable, limit)
        blocks = anthropic_blocks(readable)
        self._check_window(model, sum(b.tokens for b in blocks), limit, "anthropic")
        result = self.anthropic_cache.process(model, blocks)
        if payload.get("compaction") is not None:
            ask = compaction.summary_request(request, payload["compaction"].get("instructions"))
            text = _limited(self._builtin(ask), ask.max_output_tokens, False).text
            return compaction.compaction_message(serial, model, text, result, fault == "drop_compaction")
        reply = self._reply(request, seen, fault == "truncate")
        return anthropic_message(serial, model, reply, result)

    def _responses(self, payload: dict, serial: int, fault: str | None, seen: Exchange) -> dict:
        model = require(payload, "model", str)
        asked = payload.get("max_output_tokens")
        request = responses.request_from_responses(payload, int(asked or 4096), self.made)
        tokens = content_tokens(request, self.part_tokens, self.made)
        self._check_window(model, len(tokens), int(asked or 0), "responses")
        cached = self.openai_cache.lookup_and_store(model, tokens)
        reply = self._reply(request, seen, fault == "truncate")
        if responses.triggered(payload):  # remote compaction: the reply's text leaves only sealed, as one item
            return responses.triggered_body(serial, int(self.clock()), model, compaction.seal(reply.text), len(tokens),
                                            cached, reply.output_tokens)
        return responses.response_body(serial, int(self.clock()), model, reply, len(tokens), cached)

    def _gemini(self, payload: dict, serial: int, fault: str | None, seen: Exchange) -> dict:
        """Gemini generateContent / streamGenerateContent: the model is named in the path."""
        model = gemini.route(seen.path.split("?", 1)[0].rstrip("/"))[0]
        request = gemini.request_from_gemini(payload, model)
        tokens = content_tokens(request, self.part_tokens)
        self._check_window(model, len(tokens), request.max_output_tokens, "gemini")
        reply = self._reply(request, seen, fault == "truncate")
        return gemini.response_body(serial, model, reply, len(tokens))

    def _compact(self, payload: dict, serial: int, fault: str | None, seen: Exchange) -> dict:
        """POST /responses/compact: the builtin writes the compaction; only its sealed form leaves."""
        model = require(payload, "model", str)
        request = responses.request_from_responses(payload, compaction.DEFAULT_BUDGET, self.made)
        tokens = content_tokens(request)
        cached = self.openai_cache.lookup_and_store(model, tokens)
        ask = compaction.summary_request(request, None)
        text = _limited(self._builtin(ask), ask.max_output_tokens, False).text
        items = responses.input_items(payload)
        body = responses.compacted_body(serial, int(self.clock()), items, compaction.seal(text), len(tokens), cached,
                                        _tokens.count(text))
        if fault == "drop_compaction":  # a proxy that translates the call and loses the item
            body["output"] = [o for o in body["output"] if o["type"] != "compaction"]
        return body

    def _reply(self, request: ModelRequest, seen: Exchange, truncate: bool) -> Reply:
        """The responder's answer (the builtin's when there is none), within the output limit."""
        reply = self.responder(request, seen) if self.responder is not None else self._builtin(request)
        return _limited(reply, request.max_output_tokens, truncate)

    def _builtin(self, request: ModelRequest) -> Reply:
        text, finish = respond(request, self.contexts)
        return Reply(text, (), finish)


def _limited(reply: Reply, limit: int, truncate: bool) -> Reply:
    """The truncation fault stops halfway, as a model that ran out of output budget does; a reply over the
    request's max output is cut there. A cut reply makes none of its calls: it never finished writing them."""
    tokens = _tokens.encode(reply.text)
    if truncate:
        return Reply(_tokens.decode(tokens[: max(1, len(tokens) // 2)]), (), "length")
    if len(tokens) > limit:
        return Reply(_tokens.decode(tokens[:limit]), (), "length")
    return reply


def _route(method: str, where: str) -> str:
    """Which handler answers; anything else is a 404 naming the method and path received."""
    found = "gemini" if gemini.route(where) else None
    for suffix, route in (("/responses/compact", "compact"), ("/responses", "responses"),
                          ("/chat/completions", "openai"), ("/messages", "anthropic")):
        found = found or (route if where.endswith(suffix) else None)
    if found is None:
        raise EmulatorError(404, "not_found_error", f"no route for {method} {where}")
    if method != "POST":
        raise EmulatorError(405, "invalid_request_error", f"{method} {where}: this route takes POST")
    return found


def error_reply(path: str, headers: dict[str, str], err: EmulatorError) -> tuple[int, dict[str, str], bytes]:
    """An error answered before or outside `Emulator.handle` (a body that cannot be read, a fault of the
    emulator's own), in the shape of the wire the path and headers name."""
    return error_response(err, _wire_of(path.split("?", 1)[0].rstrip("/"), headers))


def _wire_of(where: str, headers: dict[str, str]) -> str:
    """The wire whose shapes answer (errors included, before any route is known)."""
    names = {k.lower() for k in headers}
    if where.endswith("/messages") or "anthropic-version" in names:
        return "anthropic"
    if gemini.route(where) or "x-goog-api-key" in names:
        return "gemini"
    return "responses" if where.endswith(("/responses", "/responses/compact")) else "openai"


def _model_list(anthropic: bool) -> dict[str, Any]:
    if anthropic:
        data = [{"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"}
                for m in LISTED_MODELS["anthropic"]]
        return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}
    return {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "emulator"}
                                       for m in LISTED_MODELS["openai"]]}

