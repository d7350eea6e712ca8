"""gemini-cli's compaction (POLICY.md peer row "gemini-cli")."""

from __future__ import annotations

from dataclasses import dataclass

from harness.policy.base import ContextView, Plan, Policy, PolicyConfig, SendPoint
from harness.policy.peers.tails import describe_tail
from harness.session import message_text


@dataclass(frozen=True)
class GeminiCliPolicy(Policy):
    """gemini-cli (POLICY.md peer row "gemini-cli").

    Models: `tokens >= 0.5 x token limit` (the window), checked at every send. Tail: the last 30% of the
    history by characters (the summary in effect counts as the oldest part), split only at a user message:
    the first user message at which at least 70% of the characters lie before it; failing that, everything
    when the history ends on an assistant message without tool calls, else the latest user message. A
    summary that would make the context larger is rejected (the context stays as it was, risk
    `summary_rejected`), and every later compaction of the replay only truncates (head dropped, no summary).
    Leaves out: gemini-cli's own token counting (the model's count endpoint) and its summary prompt, and its base
    request: 0.61.0's system prompt and tool declarations (~10.4K tokens) count toward its trigger, so the real
    runtime at a 32K window compacts after a few steps and again soon after each compaction (28 times on
    edge-32k-window against this peer's 3; docs/runtimes.md, peer fidelity).
    """

    config: PolicyConfig
    name: str = "gemini-cli"
    threshold_ratio: float = 0.5
    keep_ratio: float = 0.3

    def would_trigger(self, tokens: int) -> bool:
        return self.config.active and tokens >= self.threshold_ratio * self.config.context_window

    def should_compact(self, send: SendPoint) -> bool:
        return self.would_trigger(send.context_tokens)

    def plan(self, view: ContextView) -> Plan:
        truncate_only = view.rejected_summaries > 0
        if truncate_only:
            return Plan(describe_tail(view, self.split(view)), summary=None)
        return Plan(describe_tail(view, self.split(view)), reject_if_larger=True)

    def split(self, view: ContextView) -> int:
        messages = view.session.messages
        sizes = [len(message_text(messages[i])) for i in range(view.live_start, view.end)]
        before = len(view.summary or "")
        target = (1 - self.keep_ratio) * (before + sum(sizes))
        last_user = view.live_start
        for i, size in enumerate(sizes, view.live_start):
            if messages[i].role == "user" and i > view.live_start:
                if before >= target:
                    return i
                last_user = i
            before += size
        last = messages[view.end - 1] if view.end > view.live_start else None
        if last is not None and last.role == "assistant" and not last.tool_calls:
            return view.end
        return last_user
