"""claude-code's compaction and idle-time clearing (POLICY.md peer row "claude-code")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from harness.policy.base import ContextView, Plan, Policy, PolicyConfig, SendPoint
from harness.policy.peers.tails import describe_tail, is_tool


@dataclass(frozen=True)
class ClaudeCodePolicy(Policy):
    """claude-code (POLICY.md peer row "claude-code", itself second-hand).

    Models: `tokens >= window - min(max_output, 20000) - 13000` (about 83.5% of 200K), checked at every
    send; the compacted context is the summary alone (no verbatim tail); the previous summary is fed back.
    Idle-time clearing of old tool results, keeping the 5 newest, modelled as pruning at the first send of a
    turn that follows an idle gap of `idle_minutes` between message timestamps (`ts`); sessions without
    timestamps never clear. POLICY.md gives no idle threshold: 60 minutes is our assumption.
    Leaves out: re-attaching up to 5 recently read files after the summary (the harness has no file
    contents to re-read; their last tool results are folded like the rest), todo and plan attachments.
    """

    config: PolicyConfig
    name: str = "claude-code"
    output_cap_tokens: int = 20000
    buffer_tokens: int = 13000
    idle_minutes: float = 60.0
    keep_tool_results: int = 5

    @property
    def threshold(self) -> int:
        return (self.config.context_window - min(self.config.max_output_tokens, self.output_cap_tokens)
                - self.buffer_tokens)

    def would_trigger(self, tokens: int) -> bool:
        return self.config.active and tokens >= self.threshold

    def should_compact(self, send: SendPoint) -> bool:
        return self.would_trigger(send.context_tokens)

    def plan(self, view: ContextView) -> Plan:
        return Plan(describe_tail(view, view.end))

    @property
    def prunes(self) -> bool:
        return True

    def prune(self, view: ContextView) -> tuple[int, ...]:
        if view.end - view.live_start < 2 or not self._idle_before(view, view.end - 1):
            return ()
        results = [i for i in range(view.live_start, view.end) if is_tool(view, i)]
        old = results[:-self.keep_tool_results] if self.keep_tool_results else results
        return tuple(i for i in old if i not in view.pruned)

    def _idle_before(self, view: ContextView, index: int) -> bool:
        now, before = (_timestamp(view.session.messages[i].ts) for i in (index, index - 1))
        return now is not None and before is not None and (now - before).total_seconds() >= 60 * self.idle_minutes


def _timestamp(ts: str | None) -> datetime | None:
    if not ts:
        return None
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.astimezone()
