"""What a replay reports: compaction events (made by one constructor), prunes, risks, and summarizer calls."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

from harness.compaction.summarizer import SummaryInput, SummaryResult
from harness.policy.base import Tail

RISK_KINDS = (
    "estimator_miss",  # the true count exceeded the window while the estimate did not trigger
    "response_may_be_cut",  # request input plus the model's max output exceeds the window
    "summary_request_too_big",  # the summarizer's own request (plus its output budget) would not fit
    "step_exceeds_window",  # a single step is larger than the whole window
    "no_shrink",  # after compacting, the context is still at or over the trigger
    "nothing_to_fold",  # the trigger fired but the tail is the whole live context
    "lookup_without_block",  # lookup mode fired with no earlier summary block to reuse
    "summary_rejected",  # the policy refused a summary that would have made the context larger
)
# Who wrote the folded text, and where its latency comes from, when no summarizer was called.
_WITHOUT_CALL = {"truncate": ("none", "modelled"), "lookup": ("lookup", "modelled"),
                 "recorded": ("recorded", "recorded")}


@dataclass(frozen=True)
class CompactionEvent:
    number: int
    send_index: int  # the message the triggering request would have produced
    source: str  # summarizer | lookup | truncate | recorded
    head_start: int  # first live message folded
    tail_start: int  # first message kept verbatim
    turns_kept: int
    steps_kept: int
    truncated_to_step: bool
    tokens_before_est: int
    tokens_before_true: int
    tokens_after_est: int
    tokens_after_true: int
    summary_tokens: int  # true count of the summary text
    summary_request_tokens: int  # true input tokens of the summarizer request (prefix it is given)
    wall_time_s: float
    harness_time_s: float
    model_time_s: float
    latency_source: str  # live | recorded | modelled
    summarizer: str
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None
    summary_budget_tokens: int = 0  # the output budget the summarizer was given (0: no summarizer call)


class Totals(NamedTuple):
    """Estimated and true tokens of the whole context."""

    est: int
    true: int


def compaction_event(number: int, send_index: int, source: str, *, head_start: int, tail: Tail, before: Totals,
                     after: Totals, summary_tokens: int, request_tokens: int, started: float,
                     waiting_s: float = 0.0, result: SummaryResult | None = None,
                     budget_tokens: int = 0) -> CompactionEvent:
    """The one way an event is made, for every kind of fold. `result` is the summarizer's answer (source
    `summarizer` only); the other sources fold a text that needed no model call. The wall time runs from
    `started` (a perf_counter reading) to this event's making, so all harness work of the compaction is in
    it; `waiting_s` (the time inside the model client) is the only part not counted as the harness's."""
    if result is None:
        summarizer, latency_source = _WITHOUT_CALL[source]
        model_s, finish_reason, usage, budget_tokens = 0.0, "stop", None, 0
    else:
        summarizer, latency_source = result.model, result.latency_source
        model_s, finish_reason, usage = result.model_time_s, result.finish_reason, _usage_dict(result.usage)
    wall_s = time.perf_counter() - started
    return CompactionEvent(
        number=number, send_index=send_index, source=source, head_start=head_start, tail_start=tail.start,
        turns_kept=tail.turns, steps_kept=tail.steps, truncated_to_step=tail.truncated_to_step,
        tokens_before_est=before.est, tokens_before_true=before.true,
        tokens_after_est=after.est, tokens_after_true=after.true,
        summary_tokens=summary_tokens, summary_request_tokens=request_tokens,
        wall_time_s=wall_s, harness_time_s=max(0.0, wall_s - waiting_s), model_time_s=model_s,
        latency_source=latency_source, summarizer=summarizer, finish_reason=finish_reason, usage=usage,
        summary_budget_tokens=budget_tokens)


@dataclass(frozen=True)
class SummaryCall:
    """One summarizer call of a replay and what became of it: the event it produced, or None when the policy
    rejected the summary. Pairs a summary with its compaction without going through numbers."""

    request: SummaryInput
    result: SummaryResult
    tail_start: int  # where the tail would start (the compaction's, when kept)
    request_tokens: int  # true input tokens of the summarizer request
    summary_tokens: int  # true count of the summary text
    event: CompactionEvent | None

    @property
    def rejected(self) -> bool:
        return self.event is None


@dataclass(frozen=True)
class PruneEvent:
    """Old tool outputs cleared by a peer policy's pruning (no summary, no model call)."""

    send_index: int
    messages: tuple[int, ...]
    tokens_freed_est: int


@dataclass(frozen=True)
class Risk:
    kind: str
    send_index: int
    tokens: int
    detail: str


def _usage_dict(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    return asdict(usage) if hasattr(usage, "__dataclass_fields__") else dict(usage)
