"""Provider compaction as a shape of the cost study: OpenAI's `POST /responses/compact` (`openai-compact`) and
Anthropic's explicit compaction request (`anthropic-compact`), at the same compaction points as the others.

What is modelled, in the study's own cache world (docs/provider-compaction.md lists it for readers):
- The request as a runtime sends it. Anthropic: tools, system, the history the policy folds (kept messages,
  the block in effect, the head) with a breakpoint on its last message; the instructions are the
  `compaction` parameter, not a message, so the prompt is the agent's own prefix. OpenAI: `instructions`
  (the system prompt) and the history as `input`; `responses.compact` takes no tools (openai SDK), so the
  prefix the agent's requests cached (tools first) is not the compaction's.
- The provider's own compaction prompt is unseen and not counted; the output is the builtin summary's length
  (as for every shape); the compaction is billed at the model's listed rates (no separate price is known).
- The usage as the provider reports it, built by the emulator's reply builders and read by the adapters'
  readers: Anthropic's `usage.iterations` entry of type `compaction` (the top level is zero), OpenAI's
  `CompactedResponse.usage`.
- The context after it. Anthropic: the block first (billed as its readable content), then the tail. OpenAI:
  every user message of the input, the item (billed as the summary it carries, as the emulator unseals it),
  then the tail. The agent's requests in this shape's world carry that context, so the next compaction and
  the next first request see it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from harness.chat import chat_message
from harness.compaction.summarizer import SummaryInput
from harness.models.anthropic import usage_from
from harness.models.base import ChatMessage, ModelRequest, Usage
from harness.models.emulator.cache import AnthropicCacheResult
from harness.models.emulator.compaction import compaction_message
from harness.models.emulator.responses import usage as compacted_usage
from harness.models.openai_compact import responses_usage
from harness.studies.cache_world import CacheWorld, Sent, agent_request

SHAPES = {"anthropic": "anthropic-compact", "openai": "openai-compact"}


def shape_for(provider: str) -> str | None:
    """The provider compaction shape of a model's provider; None where there is none (the builtin)."""
    return SHAPES.get(provider)


@dataclass
class ProviderTrack:
    """The shape's own context across one session's compactions: what stands ahead of the live segment
    since the provider's last compaction (nothing before the first)."""

    provider: str
    ahead: tuple[ChatMessage, ...] = ()
    item: ChatMessage | None = None  # OpenAI: the message standing for the item in effect (not a kept message)

    def agent_request(self, model: str, system: str | None, live: list[ChatMessage], tools: tuple,
                      ttl: str | None) -> ModelRequest:
        return agent_request(model, system, None, [*self.ahead, *live], tools, ttl)

    def compaction_request(self, model: str, system: str | None, kept: list[ChatMessage],
                           head: list[ChatMessage], tools: tuple, ttl: str | None, budget: int) -> ModelRequest:
        history = (*kept, *self.ahead, *head) or (ChatMessage("user", "(start)"),)
        if self.provider == "anthropic":
            return ModelRequest(model, system, history, budget, cache=True, tools=tools, cache_ttl=ttl,
                                label="compaction")
        return ModelRequest(model, system, history, budget, cache=True, label="compaction")  # no tools param

    def compacted(self, request: ModelRequest, text: str) -> None:
        """The context the provider returned: Anthropic the block alone; OpenAI every user message of the
        input (the item in effect is an item, not a message), then the new item."""
        block = ChatMessage("user", text)
        if self.provider == "anthropic":
            self.ahead = (block,)
        else:
            kept = tuple(m for m in request.messages if m.role == "user" and m is not self.item)
            self.ahead = (*kept, block)
        self.item = block


def reported_usage(provider: str, model: str, sent: Sent, text: str, output: int) -> Usage:
    """The compaction call's usage as the provider reports it, read through the adapter's reader (Anthropic:
    the `compaction` iteration, never the zero top level)."""
    if provider == "anthropic":
        body = compaction_message(0, model, text, AnthropicCacheResult(sent.read, sent.write, 0, sent.total), False)
        return usage_from(body["usage"])
    return responses_usage(compacted_usage(sent.total, sent.read, output))


@dataclass(frozen=True)
class ProviderFold:
    """One compaction in the shape's world: the call's usage and the first agent request after it."""

    call: Usage
    first: Sent


def price_provider_fold(world: CacheWorld, track: ProviderTrack, build: Callable[[ProviderTrack], ModelRequest],
                        after: Callable[[ProviderTrack], ModelRequest], text: str, output: int,
                        at: float | None) -> ProviderFold:
    """Send the compaction request, take the provider's context, then send the first request after it."""
    request = build(track)
    sent = world.send(request, at)
    usage = reported_usage(track.provider, request.model, sent, text, output)
    track.compacted(request, text)
    return ProviderFold(usage, world.send(after(track), at))


def history_of(fold_input: SummaryInput) -> tuple[list[ChatMessage], list[ChatMessage]]:
    """The policy's kept messages and the head, as chat messages."""
    return [chat_message(m) for m in fold_input.kept], [chat_message(m) for m in fold_input.head]
