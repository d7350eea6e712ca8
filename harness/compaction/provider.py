"""The provider's own compaction as the summarizer (`openai-compact:MODEL`, `anthropic-compact:MODEL`).

At each compaction point the history the policy folds (messages kept ahead of the summary, the summary in
effect, the head) goes through the provider's compaction call, and what comes back is the compacted context:
OpenAI's user messages plus its opaque item, or Anthropic's signed block. The item stands in the context as
its marker text (`models.compaction_item`); the client that compacted sends it back as it came. A reply
without an item is `not compacted`: the context stays as it was and the call is recorded as such.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

from harness.chat import chat_message
from harness.compaction.summarizer import SECTIONS, SummaryInput, SummaryResult, instruction
from harness.models.base import ChatMessage, ModelClient
from harness.models.compaction_item import NoCompactionReturned
from harness.session import Message

NOT_COMPACTED = "no_compaction"  # the finish reason of a compaction call that returned no item


@dataclass
class ProviderSummarizer:
    """Compacts through a client with `compact(system, messages, instructions)` (the compact adapters)."""

    client: Any  # OpenAICompactClient | AnthropicCompactClient
    sections: tuple[str, ...] = SECTIONS
    template: str | None = None  # the instruction's text (None: the shipped instruction.md)

    @property
    def name(self) -> str:
        return self.client.spec

    def summarize(self, request: SummaryInput) -> SummaryResult:
        history = [chat_message(m) for m in request.kept]
        if request.previous_summary:
            history.append(ChatMessage("user", request.previous_summary))
        history.extend(chat_message(m) for m in request.head)
        called = time.perf_counter()
        try:
            item, response = self.client.compact(request.system, tuple(history),
                                                 instruction(request.budget_tokens, self.sections, self.template))
        except NoCompactionReturned as exc:
            source = "modelled" if self.name.endswith("@emulator") else "live"
            return SummaryResult("", self.name, None, 0.0, source, NOT_COMPACTED, {"not_compacted": str(exc)},
                                 time.perf_counter() - called)
        extra = {"provider_item": True, "opaque": item.opaque, "kept_user": list(item.kept_user), "truncated": False}
        return SummaryResult(response.text, self.name, response.usage, response.latency_s, response.latency_source,
                             response.finish_reason, extra, time.perf_counter() - called)


def is_compact_client(client: ModelClient) -> bool:
    return callable(getattr(client, "compact", None))


def kept_indices(messages: Sequence[Message], candidates: Sequence[int], texts: Sequence[str]) -> tuple[int, ...]:
    """The session indices of the user messages a provider kept (OpenAI returns all user messages of its
    input, in order): each text matched to the next candidate user message with that content."""
    out: list[int] = []
    position = 0
    for text in texts:
        for offset, index in enumerate(candidates[position:]):
            if messages[index].role == "user" and messages[index].content == text:
                out.append(index)
                position += offset + 1
                break
    return tuple(out)
