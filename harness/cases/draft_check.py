"""The drafter's own checks of a draft probe, before a person sees it (issue 18, item 7).

A draft is sound when (1) every expected item is literally in the message it was planted at, (2) it has an
`anchor` that stands beside one of them there and its accept and reject examples are graded correctly by its own
matchers, and (3) the builtin answerer passes it on the full
history up to its probe point, the same `full` condition `run` grades. A draft failing one carries the reason.
"""

from __future__ import annotations

from typing import Any

from harness.cases.schema import Probe
from harness.matching import Haystack, contains
from harness.models.base import ModelClient
from harness.probes import Condition, anchor_problems, example_problems, grade
from harness.session import Session, message_text

ANSWERER = "builtin"


def probe_of(draft: dict[str, Any]) -> Probe:
    """The probe a draft table describes (its items as tuples of alternatives)."""
    items = tuple((i,) if isinstance(i, str) else tuple(i) for i in draft["all"])
    return Probe(draft["id"], draft["kind"], draft["question"], items, tuple(draft.get("none", ())),
                 anchor=tuple(draft.get("anchor", ())), planted_at=draft["planted_at"], at=draft.get("at", "end"), draft=True,
                 accept=tuple(draft.get("accept", ())), reject=tuple(draft.get("reject", ())))


def point_end(session: Session, at: str) -> int | None:
    """How many messages the full history holds at a probe point (`compaction:N`: the recorded compaction's
    position, as `run --at-recorded-points` takes it); None when the session never reaches it."""
    if at == "end":
        return len(session.messages)
    number = int(at.split(":")[1])
    if at.startswith("message:"):
        return number if number <= len(session.messages) else None
    records = sorted(session.compactions, key=lambda c: c.position)
    return records[number - 1].position if number <= len(records) else None


def draft_problem(session: Session, draft: dict[str, Any], answerer: ModelClient) -> str | None:
    """Why the draft is unsound, or None."""
    probe = probe_of(draft)
    end = point_end(session, probe.at)
    if end is None or probe.planted_at >= end:
        return f"planted at message {probe.planted_at}, not before its point {probe.at}"
    planted = Haystack(message_text(session.messages[probe.planted_at]))
    for alternatives in probe.all:
        if not any(contains(planted, a) for a in alternatives):
            return f"expected {alternatives[0]!r} is not in message {probe.planted_at}"
    if not probe.accept or not probe.reject:
        return "no accept or no reject example to test its matchers with"
    if not probe.anchor:
        return "no anchor: no term of its message names what the fact is about"
    problems = example_problems(probe) + anchor_problems(probe, session)
    if problems:
        return problems[0]
    full = Condition("full", session.system, tuple(session.messages[:end]), None)
    result = grade(full, probe, answerer, ANSWERER)
    if not result.answered:
        answer = " ".join((result.answer or "").split())
        return f"fails on the full history: the builtin answered {answer[:120]!r}"
    return None


def sort_drafts(session: Session, drafts: list[dict[str, Any]],
                answerer: ModelClient) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(sound drafts, dropped drafts each with its `dropped` reason)."""
    kept, dropped = [], []
    for draft in drafts:
        reason = draft_problem(session, draft, answerer)
        if reason is None:
            kept.append(draft)
        else:
            dropped.append({**draft, "dropped": reason})
    return kept, dropped
