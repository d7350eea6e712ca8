"""pi's compaction (POLICY.md peer row "pi")."""

from __future__ import annotations

from dataclasses import dataclass

from harness.policy.base import ContextView, ModelSummary, Plan, Policy, PolicyConfig, SendPoint
from harness.policy.peers.tails import CUT_ROLES, describe_tail

# Tool names (as the cases and importers spell them) that read or change a file, and where the path is.
READ_TOOLS = frozenset({"read", "read_file", "view", "cat"})
WRITE_TOOLS = frozenset({"write", "write_file", "edit", "edit_file", "create", "str_replace", "apply_patch"})
PATH_KEYS = ("path", "file_path", "filename")
FILES_READ, FILES_MODIFIED = "[files read]", "[files modified]"


@dataclass(frozen=True)
class PiPolicy(Policy):
    """pi (POLICY.md peer row "pi").

    Models: the strict trigger `tokens > window - reserve` (pi's reserve is 16384, the shared default, and
    follows `reserve_tokens` so sweeps move it); checked only between whole turns (before a prompt), never
    between tool rounds; a tail found by walking back until about `keep_recent_tokens` (20000) are kept,
    cut at the nearest user or assistant message at or after that point (never at a tool result; when
    there is none, the last step is kept whole); a cut inside a turn hands the summarizer that turn's prefix
    (`split_turn_start`) so it can summarize it on its own; tool results cut to 2000 characters plus a
    marker in the summarizer's input; a summary budget of 0.8 x reserve; the previous summary fed back on
    the next compaction (the shared summarizer path); the files read and modified in the folded messages,
    listed after the summary (`ModelSummary.appendix`) and carried into every later summary, a file both
    read and modified listed as modified.
    Leaves out: pi's exact update instruction (the summarizer's prompt is the harness's), tools it would
    recognise by other names than READ_TOOLS/WRITE_TOOLS, and its own token accounting (the harness's
    estimate is used).
    Against pi 0.73.1 (docs/runtimes.md, peer fidelity): same rule and check points (between turns only), but
    the real pi compacts more often (edge-32k-window at 48K: 6 times, this peer twice) since its system prompt
    and tools count toward its trigger, and keeps a longer tail by its own estimate; at the case's 32K window
    its mid-turn overflow recovery fails, which this peer, checking between turns only, never reaches.
    """

    config: PolicyConfig
    name: str = "pi"
    keep_recent_tokens: int = 20000
    tool_result_chars: int = 2000
    summary_ratio: float = 0.8

    def would_trigger(self, tokens: int) -> bool:
        return self.config.active and tokens > self.config.context_window - self.config.reserve_tokens

    def should_compact(self, send: SendPoint) -> bool:
        return not send.mid_turn and self.would_trigger(send.context_tokens)

    def plan(self, view: ContextView) -> Plan:
        tail_start = self.cut(view)
        summary = ModelSummary(budget_tokens=int(self.summary_ratio * self.config.reserve_tokens),
                               tool_result_chars=self.tool_result_chars, appendix=file_lists(view, tail_start))
        return Plan(describe_tail(view, tail_start), summary)

    def cut(self, view: ContextView) -> int:
        messages, kept = view.session.messages, 0
        for i in range(view.end - 1, view.live_start - 1, -1):
            kept += view.tokens(i)
            if kept < self.keep_recent_tokens:
                continue
            for c in range(i, view.end):  # the nearest valid cut at or after i: keep at most what was counted
                if messages[c].role in CUT_ROLES:
                    return c
            for c in range(i - 1, view.live_start - 1, -1):  # inside the last step: keep that step whole
                if messages[c].role in CUT_ROLES:
                    return c
            return view.live_start
        return view.live_start  # everything fits in the kept budget: nothing to fold


def file_lists(view: ContextView, tail_start: int) -> str | None:
    """The files read and modified so far: those in the summary in effect plus the head's tool calls."""
    read, modified = _previous_lists(view.summary)
    for message in view.session.messages[view.live_start:tail_start]:
        for call in message.tool_calls:
            path = next((call.arguments[k] for k in PATH_KEYS if isinstance(call.arguments.get(k), str)), None)
            if path is None:
                continue
            if call.name in WRITE_TOOLS:
                modified.setdefault(path)
            elif call.name in READ_TOOLS:
                read.setdefault(path)
    read = {p: None for p in read if p not in modified}
    if not read and not modified:
        return None
    return "\n".join([FILES_READ, *read, FILES_MODIFIED, *modified])


def _previous_lists(summary: str | None) -> tuple[dict[str, None], dict[str, None]]:
    """Parse the lists a previous pi summary ends with (dicts keep first-seen order)."""
    read: dict[str, None] = {}
    modified: dict[str, None] = {}
    if not summary or FILES_READ not in summary:
        return read, modified
    target = None
    for line in summary[summary.rindex(FILES_READ):].splitlines():
        if line in (FILES_READ, FILES_MODIFIED):
            target = read if line == FILES_READ else modified
        elif line and target is not None:
            target.setdefault(line)
    return read, modified
