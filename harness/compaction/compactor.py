"""The auto-compaction path: replay a session message by message and compact as the runtime would.

On every send (before each assistant message, between tool rounds too, and once more at the end,
where the next question would be sent) the policy judges the estimated size of the request. When it
fires, the policy picks the tail, `fold.prepare` decides what the compaction does, and `Compactor._carry_out`
does it: the summarizer folds the head (with the summary in effect), and the context becomes
`system + one summary block + tail`. Totals are running sums, so a send costs the same however long the
history is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, NoReturn

from harness.compaction.context import LiveContext, Replay
from harness.compaction.events import CompactionEvent, PruneEvent, Risk, SummaryCall, Totals, compaction_event
from harness.compaction.fold import NOTHING, Fold, prepare, with_appendix
from harness.compaction.provider import NOT_COMPACTED, kept_indices
from harness.compaction.summarizer import Summarizer, SummaryInput, SummaryResult, summary_block, within_budget
from harness.failure import RequestFailed, RequestFailure
from harness.policy.base import ContextView, Plan, Policy, SendPoint
from harness.redact import redact
from harness.session import Session
from harness.tokens import MessageTokens, TokenCounter, counter


class _ReplayStopped(Exception):
    """Unwinds the send loop after a summarizer request failed for good (Compactor.failure says which)."""


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
    # A run's case keeps what a failed summarizer request did not need: the replay stops there and `failure`
    # says why (later points are never taken). Other callers (simulate, studies) see the error itself.
    stop_on_failure: bool = False
    failure: RequestFailure | None = None

    def run(self) -> Replay:
        session, config = self.session, self.policy.config
        self.estimate = self.estimate or MessageTokens(self.estimator, session.messages)
        self.true = self.true or MessageTokens(self.true_counter, session.messages)
        self.context = LiveContext(session, self.estimate, self.true)
        self.replay = Replay(session)
        self.wanted = set(self.points)
        self.rejected = 0  # summaries the policy refused to fold
        self._prunes = self.policy.prunes  # read once: asked on every send
        self._check_steps(config.context_window)
        self.policy.begin(session, self.estimate.__getitem__, self.context.system_est)
        # Message indices where the policy compacts whatever the trigger says (recorded compaction points);
        # a set lookup per message, so the loop stays O(1) per step.
        forced = self.policy.compaction_points
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
        except _ReplayStopped:
            return self.replay  # the snapshots taken so far stand; every later point records the failure
        finally:
            self.policy.end()
        self._take_point("end")
        return self.replay

    # -- the hot path: one send ---------------------------------------------------------------

    def send(self, index: int) -> None:
        context, config = self.context, self.policy.config
        self.replay.sends += 1
        self.replay.timeline.append((index, context.est_total, context.true_total))  # the report's timeline
        mid_turn = index > 0 and self.session.messages[index - 1].role == "tool"
        if self._prunes and not mid_turn:
            self._prune(index)
        fired = self.policy.should_compact(SendPoint(index, context.est_total, mid_turn))
        if fired:
            self._compact(index)
        elif context.true_total > config.context_window:
            self._risk("estimator_miss", index, context.true_total,
                       f"true {context.true_total} > window {config.context_window}, "
                       f"estimate {context.est_total} did not trigger")
        if context.true_total + config.max_output_tokens > config.context_window:
            self._risk("response_may_be_cut", index, context.true_total,
                       f"input {context.true_total} + max output {config.max_output_tokens} "
                       f"> window {config.context_window}")

    # -- compaction: decide (fold.prepare), then carry out ------------------------------------

    def _force(self, index: int) -> None:
        """Compact at a point the policy names (`compaction_points`), with the plans it gives for it."""
        started = time.perf_counter()
        for plan in self.policy.forced_plans(self._view()):
            self._compact(index, plan, started)
            started = time.perf_counter()

    def _compact(self, index: int, plan: Plan | None = None, started: float | None = None) -> None:
        started = time.perf_counter() if started is None else started
        config = self.policy.config
        if plan is None and config.mode != "lookup":
            plan = self.policy.plan(self._view())
        self._carry_out(prepare(self.context, config, index, plan, len(self.replay.events) + 1), started)

    def _carry_out(self, fold: Fold, started: float) -> None:
        """The one fold path: every kind of compaction is folded, told, checked and recorded here."""
        self.replay.risks.extend(fold.risks)
        if fold.source == NOTHING:
            return
        context, number = self.context, len(self.replay.events) + 1
        before, tail = context.totals, fold.tail
        text, block, result, waiting, kept = fold.text, fold.text, None, 0.0, tail.kept_head
        kept_text = tail.kept_text  # kept items with no message: messages of the context, not summary
        if fold.ask is not None:
            result, waiting = self._summarize(fold.ask.request)
            if result.finish_reason == NOT_COMPACTED:  # no item came back: an outcome, never a fold
                self._not_compacted(fold, result)
                return
            provider = bool(result.extra.get("provider_item"))
            # A provider item is sent back as it came: nothing may be appended to the text standing for it.
            text = result.text if provider else with_appendix(result.text, fold.ask.appendix)
            block = summary_block(text, number)
            if provider:  # the compacted context is the provider's: its kept user messages, then the item
                kept, kept_text = self._provider_kept(fold, result.extra.get("kept_user") or ()), ()
            if fold.ask.reject_if_larger and context.totals_after(block, tail.start, kept, kept_text).est > before.est:
                self._reject(fold, result, text)
                return
            # kept: graded and carried on as the budget allows (the policy judged what was written); a placeholder
            # holds no facts and stands for a summary of its size under the runtime's estimate: left whole
            if not provider and not getattr(self.summarizer, "sized_by_estimate", False):
                result = within_budget(result, fold.ask.request.budget_tokens, self.true.tokens)
                text = with_appendix(result.text, fold.ask.appendix)
                block = summary_block(text, number)
        head_start = context.live_start
        context.fold(block, tail.start, kept, kept_text)
        self.policy.folded(tail.start, context.kept, block, context.summary_est)
        after = context.totals
        self._after_fold(fold.send_index, number, before, after)
        summary_tokens = self.true.tokens.count_text(text) if text is not None else 0
        event = compaction_event(
            number, fold.send_index, fold.source, head_start=head_start, tail=tail, before=before, after=after,
            summary_tokens=summary_tokens, request_tokens=fold.request_tokens,
            started=started, waiting_s=waiting, result=result,
            budget_tokens=fold.ask.request.budget_tokens if fold.ask else 0)
        self.replay.events.append(event)
        if result is not None:
            self.replay.summaries.append(SummaryCall(fold.ask.request, result, tail.start, fold.request_tokens,
                                                     summary_tokens, event))
        if self.notify:
            self.notify(event)

    def _summarize(self, request: SummaryInput) -> tuple[SummaryResult, float]:
        """The summarizer's answer and the seconds spent waiting on its model (all of the call, unless the
        summarizer says how much of it was its client's)."""
        called = time.perf_counter()
        try:
            result = self.summarizer.summarize(request)
        except RequestFailed as exc:
            if not self.stop_on_failure:
                raise
            self._stop(exc)
        spent = time.perf_counter() - called
        return result, spent if result.client_time_s is None else min(spent, result.client_time_s)

    def _stop(self, exc: RequestFailed) -> NoReturn:
        """A summarizer request failed after its retries: without its summary nothing later can be replayed."""
        self.failure = RequestFailure("summarizer", redact(str(exc)), len(self.replay.events) + 1)
        self.replay.notices.append(f"replay stopped: {self.failure.describe()}")
        raise _ReplayStopped from None

    def _reject(self, fold: Fold, result: SummaryResult, text: str) -> None:
        """The policy keeps the context as it was; the call is still reported, paired with no compaction."""
        before = self.context.est_total
        self.rejected += 1
        self._risk("summary_rejected", fold.send_index, before,
                   f"the summary would have grown the context past {before} tokens; kept it as it was")
        self.replay.summaries.append(SummaryCall(fold.ask.request, result, fold.tail.start, fold.request_tokens,
                                                 self.true.tokens.count_text(text), None))

    def _not_compacted(self, fold: Fold, result: SummaryResult) -> None:
        """The provider's reply held no compaction: the context stays as it was, the call is reported."""
        self.replay.summaries.append(SummaryCall(fold.ask.request, result, fold.tail.start, fold.request_tokens,
                                                 0, None))

    def _provider_kept(self, fold: Fold, texts: Any) -> tuple[int, ...]:
        candidates = [*self.context.kept, *range(self.context.live_start, fold.tail.start)]
        return kept_indices(self.session.messages, candidates, list(texts))

    def _after_fold(self, send_index: int, number: int, before: Totals, after: Totals) -> None:
        # The runtime's non-blocking notice; the replay goes on without waiting for anyone.
        self.replay.notices.append(f"context compacted: {before.est} -> {after.est} tokens (estimated)")
        # Each policy judges with its own trigger; one without a token trigger (an external adapter,
        # recorded points) says no.
        if self.policy.would_trigger(after.est):
            self._risk("no_shrink", send_index, after.est, "the compacted context is still at or over the trigger")
        self._take_point(f"compaction:{number}", number)

    # -- peer extras: views, pruning -----------------------------------------------------------

    def _view(self) -> ContextView:
        c = self.context
        tokens = c.est_of if c.pruned else self.estimate.__getitem__
        return ContextView(self.session, c.live_start, c.end, tokens, c.kept, c.summary, self.rejected, c.pruned)

    def _prune(self, index: int) -> None:
        """Clear the old tool outputs the policy names; asked between whole turns only."""
        context, messages = self.context, self.session.messages
        chosen = tuple(i for i in self.policy.prune(self._view())
                       if context.live_start <= i < context.end and messages[i].role == "tool"
                       and i not in context.pruned)
        if not chosen:
            return
        before = context.est_total
        for i in chosen:
            context.prune(i)
        self.replay.prunes.append(PruneEvent(index, chosen, before - context.est_total))

    # -- bookkeeping --------------------------------------------------------------------------

    def _risk(self, kind: str, index: int, tokens: int, detail: str) -> None:
        self.replay.risks.append(Risk(kind, index, tokens, detail))

    def _take_point(self, point: str, compactions: int | None = None) -> None:
        if point in self.wanted:
            done = len(self.replay.events) if compactions is None else compactions
            self.replay.snapshots[point] = self.context.snapshot(point, done)

    def _check_steps(self, window: int) -> None:
        for turn in self.session.turns:
            for step in turn.steps:
                size = self.true.span(range(step.start, step.end))
                if size > window:
                    self._risk("step_exceeds_window", step.start, size,
                               f"step at message {step.start} is {size} tokens, window {window}")


def replay(session: Session, policy: Policy, summarizer: Summarizer, **options: Any) -> Replay:
    return Compactor(session, policy, summarizer, **options).run()
