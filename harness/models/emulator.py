"""A wire-format emulator of OpenAI Chat Completions and Anthropic Messages, backed by the builtin model.

Its prompt-cache simulator applies each provider's documented rules (shared/PROVIDERS.md), so the usage it
reports is what that provider would bill for the same request sequence; figures from it are `modelled`.
Use it in-process as an httpx2 transport (`EmulatorTransport`) or on loopback with `serve(port)`.

Token counts: o200k for every model. Claude's tokenizer differs (Claude 4.7+ yields about 30% more tokens
for the same text per PROVIDERS.md; the ratio for other Claude models is unverified), so Anthropic figures
are an approximation of the real counts.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import httpx2

from harness.models import _tokens
from harness.models.base import LATENCY_SOURCE_HEADER, ChatMessage, ModelRequest, ToolCallSpec
from harness.models.builtin import respond

Clock = Callable[[], float]
FAULT_KINDS = ("429", "500", "529", "400", "401", "timeout", "malformed", "truncate")


# ---------------------------------------------------------------- cache simulators


class OpenAIPrefixCache:
    """Automatic prefix caching (gpt-4o and newer): prompts of `min_tokens` or more hit in `step`-token
    increments on the longest prefix seen before for the same model; writes cost nothing extra.

    Models from gpt-5.6 on use explicit breakpoints without the 128 rounding and bill writes at 1.25x;
    that mode is not simulated here (omitted, the wire details are unverified).
    """

    def __init__(self, clock: Clock = time.monotonic, min_tokens: int = 1024, step: int = 128,
                 retention_s: float = 600.0):
        self.clock, self.min_tokens, self.step, self.retention_s = clock, min_tokens, step, retention_s
        self._seen: dict[str, float] = {}  # prefix hash at a step boundary -> expiry
        self._lock = threading.Lock()

    def lookup_and_store(self, namespace: str, tokens: list[int]) -> int:
        """Cached tokens for this prompt; then remember its prefixes for later requests."""
        if len(tokens) < self.min_tokens:
            return 0
        now = self.clock()
        first = -(-self.min_tokens // self.step) * self.step  # the first step boundary at or above the minimum
        boundaries = range(first, len(tokens) + 1, self.step)
        hashes = _prefix_hashes(namespace, tokens, list(boundaries))
        with self._lock:
            cached = 0
            for length, digest in hashes:
                expiry = self._seen.get(digest)
                if expiry is not None and expiry > now and length >= self.min_tokens:
                    cached = length
            for _, digest in hashes:
                self._seen[digest] = now + self.retention_s
        return cached


def _prefix_hashes(namespace: str, tokens: list[int], lengths: list[int]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    running = hashlib.sha256(namespace.encode())
    done = 0
    for length in lengths:
        running.update(b"".join(t.to_bytes(4, "little") for t in tokens[done:length]))
        done = length
        out.append((length, running.copy().hexdigest()))
    return out


@dataclass(frozen=True)
class CacheBlock:
    """One cacheable unit of an Anthropic prompt (a tool, a system block, a message content block)."""

    digest: str  # content hash of this block alone (cache_control excluded)
    tokens: int
    breakpoint_ttl: str | None = None  # "5m" | "1h" when the block carries cache_control


@dataclass(frozen=True)
class AnthropicCacheResult:
    read_tokens: int
    write_tokens: int
    write_1h_tokens: int
    total_tokens: int


TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


class AnthropicBreakpointCache:
    """Explicit breakpoints: at most `max_breakpoints`, each checking its own prefix and up to `lookback`
    earlier block boundaries for an entry; entries are written at breakpoints only, live for their TTL
    (refreshed on a hit), and nothing is cached below `min_tokens` (silently, as the API does)."""

    def __init__(self, clock: Clock = time.monotonic, min_tokens: int = 1024, lookback: int = 20,
                 max_breakpoints: int = 4):
        self.clock, self.min_tokens, self.lookback, self.max_breakpoints = clock, min_tokens, lookback, max_breakpoints
        self._entries: dict[str, tuple[float, str]] = {}  # prefix hash -> (expiry, ttl)
        self._lock = threading.Lock()

    def process(self, namespace: str, blocks: list[CacheBlock]) -> AnthropicCacheResult:
        breakpoints = [i for i, b in enumerate(blocks) if b.breakpoint_ttl]
        if len(breakpoints) > self.max_breakpoints:
            raise EmulatorError(400, "invalid_request_error",
                                f"A maximum of {self.max_breakpoints} blocks with cache_control may be provided. "
                                f"Found {len(breakpoints)}.")
        prefix_tokens, prefix_hashes = [], []
        running, total = hashlib.sha256(namespace.encode()), 0
        for block in blocks:
            running.update(block.digest.encode())
            total += block.tokens
            prefix_tokens.append(total)
            prefix_hashes.append(running.copy().hexdigest())
        now = self.clock()
        read_upto = 0  # number of blocks served from cache
        with self._lock:
            for bp in breakpoints:
                for position in range(bp, max(-1, bp - self.lookback - 1), -1):
                    entry = self._entries.get(prefix_hashes[position])
                    if entry and entry[0] > now:
                        self._entries[prefix_hashes[position]] = (now + TTL_SECONDS[entry[1]], entry[1])
                        read_upto = max(read_upto, position + 1)
                        break
            read = prefix_tokens[read_upto - 1] if read_upto else 0
            write = write_1h = 0
            covered = read
            for bp in breakpoints:
                ttl = blocks[bp].breakpoint_ttl or "5m"
                if prefix_tokens[bp] < self.min_tokens:
                    continue
                if bp + 1 > read_upto:
                    added = prefix_tokens[bp] - covered
                    if added > 0:
                        write += added
                        write_1h += added if ttl == "1h" else 0
                        covered = prefix_tokens[bp]
                    self._entries[prefix_hashes[bp]] = (now + TTL_SECONDS.get(ttl, 300.0), ttl)
        return AnthropicCacheResult(read, write, write_1h, total)


# ---------------------------------------------------------------- faults


@dataclass(frozen=True)
class Fault:
    kind: str  # one of FAULT_KINDS
    retry_after: float | None = None  # seconds, sent as retry-after for 429/5xx


class EmulatorError(Exception):
    def __init__(self, status: int, kind: str, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.status, self.kind, self.message, self.retry_after = status, kind, message, retry_after


class EmulatorTimeout(Exception):
    """The emulator 'hangs': the transport raises a read timeout, the server drops the connection."""


# ---------------------------------------------------------------- the emulator


@dataclass
class Emulator:
    clock: Clock = time.monotonic
    openai_min_cache_tokens: int = 1024
    anthropic_min_cache_tokens: int = 1024
    faults: deque[Fault] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.openai_cache = OpenAIPrefixCache(self.clock, self.openai_min_cache_tokens)
        self.anthropic_cache = AnthropicBreakpointCache(self.clock, self.anthropic_min_cache_tokens)
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
            if fault and fault.kind in ("429", "500", "529", "400", "401"):
                raise _fault_error(fault)
            try:
                payload = json.loads(body or b"{}")
            except json.JSONDecodeError as exc:
                raise EmulatorError(400, "invalid_request_error", f"body is not JSON: {exc}") from None
            with self._lock:
                self.requests.append(payload)
                self._counter += 1
                serial = self._counter
            truncate = bool(fault and fault.kind == "truncate")
            reply = self._anthropic(payload, serial, truncate) if anthropic else self._openai(payload, serial, truncate)
            if fault and fault.kind == "malformed":
                return 200, {"content-type": "application/json"}, b'{"id": "broken", "choices": [ {'
            headers = {"content-type": "application/json", LATENCY_SOURCE_HEADER: "modelled"}
            return 200, headers, json.dumps(reply).encode()
        except EmulatorError as err:
            return _error_response(err, anthropic)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.popleft() if self.faults else None

    # -- OpenAI Chat Completions

    def _openai(self, payload: dict, serial: int, truncate: bool) -> dict:
        model = _require(payload, "model", str)
        limit = payload.get("max_completion_tokens") or payload.get("max_tokens") or 4096
        request = _request_from_openai(payload, int(limit))
        prompt_tokens = openai_prompt_tokens(payload)
        cached = self.openai_cache.lookup_and_store(model, prompt_tokens)
        text, finish = _reply(request, truncate)
        output = _tokens.count(text)
        return {
            "id": f"chatcmpl-emu-{serial}", "object": "chat.completion", "created": int(self.clock()),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                         "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": len(prompt_tokens), "completion_tokens": output,
                      "total_tokens": len(prompt_tokens) + output,
                      "prompt_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 0}},
        }

    # -- Anthropic Messages

    def _anthropic(self, payload: dict, serial: int, truncate: bool) -> dict:
        model = _require(payload, "model", str)
        limit = _require(payload, "max_tokens", int)
        request = _request_from_anthropic(payload, limit)
        blocks = anthropic_blocks(payload)
        result = self.anthropic_cache.process(model, blocks)
        text, finish = _reply(request, truncate)
        uncached = result.total_tokens - result.read_tokens - result.write_tokens
        return {
            "id": f"msg_emu_{serial}", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "max_tokens" if finish == "length" else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": uncached, "output_tokens": _tokens.count(text),
                      "cache_creation_input_tokens": result.write_tokens,
                      "cache_read_input_tokens": result.read_tokens,
                      "cache_creation": {"ephemeral_5m_input_tokens": result.write_tokens - result.write_1h_tokens,
                                         "ephemeral_1h_input_tokens": result.write_1h_tokens}},
        }


def _reply(request: ModelRequest, truncate: bool) -> tuple[str, str]:
    text, finish = respond(request)
    tokens = _tokens.encode(text)
    if truncate:  # the truncation fault: stop halfway, as a model that ran out of output budget does
        return _tokens.decode(tokens[: max(1, len(tokens) // 2)]), "length"
    if len(tokens) > request.max_output_tokens:
        return _tokens.decode(tokens[: request.max_output_tokens]), "length"
    return text, finish


def _require(payload: dict, key: str, kind: type) -> Any:
    value = payload.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise EmulatorError(400, "invalid_request_error", f"{key}: field required ({kind.__name__})")
    return value


def _fault_error(fault: Fault) -> EmulatorError:
    kinds = {"429": (429, "rate_limit_error", "Rate limited (injected)"),
             "500": (500, "api_error", "Internal server error (injected)"),
             "529": (529, "overloaded_error", "Overloaded (injected)"),
             "400": (400, "invalid_request_error", "Bad request (injected)"),
             "401": (401, "authentication_error", "invalid x-api-key (injected)")}
    status, kind, message = kinds[fault.kind]
    return EmulatorError(status, kind, message, fault.retry_after)


def _error_response(err: EmulatorError, anthropic: bool) -> tuple[int, dict[str, str], bytes]:
    if anthropic:
        body = {"type": "error", "error": {"type": err.kind, "message": err.message}}
    else:
        body = {"error": {"message": err.message, "type": err.kind, "param": None, "code": None}}
    headers = {"content-type": "application/json"}
    if err.retry_after is not None:
        headers["retry-after"] = f"{err.retry_after:g}"
    elif err.status in (429, 500, 529):
        headers["x-should-retry"] = "true"
    return err.status, headers, json.dumps(body).encode()


# ---------------------------------------------------------------- wire -> neutral request


def _text_of(content: Any) -> str:
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
                parts.append(_text_of(block.get("content")))
        else:
            parts.append(str(block))
    return "\n".join(parts)


def _request_from_openai(payload: dict, limit: int) -> ModelRequest:
    system_parts: list[str] = []
    messages: list[ChatMessage] = []
    for message in payload.get("messages") or []:
        role = message.get("role")
        text = _text_of(message.get("content"))
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


def _request_from_anthropic(payload: dict, limit: int) -> ModelRequest:
    messages: list[ChatMessage] = []
    for message in payload.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        if message.get("role") == "assistant":
            calls = tuple(ToolCallSpec(b.get("id", ""), b.get("name", ""), b.get("input") or {})
                          for b in blocks if b.get("type") == "tool_use")
            messages.append(ChatMessage("assistant", _text_of(blocks), calls))
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                messages.append(ChatMessage("tool", _text_of(block.get("content")), tool_call_id=block.get("tool_use_id"),
                                            is_error=bool(block.get("is_error"))))
        text = _text_of([b for b in blocks if b.get("type") == "text"])
        if text or not any(b.get("type") == "tool_result" for b in blocks):
            messages.append(ChatMessage("user", text))
    return ModelRequest(payload.get("model", ""), _text_of(payload.get("system")) or None, tuple(messages), limit)


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
    for message in payload.get("messages") or []:
        calls = json.dumps(message.get("tool_calls"), sort_keys=True) if message.get("tool_calls") else ""
        parts.append(f"<|{message.get('role')}|>{_text_of(message.get('content'))}{calls}")
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
    blocks = []
    for item in raw:
        control = item.get("cache_control")
        content = {k: v for k, v in item.items() if k != "cache_control"}
        canonical = json.dumps(content, sort_keys=True)
        digest = hashlib.sha256(canonical.encode()).hexdigest()
        if digest not in memo:
            text = _text_of([content]) if content.get("type") in ("text", "tool_result") else canonical
            memo[digest] = _tokens.count(text)
        ttl = (control.get("ttl") or "5m") if isinstance(control, dict) else None
        blocks.append(CacheBlock(digest, memo[digest], ttl))
    return blocks


# ---------------------------------------------------------------- in-process transport and loopback server


class EmulatorTransport(httpx2.BaseTransport):
    def __init__(self, emulator: Emulator | None = None):
        self.emulator = emulator or Emulator()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            status, headers, body = self.emulator.handle(request.method, request.url.path, request.read())
        except EmulatorTimeout:
            raise httpx2.ReadTimeout("emulator: injected timeout", request=request) from None
        return httpx2.Response(status, headers=headers, content=body, request=request)


def _handler_for(emulator: Emulator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            try:
                status, headers, payload = emulator.handle("POST", self.path, body)
            except EmulatorTimeout:
                self.close_connection = True
                return
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the CLI reports, not the server
            return None

    return Handler


class EmulatorServer:
    """The emulator on loopback, in a background thread: `with EmulatorServer(port=0) as server: server.url`."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1", emulator: Emulator | None = None):
        self.emulator = emulator or Emulator()
        self.httpd = ThreadingHTTPServer((host, port), _handler_for(self.emulator))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> EmulatorServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(port: int, host: str = "127.0.0.1") -> None:
    """Serve both wire formats on host:port until interrupted (`compaction-harness serve --port N`).
    OpenAI clients use base_url http://HOST:PORT/v1, Anthropic clients http://HOST:PORT."""
    server = EmulatorServer(port, host)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
