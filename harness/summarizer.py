"""The summarizer side of a compaction: what it is given, what it returns.

The compactor hands a `SummaryInput` (the system prompt, the summary in effect, the head being folded,
an output budget) to a `Summarizer`. `PlaceholderSummarizer` needs no model: it returns a labelled
block of the configured size, so `simulate` can measure the policy's mechanics on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.session import Message

SUMMARY_HEADER = "[Summary of the earlier conversation, written at compaction {number}]"


@dataclass(frozen=True)
class SummaryInput:
    system: str | None
    previous_summary: str | None  # the block in effect: on a second compaction nothing it held may be lost
    head: tuple[Message, ...]  # the messages folded now, oldest first
    budget_tokens: int
    number: int  # 1 for the first compaction of the replay
    head_start: int  # message index of head[0]


@dataclass(frozen=True)
class SummaryResult:
    text: str
    model: str = "placeholder"
    usage: Any = None  # models.base.Usage when a model wrote it
    model_time_s: float = 0.0
    latency_source: str = "modelled"  # live | recorded | modelled
    finish_reason: str = "stop"
    extra: dict[str, Any] = field(default_factory=dict)


class Summarizer(Protocol):
    name: str

    def summarize(self, request: SummaryInput) -> SummaryResult: ...


@dataclass(frozen=True)
class PlaceholderSummarizer:
    """A deterministic stand-in: a labelled summary of `budget_tokens` under chars/4, holding no facts."""

    name: str = "placeholder"

    def summarize(self, request: SummaryInput) -> SummaryResult:
        label = (f"[placeholder summary {request.number}: messages {request.head_start}"
                 f"..{request.head_start + len(request.head) - 1}"
                 f"{' + previous summary' if request.previous_summary else ''}]")
        filler = " ." * max(0, (request.budget_tokens * 4 - len(label)) // 2)
        return SummaryResult(label + filler)


def summary_block(text: str, number: int) -> str:
    """The summary as it stands in the compacted context (sent as the first user message)."""
    return f"{SUMMARY_HEADER.format(number=number)}\n{text}"
