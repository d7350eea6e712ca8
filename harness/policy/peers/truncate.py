"""truncate: the floor every summarizer must beat (POLICY.md peer row "truncate")."""

from __future__ import annotations

from dataclasses import dataclass, replace

from harness.policy.base import ContextView, Plan, Policy, PolicyConfig, SendPoint
from harness.policy.default import reserve_trigger, turn_first_tail


@dataclass(frozen=True)
class TruncatePolicy(Policy):
    """truncate (POLICY.md peer row "truncate"): the floor every summarizer must beat.

    Models: the default policy's trigger and tail; the head is dropped with no summary and no model call.
    Leaves out: nothing.
    """

    config: PolicyConfig
    name: str = "truncate"

    def would_trigger(self, tokens: int) -> bool:
        return reserve_trigger(self.config, tokens)

    def should_compact(self, send: SendPoint) -> bool:
        return reserve_trigger(self.config, send.context_tokens)

    def plan(self, view: ContextView) -> Plan:
        return replace(turn_first_tail(self.config, view), summary=None)
