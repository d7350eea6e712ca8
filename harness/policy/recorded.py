"""Replaying a transcript's own compactions, and compacting with another policy at the same points (issue 9).

- `recorded` (a registered policy): no trigger. Before the message that follows each `compaction` line of the
  session, the context becomes `system + kept + that summary + messages[covers:]`, exactly as the agent had it.
  `kept` is what the transcript kept beside the summary: for a Codex `compacted` record every item of its
  `replacement_history` (developer and user messages, shown ahead of the summary in their order, as Codex sends
  them); an item that matches no message stays a kept message of its own at its place in that order
  (`harness.kept_items`), counted in the context, not in the summary; for Claude Code nothing.
- `AtRecordedPoints` wraps any other policy: its trigger is off and it compacts at the very same points, with
  either the recorded tail (`tail="recorded"`: same head, same kept messages) or its own tail (`tail="policy"`),
  and a summary budget equal to the recorded summary's token count unless a budget is given, so the two
  summaries are compared at equal size.

Both read the session in `begin` (the compactor calls it before the replay) and name their points through the
`compaction_points` / `forced_plans` hooks of `harness.policy.base.Policy`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from harness.errors import HarnessError
from harness.kept_items import KeptText
from harness.policy.base import (ContextView, ModelSummary, Plan, Policy, PolicyConfig, RecordedSummary, SendPoint,
                                 Tail)
from harness.session import CompactionRecord, Session
from harness.tokens import counter

TAILS = ("recorded", "policy")


@dataclass(frozen=True)
class RecordedPoint:
    """One recorded compaction, ready to fold: before message `position`, the tail starts at `covers`."""

    number: int  # 1 for the first compaction line of the session
    position: int
    covers: int
    summary: str  # the recorded summary, nothing else: its size is the budget ours gets
    kept: tuple[int, ...]  # messages kept verbatim ahead of the summary, in the kept history's order (Codex)
    origin: str
    kept_text: tuple[KeptText, ...] = ()  # kept items that match no message: kept messages of their own, not summary


def kept_items(record: CompactionRecord) -> list[dict]:
    """The kept history of a compaction line (`kept_history`), or the user texts older imports kept."""
    meta = record.meta or {}
    if isinstance(meta.get("kept_history"), list):
        return [item for item in meta["kept_history"] if isinstance(item, dict)]
    return [{"role": "user", "content": t} for t in meta.get("kept_user_messages") or [] if isinstance(t, str)]


def _same_item(item: dict, message) -> bool:
    """A kept item is the message it copies: same content, and the role the importer gave that item."""
    if message.content != item.get("content"):
        return False
    role, source = item.get("role"), (message.meta or {}).get("source_role")
    if role in ("developer", "system"):
        return message.role == "user" and source == role
    return message.role == role and source is None


def kept_indices(session: Session, record: CompactionRecord) -> tuple[tuple[int, ...], tuple[KeptText, ...]]:
    """The Codex replacement history as message indices, in its order, and the items that match none, each
    with its slot in that order.

    Codex also puts the summary itself in the replacement history as a user message: that one is the summary,
    not a kept message. Each kept item matches the latest not yet used message before `covers` with the same
    role and content (the importer redacts both the same way)."""
    summary = record.content.strip()
    items = [i for i in kept_items(record)
             if not (i.get("role") == "user" and summary and summary in str(i.get("content", "")))]
    used: set[int] = set()
    found: list[int] = []
    unmatched: list[KeptText] = []
    messages = session.messages
    for item in items:
        match = next((i for i in range(record.covers - 1, -1, -1)
                      if i not in used and _same_item(item, messages[i])), None)
        if match is None:
            role = item.get("role")
            unmatched.append(KeptText(len(found) + len(unmatched), role if isinstance(role, str) else None,
                                      str(item.get("content", ""))))
        else:
            used.add(match)
            found.append(match)
    return tuple(found), tuple(unmatched)


def recorded_points(session: Session) -> tuple[RecordedPoint, ...]:
    points = []
    for number, record in enumerate(sorted(session.compactions, key=lambda c: c.position), start=1):
        kept, unmatched = kept_indices(session, record)
        # A kept item we cannot place stays in the context as a message of its own, never dropped nor summary.
        points.append(RecordedPoint(number, record.position, record.covers, record.content, kept, record.origin,
                                    unmatched))
    return tuple(points)


def points_by_position(session: Session, required: bool = True) -> dict[int, tuple[RecordedPoint, ...]]:
    grouped: dict[int, tuple[RecordedPoint, ...]] = {}
    for point in recorded_points(session):
        grouped[point.position] = grouped.get(point.position, ()) + (point,)
    if not grouped and required:
        raise HarnessError(f"{session.path}: the session has no compaction records to replay; import a Claude Code "
                           f"or Codex transcript that compacted (FORMATS.md)")
    return grouped


def recorded_plan(point: RecordedPoint) -> Plan:
    return Plan(recorded_tail(point), RecordedSummary(point.summary))


def recorded_tail(point: RecordedPoint) -> Tail:
    return Tail(point.covers, 0, 0, False, kept_head=point.kept, kept_text=point.kept_text)


@dataclass
class RecordedPolicy(Policy):
    """The session's own compactions, exactly where they happened. Stateful per replay (`begin` reads the session)."""

    config: PolicyConfig
    name: str = "recorded"
    points: dict[int, tuple[RecordedPoint, ...]] = field(default_factory=dict)
    none_is_fine: bool = False  # a real runtime that never compacted (its control, a short case): nothing to fold

    def begin(self, session: Session, tokens: Callable[[int], int], system_tokens: int) -> None:
        self.points = points_by_position(session, required=not self.none_is_fine)

    @property
    def compaction_points(self) -> frozenset[int]:
        return frozenset(self.points)

    def should_compact(self, send: SendPoint) -> bool:
        return False  # no trigger: only the recorded points compact

    def plan(self, view: ContextView) -> Plan:
        return Plan(Tail(view.end, 0, 0, False))  # never asked (no trigger); keeps the interface whole

    def forced_plans(self, view: ContextView) -> tuple[Plan, ...]:
        return tuple(recorded_plan(p) for p in self.points.get(view.end, ()))


