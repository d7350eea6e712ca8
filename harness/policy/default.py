"""The policy under test (POLICY.md): absolute reserve, turn-first tail under a token cap."""

from __future__ import annotations

from dataclasses import dataclass

from harness.policy.base import ContextView, Plan, Policy, PolicyConfig, SendPoint, Tail


def reserve_trigger(config: PolicyConfig, tokens: int) -> bool:
    """Compact when the estimate reaches `context_window - reserve_tokens` (>=), on every send."""
    return config.active and tokens >= config.context_window - config.reserve_tokens


def turn_first_tail(config: PolicyConfig, view: ContextView) -> Plan:
    """The last `tail_turns` turns; drop the oldest while over the cap; then fall back to one step."""
    turns = []
    for turn in view.turns_newest_first():
        turns.append(turn)
        if len(turns) == config.tail_turns:
            break
    if not turns:
        return Plan(Tail(view.end, 0, 0, False))
    turns.reverse()  # oldest first
    size = view.span_tokens(turns[0].start, view.end)
    while len(turns) > 1 and size > config.tail_cap_tokens:
        size -= view.span_tokens(turns[0].start, turns[0].end)
        turns.pop(0)
    last = turns[0]
    if len(turns) == 1 and size > config.tail_cap_tokens and last.step_starts:
        # One turn still over the cap: keep only its most recent step, whole, even if it alone exceeds
        # the cap. The turn's user message then lands in the head, so the summary carries the request.
        step_start = last.step_starts[-1]
        return Plan(Tail(step_start, 1, 1, truncated_to_step=step_start > last.start))
    steps = sum(len(t.step_starts) for t in turns)
    return Plan(Tail(turns[0].start, len(turns), steps, False))


@dataclass(frozen=True)
class DefaultPolicy(Policy):
    """The runtime's automatic compaction, as POLICY.md states it."""

    config: PolicyConfig
    name: str = "default"

    def would_trigger(self, tokens: int) -> bool:
        return reserve_trigger(self.config, tokens)

    def should_compact(self, send: SendPoint) -> bool:
        return reserve_trigger(self.config, send.context_tokens)

    def plan(self, view: ContextView) -> Plan:
        return turn_first_tail(self.config, view)
