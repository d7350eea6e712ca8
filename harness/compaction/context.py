"""The live context of a replay (what the next request would contain), its snapshots, and the replay's result."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from harness.compaction.events import RISK_KINDS, CompactionEvent, PruneEvent, Risk, SummaryCall, Totals
from harness.kept_items import KeptText, kept_messages
from harness.session import Message, Session
from harness.tokens import MessageTokens

# What a pruned tool result says instead of its output (opencode, claude-code peers).
PRUNED_MARKER = "[tool output cleared to save context]"


def pruned_message(message: Message) -> Message:
    return replace(message, content=PRUNED_MARKER)


@dataclass(frozen=True)
class ContextSnapshot:
    """The context at a probe point: `system + kept + summary + messages[live_start:end]`.

    `kept` holds messages from before the summary that a policy keeps verbatim ahead of it (codex keeps
    recent user messages); the default policy keeps none. `kept_text` are kept items with no message of their
    own (a recorded Codex compaction), shown among the kept messages at their slots."""

    point: str
    end: int
    live_start: int
    summary: str | None
    compactions: int
    est_tokens: int
    true_tokens: int
    kept: tuple[int, ...] = ()
    pruned: tuple[int, ...] = ()  # tool results shown as PRUNED_MARKER (pruning peers only)
    kept_text: tuple[KeptText, ...] = ()
    # (index, content): messages as a real runtime's request at this point carried them (its own cuts of tool
    # outputs, its pruning), shown instead of the session's; the token counts above stay the replay's
    sent: tuple[tuple[int, str], ...] = ()

    def parts(self, session: Session) -> tuple[list[Message], str | None, list[Message]]:
        """The messages before the summary block, the block, and the messages after it."""
        messages = session.messages
        if self.sent:
            messages = list(messages)
            for index, content in self.sent:
                messages[index] = replace(messages[index], content=content)
        kept = kept_messages(messages, self.kept, self.kept_text)
        live = list(messages[self.live_start:self.end])
        for i in self.pruned:
            if i >= self.live_start:
                live[i - self.live_start] = pruned_message(messages[i])
        return kept, self.summary, live


@dataclass
class Replay:
    """What one replay produced. `summaries` holds every summarizer call, kept or rejected, with its event."""

    session: Session
    events: list[CompactionEvent] = field(default_factory=list)
    risks: list[Risk] = field(default_factory=list)
    snapshots: dict[str, ContextSnapshot] = field(default_factory=dict)
    sends: int = 0
    notices: list[str] = field(default_factory=list)
    prunes: list[PruneEvent] = field(default_factory=list)
    summaries: list[SummaryCall] = field(default_factory=list)
    timeline: list[tuple[int, int, int]] = field(default_factory=list)  # per send: index, est and true tokens

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
        self.kept_text: tuple[KeptText, ...] = ()  # kept items with no message of their own (recorded codex)
        self.kept_true = 0
        self.pruned: set[int] = set()  # tool results cleared by a pruning peer
        self.marker_est, self.marker_true = estimate.text(PRUNED_MARKER), true.text(PRUNED_MARKER)

    @property
    def totals(self) -> Totals:
        return Totals(self.est_total, self.true_total)

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

    def totals_after(self, summary: str | None, tail_start: int, kept: tuple[int, ...] = (),
                     kept_text: tuple[KeptText, ...] = ()) -> Totals:
        """Estimated and true totals of `system + kept + summary + messages[tail_start:end]`."""
        span = range(tail_start, self.end)
        est = sum(map(self.est_of, span)) if self.pruned else self.estimate.span(span)
        est += self.system_est + self.estimate.text(summary)
        est += self._kept_tokens(self.est_of, self.estimate, kept, kept_text)
        true = self.span_true(span) + self.system_true + self.true.text(summary)
        true += self._kept_tokens(self.true_of, self.true, kept, kept_text)
        return Totals(est, true)

    def fold(self, summary: str | None, tail_start: int, kept: tuple[int, ...] = (),
             kept_text: tuple[KeptText, ...] = ()) -> None:
        self.summary, self.live_start, self.kept, self.kept_text = summary, tail_start, kept, kept_text
        self.summary_est, self.summary_true = self.estimate.text(summary), self.true.text(summary)
        self.kept_true = self._kept_tokens(self.true_of, self.true, kept, kept_text)
        self.est_total, self.true_total = self.totals_after(summary, tail_start, kept, kept_text)

    def kept_messages(self) -> list[Message]:
        """What the context holds ahead of its summary, in order (kept messages and kept texts)."""
        return kept_messages(self.session.messages, self.kept, self.kept_text)

    @staticmethod
    def _kept_tokens(of_index: Callable[[int], int], counts: MessageTokens, kept: tuple[int, ...],
                     kept_text: tuple[KeptText, ...]) -> int:
        # a kept text counts as the message it stands for, framing included, like any kept message
        return sum(map(of_index, kept)) + sum(counts.text(item.content) for item in kept_text)

    def snapshot(self, point: str, compactions: int) -> ContextSnapshot:
        shown = set(self.kept)
        pruned = tuple(sorted(i for i in self.pruned if i >= self.live_start or i in shown))
        return ContextSnapshot(point, self.end, self.live_start, self.summary, compactions,
                               self.est_total, self.true_total, self.kept, pruned, self.kept_text)
