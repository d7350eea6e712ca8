"""The provider-neutral model interface: the types every adapter and caller shares, and nothing that
opens a client (that is `harness.models.registry`, so this module imports no adapter).

A model is named by a spec string (parsed by `registry.check_spec` into a ModelSpec):
  builtin                      the offline reference model
  openai:MODEL                 OpenAI Chat Completions (OPENAI_API_KEY)
  anthropic:MODEL              Anthropic Messages (ANTHROPIC_API_KEY)
  openai:MODEL@BASE_URL        any OpenAI-compatible server (vLLM, llama.cpp, Ollama)
  openai:MODEL@emulator        the real SDK over the in-process emulator (no key, no sockets)
  anthropic:MODEL@emulator
  openai-compact:MODEL[@...]   the provider's own compaction as the summarizer (Responses /responses/compact)
  anthropic-compact:MODEL[@...]  (Anthropic's explicit compaction request, beta)
"""

from __future__ import annotations

import abc
import asyncio
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

Role = Literal["user", "assistant", "tool"]
LatencySource = Literal["live", "recorded", "modelled"]
PROVIDERS = ("builtin", "openai", "anthropic")
# Provider compaction as a system under test: each is served by the provider it names (its key, its wire).
COMPACT_PROVIDERS = MappingProxyType({"openai-compact": "openai", "anthropic-compact": "anthropic"})
KEY_VARIABLES = MappingProxyType({"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
                                  "openai-compact": "OPENAI_API_KEY", "anthropic-compact": "ANTHROPIC_API_KEY"})
EMULATOR = "emulator"
RECORD_MODES = ("none", "once", "new", "all")
DEFAULT_TIMEOUT_S = 600.0
# `run --request-timeout/--retries` defaults: a hung server costs minutes, not ten; a burst of 429/529 is
# ridden out (the SDKs back off exponentially, capped at 8 s, and honour retry-after up to RetryAfterCap's bound).
DEFAULT_REQUEST_TIMEOUT_S = 300.0
DEFAULT_RETRIES = 5
MAX_RETRIES = 20
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
    # Anthropic cache entry lifetime the request asks for: "5m" or "1h"; None sends the provider default (5m).
    cache_ttl: str | None = None


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

    @property
    def deterministic(self) -> bool:
        """The builtin model writes its text: bare, or behind a provider's wire format (`@emulator`)."""
        return self.provider == "builtin" or self.emulated

    @property
    def compacts(self) -> bool:
        """A provider-compaction spec (`openai-compact:MODEL`, `anthropic-compact:MODEL`)."""
        return self.provider in COMPACT_PROVIDERS

    def __str__(self) -> str:
        if self.provider == "builtin":
            return "builtin"
        tail = f"@{self.base_url}" if self.base_url else ""
        return f"{self.provider}:{self.model}{tail}"
