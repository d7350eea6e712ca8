"""codex's compaction (POLICY.md peer row "codex")."""

from __future__ import annotations

from dataclasses import dataclass

from harness.policy.base import ContextView, ModelSummary, Plan, Policy, PolicyConfig, SendPoint, Tail


@dataclass(frozen=True)
class CodexPolicy(Policy):
    """codex (POLICY.md peer row "codex").

    Models: `tokens >= limit`, limit = 90% of the window, a configured `token_limit` clamped to that
    (window 100 with a limit of 200 compacts at 90); checked at every send. The compacted context keeps
    no assistant or tool items: only the most recent user messages, whole, newest first up to 20000
    tokens (from the live range and from the user messages an earlier compaction kept), then the summary
    as the last user message (`Tail.kept_head`, tail empty). When the summarizer request itself would not
    fit, the oldest head message is dropped until it does (`ModelSummary.trim_request`). The summarizer is
    shown the kept user messages and the previous summary.
    Leaves out: truncating the one user message that would cross 20000 tokens (whole messages only here),
    and codex's own token accounting.
    Against codex 0.171.0 (docs/runtimes.md, peer fidelity): the real codex compacts earlier (edge-32k-window:
    before messages 58 and 112, this peer once before 98) because its ~17.5K-character instructions, tool list
    and environment context count toward its 90%, and a case's session carries none of them; rule and kept
    context (user messages, then the summary, no assistant or tool items) match.
    """

    config: PolicyConfig
    name: str = "codex"
    token_limit: int | None = None
    user_tokens: int = 20000

    @property
    def limit(self) -> int:
        cap = self.config.context_window * 9 // 10
        return cap if self.token_limit is None else min(self.token_limit, cap)

    def would_trigger(self, tokens: int) -> bool:
        return self.config.active and tokens >= self.limit

    def should_compact(self, send: SendPoint) -> bool:
        return self.would_trigger(send.context_tokens)

    def plan(self, view: ContextView) -> Plan:
        messages = view.session.messages
        live_users = (i for i in range(view.end - 1, view.live_start - 1, -1) if messages[i].role == "user")
        kept, size = [], 0
        for i in (*live_users, *reversed(view.kept)):
            size += view.tokens(i)
            if size > self.user_tokens:
                break
            kept.append(i)
        return Plan(Tail(view.end, 0, 0, False, kept_head=tuple(reversed(kept))), ModelSummary(trim_request=True))
