"""The prompt cache as one deployment sees it over a session, in the session's own time.

A `CacheWorld` holds one provider's cache simulator (harness.models.emulator.cache) on a clock the replay
sets: with timestamps in the session, each request is sent at the time of the last message it carries, so
entries expire by the provider's TTL across the user's idle gaps; without them every send happens at time 0,
which assumes the sends all came within the TTL. Requests are read through per-message digests, so a long
session's many overlapping requests are not re-serialised (harness.studies.digests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable, NamedTuple, Sequence

from harness.models.base import ChatMessage, ModelRequest
from harness.models.emulator import AnthropicBreakpointCache, CacheBlock, OpenAIPrefixCache
from harness.session import Message
from harness.studies.digests import Digests

UNTIMED = "no timestamps: every send assumed within the cache TTL (no expiry)"
TIMED = "timestamps: each request at the time of its last message, entries expired by the provider's TTL"


class Sent(NamedTuple):
    """One request's prompt tokens, the part read from cache and the part written to it."""

    total: int
    read: int
    write: int


@dataclass
class CacheWorld:
    provider: str
    namespace: str
    digests: Digests = field(default_factory=Digests)
    now: float = 0.0
    openai: OpenAIPrefixCache = field(init=False)
    anthropic: AnthropicBreakpointCache = field(init=False)
    last_send: float | None = None  # when this world last saw a request

    def __post_init__(self) -> None:
        self.openai = OpenAIPrefixCache(clock=lambda: self.now)
        self.anthropic = AnthropicBreakpointCache(clock=lambda: self.now)

    def send_blocks(self, blocks: list[CacheBlock], at: float | None = None) -> Sent:
        """An Anthropic request given as its blocks in prefix order."""
        if at is not None:
            self.now = max(self.now, at)
        self.last_send = self.now
        result = self.anthropic.process(self.namespace, blocks)
        return Sent(result.total_tokens, result.read_tokens, result.write_tokens)

    def send(self, request: ModelRequest, at: float | None = None, lead: Sequence[CacheBlock] = ()) -> Sent:
        """(input, cache read, cache write) tokens for one request under this provider's rules. `lead`:
        Anthropic blocks ahead of the request's own (a runtime prefix the transcript does not hold)."""
        if at is not None:
            self.now = max(self.now, at)  # out-of-order stamps never move the clock back
        self.last_send = self.now
        if self.provider == "anthropic":
            return self.send_blocks([*lead, *self.digests.anthropic_blocks(request)])
        tokens = self.digests.openai_tokens(request)
        return Sent(len(tokens), self.openai.lookup_and_store(self.namespace, tokens), 0)


def seconds(ts: str | None) -> float | None:
    """An ISO 8601 stamp as POSIX seconds; None when absent or unreadable."""
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def send_times(messages: Sequence[Message]) -> list[float | None]:
    """For each message index i, when a request whose last message is i was sent: i's own stamp, or the
    latest earlier one when i has none; None before the first stamp."""
    out: list[float | None] = []
    last: float | None = None
    for message in messages:
        stamp = seconds(message.ts)
        last = stamp if stamp is not None else last
        out.append(last)
    return out


def timing_note(messages: Sequence[Message]) -> str:
    return TIMED if any(seconds(m.ts) is not None for m in messages) else UNTIMED


def agent_request(model: str, system: str | None, previous: str | None, live: Iterable[ChatMessage],
                  tools: tuple = (), ttl: str | None = None) -> ModelRequest:
    """The agent's own request: tools, system, the summary block in effect, the live messages; cached as a
    runtime caches (Anthropic: breakpoints closing tools+system and on the last message)."""
    history = ([ChatMessage("user", previous)] if previous else []) + list(live)
    if not history:
        history = [ChatMessage("user", "(start)")]
    return ModelRequest(model, system, tuple(history), 4096, cache=True, tools=tools, cache_ttl=ttl,
                        label="agent")
