"""The auto-compaction path: replay a session message by message and compact as the runtime would.

On every send (before each assistant message, between tool rounds too, and once more at the end,
where the next question would be sent) the policy judges the estimated size of the request. When it
fires, the policy picks the tail, the summarizer folds the head (with the summary in effect), and the
context becomes `system + one summary block + tail`. Totals are running sums, so a send costs the
same however long the history is.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

from harness.policy.base import ContextView, Plan, Policy, SendPoint
from harness.session import Message, Session
from harness.summarizer import Summarizer, SummaryInput, summary_block
from harness.tokens import MessageTokens, TokenCounter, counter

RISK_KINDS = (
    "estimator_miss",  # the true count exceeded the window while the estimate did not trigger
    "response_may_be_cut",  # request input plus the model's max output exceeds the window
    "summary_request_too_big",  # the summarizer's own request (plus its output budget) would not fit
    "step_exceeds_window",  # a single step is larger than the whole window
    "no_shrink",  # after compacting, the context is still at or over the trigger
    "nothing_to_fold",  # the trigger fired but the tail is the whole live context
    "lookup_without_block",  # lookup mode fired with no earlier summary block to reuse
)


@dataclass(frozen=True)
class CompactionEvent:
    number: int
    send_index: int  # the message the triggering request would have produced
    source: str  # summarizer | lookup | truncate
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


@dataclass(frozen=True)
class Risk:
    kind: str
    send_index: int
    tokens: int
    detail: str


@dataclass(frozen=True)
class ContextSnapshot:
    """The context at a probe point: `system + kept + summary + messages[live_start:end]`.

    `kept` holds messages from before the summary that a policy keeps verbatim ahead of it (codex keeps
    recent user messages); the default policy keeps none."""

    point: str
    end: int
    live_start: int
    summary: str | None
    compactions: int
    est_tokens: int
    true_tokens: int
    kept: tuple[int, ...] = ()

    def parts(self, session: Session) -> tuple[list[Message], str | None, list[Message]]:
        """The messages before the summary block, the block, and the messages after it."""
        messages = session.messages
        return [messages[i] for i in self.kept], self.summary, list(messages[self.live_start:self.end])


@dataclass
class Replay:
    session: Session
    events: list[CompactionEvent] = field(default_factory=list)
    risks: list[Risk] = field(default_factory=list)
    snapshots: dict[str, ContextSnapshot] = field(default_factory=dict)
    sends: int = 0
    notices: list[str] = field(default_factory=list)

    def risk_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(RISK_KINDS, 0)
        for risk in self.risks:
            counts[risk.kind] += 1
        return counts


class LiveContext:
    """What the next request would contain, with running estimated and true totals."""

    def __init__(self, session: Session, estimate: MessageTokens, true: MessageTokens):
        self.session, self.estimate, self.true = session, estimate, true
        self.system_est = estimate.text(session.system)
        self.system_true = true.text(session.system)
        self.live_start = 0
        self.end = 0
        self.summary: str | None = None
        self.summary_est = self.summary_true = 0
        self.est_total, self.true_total = self.system_est, self.system_true

    def append(self, index: int) -> None:
        self.end = index + 1
        self.est_total += self.estimate[index]
        self.true_total += self.true[index]

    def fold(self, summary: str | None, tail_start: int) -> None:
        self.summary, self.live_start = summary, tail_start
        self.summary_est, self.summary_true = self.estimate.text(summary), self.true.text(summary)
        span = range(tail_start, self.end)
        self.est_total = self.system_est + self.summary_est + self.estimate.span(span)
        self.true_total = self.system_true + self.summary_true + self.true.span(span)

    def snapshot(self, point: str, compactions: int) -> ContextSnapshot:
        return ContextSnapshot(point, self.end, self.live_start, self.summary, compactions,
                               self.est_total, self.true_total)


@dataclass
class Compactor:
    """Drives one session through one policy. `points` name the probe points to snapshot:
    `end`, `compaction:N` (just after the Nth compaction), `message:M` (just before message M)."""

    session: Session
    policy: Policy
    summarizer: Summarizer
    estimator: TokenCounter = field(default_factory=lambda: counter("chars4"))
    true_counter: TokenCounter = field(default_factory=lambda: counter("o200k"))
    points: Iterable[str] = ("end",)
    notify: Callable[[CompactionEvent], None] | None = None
    # Per-message counts may be shared between replays of one session (sweeps, controls).
    estimate: MessageTokens | None = None
    true: MessageTokens | None = None

    def run(self) -> Replay:
        session, config = self.session, self.policy.config
        self.estimate = self.estimate or MessageTokens(self.estimator, session.messages)
        self.true = self.true or MessageTokens(self.true_counter, session.messages)
        self.context = LiveContext(session, self.estimate, self.true)
        self.replay = Replay(session)
        self.wanted = set(self.points)
        self._check_steps(config.context_window)
        for index, message in enumerate(session.messages):
            self._take_point(f"message:{index}")
            if message.role == "assistant":
                self.send(index)
            self.context.append(index)
        self.send(len(session.messages))  # the request that would carry the next question
        self._take_point("end")
        return self.replay

    # -- the hot path: one send ---------------------------------------------------------------

    def send(self, index: int) -> None:
        context, config = self.context, self.policy.config
        self.replay.sends += 1
        mid_turn = index > 0 and self.session.messages[index - 1].role == "tool"
        fired = self.policy.should_compact(SendPoint(index, context.est_total, mid_turn))
        if fired:
            self._compact(index, config)
        elif context.true_total > config.context_window:
            self._risk("estimator_miss", index, context.true_total,
                       f"true {context.true_total} > window {config.context_window}, "
                       f"estimate {context.est_total} did not trigger")
        if context.true_total + config.max_output_tokens > config.context_window:
            self._risk("response_may_be_cut", index, context.true_total,
                       f"input {context.true_total} + max output {config.max_output_tokens} "
                       f"> window {config.context_window}")

    # -- compaction ---------------------------------------------------------------------------

    def _compact(self, index: int, config) -> None:
        context = self.context
        started = time.perf_counter()
        before_est, before_true = context.est_total, context.true_total
        if config.mode == "lookup":
            self._lookup(index, started, before_est, before_true)
            return
        view = ContextView(self.session, context.live_start, context.end, self.estimate.__getitem__)
        plan = self.policy.plan(view)
        if plan.tail_start <= context.live_start:
            self._risk("nothing_to_fold", index, before_est, "the tail is the whole live context")
            return
        number = len(self.replay.events) + 1
        head = self.session.messages[context.live_start:plan.tail_start]
        request_true = (context.system_true + context.summary_true
                        + self.true.span(range(context.live_start, plan.tail_start)))
        if request_true + config.summary_tokens > config.context_window:
            self._risk("summary_request_too_big", index, request_true,
                       f"summary request {request_true} + output {config.summary_tokens} "
                       f"> window {config.context_window}")
        call_started = time.perf_counter()
        result = None
        if plan.summarize:
            result = self.summarizer.summarize(SummaryInput(
                self.session.system, context.summary, head, config.summary_tokens, number, context.live_start))
        call_time = time.perf_counter() - call_started
        block = summary_block(result.text, number) if result else None
        head_start = context.live_start
        context.fold(block, plan.tail_start)
        wall = time.perf_counter() - started
        self._record(CompactionEvent(
            number=number, send_index=index, source="summarizer" if result else "truncate",
            head_start=head_start, tail_start=plan.tail_start, turns_kept=plan.turns_kept,
            steps_kept=plan.steps_kept, truncated_to_step=plan.truncated_to_step,
            tokens_before_est=before_est, tokens_before_true=before_true,
            tokens_after_est=context.est_total, tokens_after_true=context.true_total,
            summary_tokens=self.true.tokens.count_text(result.text) if result else 0,
            summary_request_tokens=request_true, wall_time_s=wall,
            harness_time_s=max(0.0, wall - call_time),
            model_time_s=result.model_time_s if result else 0.0,
            latency_source=result.latency_source if result else "modelled",
            summarizer=result.model if result else "none",
            finish_reason=result.finish_reason if result else "stop",
            usage=_usage_dict(result.usage) if result else None,
        ), config)

    def _lookup(self, index: int, started: float, before_est: int, before_true: int) -> None:
        """Reuse the latest summary block already in the history; never call a model."""
        context = self.context
        blocks = [c for c in self.session.compactions if c.position <= index and c.covers > context.live_start]
        if not blocks:
            self._risk("lookup_without_block", index, before_est, "no earlier summary block to reuse")
            return
        block = max(blocks, key=lambda c: (c.position, c.covers))
        head_start = context.live_start
        context.fold(block.content, block.covers)
        wall = time.perf_counter() - started
        self._record(CompactionEvent(
            number=len(self.replay.events) + 1, send_index=index, source="lookup", head_start=head_start,
            tail_start=block.covers, turns_kept=0, steps_kept=0, truncated_to_step=False,
            tokens_before_est=before_est, tokens_before_true=before_true,
            tokens_after_est=context.est_total, tokens_after_true=context.true_total,
            summary_tokens=self.true.tokens.count_text(block.content), summary_request_tokens=0,
            wall_time_s=wall, harness_time_s=wall, model_time_s=0.0, latency_source="modelled",
            summarizer="lookup"), self.policy.config)

    def _record(self, event: CompactionEvent, config) -> None:
        self.replay.events.append(event)
        # The runtime's non-blocking notice; the replay goes on without waiting for anyone.
        self.replay.notices.append(
            f"context compacted: {event.tokens_before_est} -> {event.tokens_after_est} tokens (estimated)")
        if self.notify:
            self.notify(event)
        if event.tokens_after_est >= config.context_window - config.reserve_tokens:
            self._risk("no_shrink", event.send_index, event.tokens_after_est,
                       "the compacted context is still at or over the trigger")
        self._take_point(f"compaction:{event.number}")

    # -- bookkeeping --------------------------------------------------------------------------

    def _risk(self, kind: str, index: int, tokens: int, detail: str) -> None:
        self.replay.risks.append(Risk(kind, index, tokens, detail))

    def _take_point(self, point: str) -> None:
        if point in self.wanted:
            self.replay.snapshots[point] = self.context.snapshot(point, len(self.replay.events))

    def _check_steps(self, window: int) -> None:
        for turn in self.session.turns:
            for step in turn.steps:
                size = self.true.span(range(step.start, step.end))
                if size > window:
                    self._risk("step_exceeds_window", step.start, size,
                               f"step at message {step.start} is {size} tokens, window {window}")


def replay(session: Session, policy: Policy, summarizer: Summarizer, **options: Any) -> Replay:
    return Compactor(session, policy, summarizer, **options).run()


def _usage_dict(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    return asdict(usage) if hasattr(usage, "__dataclass_fields__") else dict(usage)
