"""Tail helpers the peers share: describing a tail, fitting steps in a budget.

- `turns`/`steps` of a `Tail` count the turns and steps (assistant messages) the tail touches;
  `truncated_to_step` means the tail starts inside a turn (that turn's user message is in the head).
- a cut always lands on a user or assistant message, never on a tool result.
"""

from __future__ import annotations

from harness.policy.base import ContextView, Tail

CUT_ROLES = ("user", "assistant")


def describe_tail(view: ContextView, tail_start: int) -> Tail:
    """The tail from `tail_start`, with the turns and steps it keeps and whether it splits a turn."""
    turns = steps = 0
    split_at: int | None = None
    for turn in view.turns_newest_first():
        if turn.end <= tail_start:
            break
        turns += 1
        steps += sum(1 for s in turn.step_starts if s >= tail_start)
        if turn.start < tail_start:
            split_at = turn.start  # the prefix of this turn (from here) lands in the head
    return Tail(tail_start, turns, steps, split_at is not None, split_turn_start=split_at)


def recent_steps_within(view: ContextView, step_starts: tuple[int, ...], end: int, budget: int) -> int | None:
    """The oldest step start whose steps up to `end` fit in `budget`, or None when not even the newest does."""
    chosen, size = None, 0
    for start in reversed(step_starts):
        size += view.span_tokens(start, end)
        if size > budget:
            break
        chosen, end = start, start
    return chosen


def is_tool(view: ContextView, index: int) -> bool:
    return view.session.messages[index].role == "tool"
