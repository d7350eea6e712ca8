"""The provider-neutral model interface: requests, responses, usage, and `open_client(spec)`.

A model is named by a spec string:
  builtin                      the offline reference model
  openai:MODEL                 OpenAI Chat Completions (OPENAI_API_KEY)
  anthropic:MODEL              Anthropic Messages (ANTHROPIC_API_KEY)
  openai:MODEL@BASE_URL        any OpenAI-compatible server (vLLM, llama.cpp, Ollama)
  openai:MODEL@emulator        the real SDK over the in-process emulator (no key, no sockets)
  anthropic:MODEL@emulator
"""

from __future__ import annotations

import abc
import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.errors import HarnessError

Role = Literal["user", "assistant", "tool"]
LatencySource = Literal["live", "recorded", "modelled"]
PROVIDERS = ("builtin", "openai", "anthropic")
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
EMULATOR = "emulator"
RECORD_MODES = ("none", "once", "new", "all")
DEFAULT_TIMEOUT_S = 600.0
# Headers the cassette and the emulator use to tell the adapters where a latency figure comes from.
LATENCY_SOURCE_HEADER = "x-harness-latency-source"
RECORDED_ELAPSED_HEADER = "x-harness-recorded-elapsed"


@dataclass(frozen=True)
class ToolCallSpec:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str
    tool_calls: tuple[ToolCallSpec, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False


@dataclass(frozen=True)
class ModelRequest:
    model: str
    system: str | None
    messages: tuple[ChatMessage, ...]
    max_output_tokens: int
    cache: bool = True
    cache_key: str | None = None
    # Number of leading messages shared with the session's earlier request. With cache on, Anthropic gets
    # one breakpoint on the system prompt and one on the last of these messages (on the last message when
    # None); with cache off it gets none. OpenAI caches prefixes automatically and ignores it.
    cache_prefix_messages: int | None = None
    # Provider-neutral tool definitions: {"name", "description", "parameters": JSON schema}.
    tools: tuple[dict[str, Any], ...] = ()
    label: str = ""


@dataclass(frozen=True)
class Usage:
    """Billed tokens, normalised: input counts the whole prompt; cached and written are parts of it."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.output_tokens + other.output_tokens,
        )

    @property
    def uncached_input_tokens(self) -> int:
        return self.input_tokens - self.cached_input_tokens - self.cache_write_tokens


TRUNCATION_REASONS = ("length", "max_tokens")


@dataclass(frozen=True)
class ModelResponse:
    text: str
    usage: Usage
    latency_s: float
    model: str
    finish_reason: str
    latency_source: LatencySource = "live"
    raw: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def truncated(self) -> bool:
        """The reply hit the output limit; callers decide whether a cut summary is acceptable."""
        return self.finish_reason in TRUNCATION_REASONS


class ModelClient(abc.ABC):
    """One model behind one spec. `complete` is synchronous; `acomplete` runs it off the event loop."""

    spec: str
    name: str

    @abc.abstractmethod
    def complete(self, request: ModelRequest) -> ModelResponse: ...

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        return await asyncio.to_thread(self.complete, request)

    def close(self) -> None:
        return None

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class ModelSpec:
    provider: str
    model: str
    base_url: str | None = None

    @property
    def emulated(self) -> bool:
        return self.base_url == EMULATOR

    def __str__(self) -> str:
        if self.provider == "builtin":
            return "builtin"
        tail = f"@{self.base_url}" if self.base_url else ""
        return f"{self.provider}:{self.model}{tail}"


def check_spec(spec: str) -> ModelSpec:
    """Parse a model spec without opening anything; a malformed one is a one-line HarnessError."""
    text = spec.strip()
    if text == "builtin":
        return ModelSpec("builtin", "builtin")
    provider, sep, rest = text.partition(":")
    hint = "use builtin, openai:MODEL, anthropic:MODEL, openai:MODEL@BASE_URL or PROVIDER:MODEL@emulator"
    if not sep or provider not in ("openai", "anthropic"):
        raise HarnessError(f"model spec {spec!r}: unknown provider; {hint}")
    model, at, base = rest.partition("@")
    if not model or (at and not base):
        raise HarnessError(f"model spec {spec!r}: missing model or base URL; {hint}")
    if base and base != EMULATOR:
        if provider != "openai":
            raise HarnessError(f"model spec {spec!r}: a base URL is only supported for openai-compatible servers")
        if not base.startswith(("http://", "https://")):
            raise HarnessError(f"model spec {spec!r}: base URL must start with http:// or https://")
    return ModelSpec(provider, model, base or None)


def open_client(
    spec: str,
    *,
    cassette_path: str | Path | None = None,
    record_mode: str = "none",
    case_id: str | None = None,
    transport: Any = None,
    max_retries: int = 2,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retry_after_s: float = 60.0,
) -> ModelClient:
    """Open a client for `spec`. Missing keys fail here, before any work starts.

    `transport` (an httpx2 transport) replaces the network or the emulator underneath; `cassette_path`
    wraps whatever is underneath in the record/replay transport with `record_mode`.
    """
    parsed = check_spec(spec)
    if record_mode not in RECORD_MODES:
        raise HarnessError(f"record mode {record_mode!r}: choose one of {', '.join(RECORD_MODES)}")
    if parsed.provider == "builtin":
        from harness.models.builtin import BuiltinClient

        return BuiltinClient()

    from harness.models.cassette import CassetteTransport, will_record
    from harness.models.transport import RetryAfterCap, live_transport

    recording_possible = cassette_path is None or will_record(Path(cassette_path), record_mode)
    api_key = _api_key(parsed, needed=recording_possible)
    inner = transport
    if inner is None:
        if parsed.emulated:
            from harness.models.emulator import EmulatorTransport

            inner = EmulatorTransport()
        elif recording_possible:
            inner = live_transport()
    stack: Any = inner
    if cassette_path is not None:
        stack = CassetteTransport(
            Path(cassette_path), inner=inner, mode=record_mode, case_id=case_id or "?",
            secrets=tuple(v for v in (api_key,) if v),
        )
    stack = RetryAfterCap(stack, max_retry_after_s)
    if parsed.provider == "openai":
        from harness.models.openai import OpenAIClient

        return OpenAIClient(parsed, api_key=api_key, transport=stack, max_retries=max_retries, timeout=timeout)
    from harness.models.anthropic import AnthropicClient

    return AnthropicClient(parsed, api_key=api_key, transport=stack, max_retries=max_retries, timeout=timeout)


def _api_key(spec: ModelSpec, *, needed: bool) -> str:
    """The provider key, or a placeholder where no real provider is reached (emulator, replay, custom server)."""
    variable = KEY_VARIABLES[spec.provider]
    value = os.environ.get(variable, "").strip()
    if value:
        return value
    if spec.emulated:
        return "emulator-key"
    if spec.base_url:  # OpenAI-compatible local servers usually take any key
        return "no-key"
    if not needed:
        return "replay-only"
    raise HarnessError(f"{variable} is not set: export it to use {spec}, or replay a cassette with --record-mode none")
