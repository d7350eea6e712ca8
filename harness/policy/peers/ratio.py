"""ratio-20: the ratio trigger the design rejects, as a baseline (POLICY.md peer row "ratio-20")."""

from __future__ import annotations

from dataclasses import dataclass

from harness.policy.base import ContextView, Plan, Policy, PolicyConfig, SendPoint
from harness.policy.default import turn_first_tail


@dataclass(frozen=True)
class Ratio20Policy(Policy):
    """ratio-20 (POLICY.md peer row "ratio-20"): the ratio trigger the design rejects, as a baseline.

    Models: `tokens >= 80% of the window` at every send, with the default policy's turn-first tail.
    Leaves out: nothing; it is defined by POLICY.md only.
    """

    config: PolicyConfig
    name: str = "ratio-20"
    ratio: float = 0.8

    def would_trigger(self, tokens: int) -> bool:
        return self.config.active and tokens >= self.ratio * self.config.context_window

    def should_compact(self, send: SendPoint) -> bool:
        return self.would_trigger(send.context_tokens)

    def plan(self, view: ContextView) -> Plan:
        return turn_first_tail(self.config, view)