@dataclass
class AtRecordedPoints(Policy):
    """Another policy compacting exactly at the recorded points, its own trigger off.

    The wrapped policy's other hooks (prune, folded, end, would_trigger) are passed through, so the compactor
    sees the wrapped policy's behaviour everywhere but the trigger and the compaction points."""

    inner: Policy
    tail: str = "recorded"
    summary_tokens: int | None = None  # None: each recorded summary's own token count
    count_tokens: Callable[[str], int] | None = None  # the true counter (default o200k, as the compactor's)
    points: dict[int, tuple[RecordedPoint, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.tail not in TAILS:
            raise HarnessError(f"unknown tail {self.tail!r} for recorded points: choose one of {', '.join(TAILS)}")
        if self.summary_tokens is not None and self.summary_tokens <= 0:
            raise HarnessError(f"--summary-tokens must be positive, not {self.summary_tokens}")

    @property
    def name(self) -> str:
        return f"{self.inner.name}@recorded-points"

    @property
    def config(self) -> PolicyConfig:
        return self.inner.config

    def begin(self, session: Session, tokens: Callable[[int], int], system_tokens: int) -> None:
        self.points = points_by_position(session)
        if self.count_tokens is None:
            self.count_tokens = counter("o200k").count_text
        self.inner.begin(session, tokens, system_tokens)

    @property
    def compaction_points(self) -> frozenset[int]:
        return frozenset(self.points)

    def should_compact(self, send: SendPoint) -> bool:
        return False  # the policy's own trigger is off in this mode

    def plan(self, view: ContextView) -> Plan:
        return self.inner.plan(view)

    def would_trigger(self, tokens: int) -> bool:
        return self.inner.would_trigger(tokens)

    @property
    def prunes(self) -> bool:
        return self.inner.prunes

    def prune(self, view: ContextView) -> tuple[int, ...]:
        return self.inner.prune(view)

    def folded(self, tail_start: int, kept: tuple[int, ...], summary: str | None, summary_tokens: int) -> None:
        self.inner.folded(tail_start, kept, summary, summary_tokens)

    def end(self) -> None:
        self.inner.end()

    def budget(self, point: RecordedPoint) -> int:
        return self.summary_tokens or max(1, self.count_tokens(point.summary))

    def forced_plans(self, view: ContextView) -> tuple[Plan, ...]:
        plans = []
        for point in self.points.get(view.end, ()):
            plan = Plan(recorded_tail(point)) if self.tail == "recorded" else self.inner.plan(view)
            summary = plan.summary
            if isinstance(summary, ModelSummary):  # a truncating policy stays one: no summary, no budget
                summary = replace(summary, budget_tokens=self.budget(point))
            plans.append(replace(plan, summary=summary))
        return tuple(plans)


def at_recorded_points(policy: Policy, tail: str = "recorded", summary_tokens: int | None = None) -> Policy:
    if policy.name == "recorded":
        return policy  # already compacts at the recorded points
    return AtRecordedPoints(policy, tail, summary_tokens)
