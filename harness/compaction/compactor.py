"""The auto-compaction path: replay a session message by message and compact as the runtime would.

On every send (before each assistant message, between tool rounds too, and once more at the end,
where the next question would be sent) the policy judges the estimated size of the request. When it
fires, the policy picks the tail, the summarizer folds the head (with the summary in effect), and the
context becomes `system + one summary block + tail`. Totals are running sums, so a send costs the
same however long the history is.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Iterable

from harness.policy.base import ContextView, Plan, Policy, SendPoint
from harness.session import Message, Session
from harness.compaction.summarizer import Summarizer, SummaryInput, summary_block
from harness.tokens import MessageTokens, TokenCounter, counter

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
# What a pruned tool result says instead of its output (opencode, claude-code peers).
PRUNED_MARKER = "[tool output cleared to save context]"


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
    summary_budget_tokens: int = 0  # the output budget the summarizer was given (0: no summarizer call)


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
    pruned: tuple[int, ...] = ()  # tool results shown as PRUNED_MARKER (pruning peers only)

    def parts(self, session: Session) -> tuple[list[Message], str | None, list[Message]]:
        """The messages before the summary block, the block, and the messages after it."""
        messages = session.messages
        kept = [messages[i] for i in self.kept]
        live = list(messages[self.live_start:self.end])
        for i in self.pruned:
            if i >= self.live_start:
                live[i - self.live_start] = pruned_message(messages[i])
        return kept, self.summary, live


@dataclass
class Replay:
    session: Session
    events: list[CompactionEvent] = field(default_factory=list)
    risks: list[Risk] = field(default_factory=list)
    snapshots: dict[str, ContextSnapshot] = field(default_factory=dict)
    sends: int = 0
    notices: list[str] = field(default_factory=list)
    prunes: list[PruneEvent] = field(default_factory=list)

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
        self.kept: tuple[int, ...] = ()  # messages ahead of the summary (codex)
        self.kept_true = 0
        self.pruned: set[int] = set()  # tool results cleared by a pruning peer
        self.marker_est, self.marker_true = estimate.text(PRUNED_MARKER), true.text(PRUNED_MARKER)

    def append(self, index: int) -> None:
        self.end = index + 1
        self.est_total += self.estimate[index]
        self.true_total += self.true[index]

    def est_of(self, index: int) -> int:
        return self.marker_est if index in self.pruned else self.estimate[index]

    def true_of(self, index: int) -> int:
        return self.marker_true if index in self.pruned else self.true[index]

    def span_true(self, indices: range) -> int:
        return sum(map(self.true_of, indices)) if self.pruned else self.true.span(indices)

    def prune(self, index: int) -> None:
        self.est_total -= self.estimate[index] - self.marker_est
        self.true_total -= self.true[index] - self.marker_true
        self.pruned.add(index)

    def totals_after(self, summary: str | None, tail_start: int, kept: tuple[int, ...] = ()) -> tuple[int, int]:
        """Estimated and true totals of `system + kept + summary + messages[tail_start:end]`."""
        span = range(tail_start, self.end)
        est = sum(map(self.est_of, span)) if self.pruned else self.estimate.span(span)
        est += self.system_est + self.estimate.text(summary) + sum(map(self.est_of, kept))
        true = self.span_true(span) + self.system_true + self.true.text(summary) + sum(map(self.true_of, kept))
        return est, true

    def fold(self, summary: str | None, tail_start: int, kept: tuple[int, ...] = ()) -> None:
        self.summary, self.live_start, self.kept = summary, tail_start, kept
        self.summary_est, self.summary_true = self.estimate.text(summary), self.true.text(summary)
        self.kept_true = sum(map(self.true_of, kept))
        self.est_total, self.true_total = self.totals_after(summary, tail_start, kept)

    def snapshot(self, point: str, compactions: int) -> ContextSnapshot:
        shown = set(self.kept)
        pruned = tuple(sorted(i for i in self.pruned if i >= self.live_start or i in shown))
        return ContextSnapshot(point, self.end, self.live_start, self.summary, compactions,
                               self.est_total, self.true_total, self.kept, pruned)


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
        self.rejected = 0  # summaries the policy refused to fold
        self._prune_hook = getattr(self.policy, "prune", None)
        self._check_steps(config.context_window)
        begin = getattr(self.policy, "begin", None)  # a stateful policy (external adapter) starts here
        if begin is not None:
            begin(session, self.estimate.__getitem__, self.context.system_est)
        # Message indices where the policy compacts whatever the trigger says (recorded compaction points);
        # a set lookup per message, so the loop stays O(1) per step.
        forced = getattr(self.policy, "compaction_points", None) or frozenset()
        try:
            for index, message in enumerate(session.messages):
                if index in forced:
                    self._force(index)
                self._take_point(f"message:{index}")
                if message.role == "assistant":
                    self.send(index)
                self.context.append(index)
            if len(session.messages) in forced:
                self._force(len(session.messages))
            self.send(len(session.messages))  # the request that would carry the next question
        finally:
            end = getattr(self.policy, "end", None)
            if end is not None:
                end()
        self._take_point("end")
        return self.replay

    # -- the hot path: one send ---------------------------------------------------------------

    def send(self, index: int) -> None:
        context, config = self.context, self.policy.config
        self.replay.sends += 1
        mid_turn = index > 0 and self.session.messages[index - 1].role == "tool"
        if self._prune_hook is not None and not mid_turn:
            self._prune(index)
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

    def _force(self, index: int) -> None:
        """Compact at a point the policy names (`compaction_points`), with the plans it gives for it."""
        for plan in self.policy.forced_plans(self._view()):
            self._compact(index, self.policy.config, plan)

    def _compact(self, index: int, config, plan: Plan | None = None) -> None:
        context = self.context
        started = time.perf_counter()
        before_est, before_true = context.est_total, context.true_total
        if plan is None and config.mode == "lookup":
            self._lookup(index, started, before_est, before_true)
            return
        plan = plan or self.policy.plan(self._view())
        if plan.recorded_summary is not None:
            self._fold_recorded(index, plan, started, before_est, before_true)
            return
        if plan.tail_start <= context.live_start:
            self._risk("nothing_to_fold", index, before_est, "the tail is the whole live context")
            return
        number = len(self.replay.events) + 1
        budget = plan.summary_tokens or config.summary_tokens
        first = context.live_start  # first message the summarizer is given
        request_true = (context.system_true + context.kept_true + context.summary_true
                        + context.span_true(range(first, plan.tail_start)))
        if request_true + budget > config.context_window:
            self._risk("summary_request_too_big", index, request_true,
                       f"summary request {request_true} + output {budget} "
                       f"> window {config.context_window}")
            while plan.trim_summary_request and plan.tail_start - first > 1 \
                    and request_true + budget > config.context_window:
                request_true -= context.true_of(first)  # codex: drop the oldest item and retry
                first += 1
        call_started = time.perf_counter()
        result = None
        if plan.summarize:
            result = self.summarizer.summarize(SummaryInput(
                self.session.system, context.summary, self._head(first, plan), budget, number, first,
                kept=tuple(self.session.messages[i] for i in context.kept),
                split_turn_start=plan.split_turn_start))
        call_time = time.perf_counter() - call_started
        text = result.text if result else None
        if text is not None and plan.summary_appendix:
            text = f"{text}\n\n{plan.summary_appendix}"  # pi's file lists, carried by the policy
        block = summary_block(text, number) if text is not None else None
        if plan.reject_if_larger and context.totals_after(block, plan.tail_start, plan.kept_head)[0] > before_est:
            self.rejected += 1
            self._risk("summary_rejected", index, before_est,
                       f"the summary would have grown the context past {before_est} tokens; kept it as it was")
            return
        head_start = context.live_start
        context.fold(block, plan.tail_start, plan.kept_head)
        self._tell_folded(plan.tail_start, block)
        wall = time.perf_counter() - started
        self._record(CompactionEvent(
            number=number, send_index=index, source="summarizer" if result else "truncate",
            head_start=head_start, tail_start=plan.tail_start, turns_kept=plan.turns_kept,
            steps_kept=plan.steps_kept, truncated_to_step=plan.truncated_to_step,
            tokens_before_est=before_est, tokens_before_true=before_true,
            tokens_after_est=context.est_total, tokens_after_true=context.true_total,
            summary_tokens=self.true.tokens.count_text(text) if text is not None else 0,
            summary_request_tokens=request_true, wall_time_s=wall,
            harness_time_s=max(0.0, wall - call_time),
            model_time_s=result.model_time_s if result else 0.0,
            latency_source=result.latency_source if result else "modelled",
            summarizer=result.model if result else "none",
            finish_reason=result.finish_reason if result else "stop",
            usage=_usage_dict(result.usage) if result else None,
            summary_budget_tokens=budget if result else 0,
        ), config)

    def _fold_recorded(self, index: int, plan: Plan, started: float, before_est: int, before_true: int) -> None:
        """The session's own summary, folded as it was recorded: no model call, no harness header."""
        context, text = self.context, plan.recorded_summary
        head_start = context.live_start
        context.fold(text, plan.tail_start, plan.kept_head)
        self._tell_folded(plan.tail_start, text)
        wall = time.perf_counter() - started
        self._record(CompactionEvent(
            number=len(self.replay.events) + 1, send_index=index, source="recorded", head_start=head_start,
            tail_start=plan.tail_start, turns_kept=plan.turns_kept, steps_kept=plan.steps_kept,
            truncated_to_step=plan.truncated_to_step, tokens_before_est=before_est, tokens_before_true=before_true,
            tokens_after_est=context.est_total, tokens_after_true=context.true_total,
            summary_tokens=self.true.tokens.count_text(text), summary_request_tokens=0,
            wall_time_s=wall, harness_time_s=wall, model_time_s=0.0, latency_source="recorded",
            summarizer="recorded"), self.policy.config)

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
        self._tell_folded(block.covers, block.content)
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
        # Each policy judges with its own trigger; one without a token trigger (an external adapter,
        # recorded points) cannot be judged here.
        would_trigger = getattr(self.policy, "would_trigger", None)
        if would_trigger is not None and would_trigger(event.tokens_after_est):
            self._risk("no_shrink", event.send_index, event.tokens_after_est,
                       "the compacted context is still at or over the trigger")
        self._take_point(f"compaction:{event.number}")

    # -- peer extras: views, pruning, the summarizer's input, stateful policies -------------------

    def _view(self) -> ContextView:
        c = self.context
        tokens = c.est_of if c.pruned else self.estimate.__getitem__
        return ContextView(self.session, c.live_start, c.end, tokens, c.kept, c.summary, self.rejected, c.pruned)

    def _prune(self, index: int) -> None:
        """Clear the old tool outputs the policy names; asked between whole turns only."""
        context, messages = self.context, self.session.messages
        chosen = tuple(i for i in self._prune_hook(self._view())
                       if context.live_start <= i < context.end and messages[i].role == "tool"
                       and i not in context.pruned)
        if not chosen:
            return
        before = context.est_total
        for i in chosen:
            context.prune(i)
        self.replay.prunes.append(PruneEvent(index, chosen, before - context.est_total))

    def _head(self, start: int, plan: Plan) -> tuple[Message, ...]:
        """The messages folded now, as the summarizer sees them (pruned and cut where the policy says)."""
        head = self.session.messages[start:plan.tail_start]
        if not self.context.pruned and plan.tool_result_chars is None:
            return head
        shown = []
        for i, message in enumerate(head, start):
            if i in self.context.pruned:
                message = pruned_message(message)
            elif message.role == "tool" and plan.tool_result_chars is not None:
                message = cut_tool_result(message, plan.tool_result_chars)
            shown.append(message)
        return tuple(shown)

    def _tell_folded(self, tail_start: int, summary: str | None) -> None:
        folded = getattr(self.policy, "folded", None)
        if folded is not None:
            folded(tail_start, self.context.kept, summary, self.context.summary_est)

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


def pruned_message(message: Message) -> Message:
    return replace(message, content=PRUNED_MARKER)


def cut_tool_result(message: Message, chars: int) -> Message:
    """The first `chars` characters of a tool result and a marker saying how much was cut."""
    if len(message.content) <= chars:
        return message
    cut = len(message.content) - chars
    return replace(message, content=f"{message.content[:chars]}\n[... {cut} more characters of tool output cut]")


def _usage_dict(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    return asdict(usage) if hasattr(usage, "__dataclass_fields__") else dict(usage)
