"""Peer policies: how other agent runtimes compact, for side-by-side comparison with the policy under test.

Every number and rule here comes from POLICY.md's peer table ("facts gathered from their public source");
the code is our own. Each class says what it models and what it leaves out. All are pure: they read token
counts and the turn/step structure from the `ContextView`, never a model or a file.

Shared conventions for the peers:
- `turns_kept`/`steps_kept` count the turns and steps (assistant messages) the tail touches;
  `truncated_to_step` means the tail starts inside a turn (that turn's user message is in the head).
- a cut always lands on a user or assistant message, never on a tool result.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from harness.policy.base import ContextView, Plan, PolicyConfig, SendPoint, register
from harness.policy.default import reserve_trigger, turn_first_tail
from harness.session import message_text

CUT_ROLES = ("user", "assistant")
# Tool names (as the cases and importers spell them) that read or change a file, and where the path is.
READ_TOOLS = frozenset({"read", "read_file", "view", "cat"})
WRITE_TOOLS = frozenset({"write", "write_file", "edit", "edit_file", "create", "str_replace", "apply_patch"})
PATH_KEYS = ("path", "file_path", "filename")
FILES_READ, FILES_MODIFIED = "[files read]", "[files modified]"


# ---------------------------------------------------------------------------------------------
# helpers shared by the peers


def describe_tail(view: ContextView, tail_start: int, **extras) -> Plan:
    """A plan for `tail_start`, with the turns and steps it keeps and whether it splits a turn."""
    turns = steps = 0
    split_at: int | None = None
    for turn in view.turns_newest_first():
        if turn.end <= tail_start:
            break
        turns += 1
        steps += sum(1 for s in turn.step_starts if s >= tail_start)
        if turn.start < tail_start:
            split_at = turn.start  # the prefix of this turn (from here) lands in the head
    return Plan(tail_start, turns, steps, split_at is not None, split_turn_start=split_at, **extras)


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


# ---------------------------------------------------------------------------------------------
# pi


@register("pi")
@dataclass(frozen=True)
class PiPolicy:
    """pi (POLICY.md peer row "pi").

    Models: the strict trigger `tokens > window - reserve` (pi's reserve is 16384, the shared default, and
    follows `reserve_tokens` so sweeps move it); checked only between whole turns (before a prompt), never
    between tool rounds; a tail found by walking back until about `keep_recent_tokens` (20000) are kept,
    cut at the nearest user or assistant message at or after that point (never at a tool result; when
    there is none, the last step is kept whole); a cut inside a turn hands the summarizer that turn's prefix
    (`split_turn_start`) so it can summarize it on its own; tool results cut to 2000 characters plus a
    marker in the summarizer's input; a summary budget of 0.8 x reserve; the previous summary fed back on
    the next compaction (the shared summarizer path); the files read and modified in the folded messages,
    listed after the summary (`Plan.summary_appendix`) and carried into every later summary, a file both
    read and modified listed as modified.
    Leaves out: pi's exact update instruction (the summarizer's prompt is the harness's), tools it would
    recognise by other names than READ_TOOLS/WRITE_TOOLS, and its own token accounting (the harness's
    estimate is used).
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
        return describe_tail(view, tail_start, tool_result_chars=self.tool_result_chars,
                             summary_tokens=int(self.summary_ratio * self.config.reserve_tokens),
                             summary_appendix=file_lists(view, tail_start))

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


# ---------------------------------------------------------------------------------------------
# opencode


@register("opencode")
@dataclass(frozen=True)
class OpencodePolicy:
    """opencode (POLICY.md peer row "opencode").

    Models: `tokens >= usable` with usable = window - min(max_output, 32000) - reserved, where `reserved`
    defaults to min(20000, max_output) (148000 for 200K/32K). POLICY.md's formula has no setting for the
    reservation, yet the issue's scenario (56K for a 100K context, 32K output, 12K reserved) needs one, so
    `reserved_tokens` is a setting of this policy (100000 - 32000 - 12000 = 56000). Checked at every send,
    between tool rounds too. Tail: whole turns newest first within clamp(25% of usable, 2000, 15000) tokens;
    when not even the newest turn fits, its newest steps that fit (a split turn; empty when the newest step
    alone is over). Pruning (on by default, `prune_outputs`): between turns, tool outputs older than the last
    2 turns and the newest 40000 tokens of output are cleared, only when over 20000 tokens would be freed,
    stopping at outputs cleared before. The previous summary is fed back on the next compaction.
    Leaves out: opencode's own token accounting (the provider's reported usage) and its summary prompt.
    """

    config: PolicyConfig
    name: str = "opencode"
    reserved_tokens: int | None = None  # None: min(20000, max_output)
    prune_outputs: bool = True
    protect_turns: int = 2
    protect_output_tokens: int = 40000
    prune_minimum_tokens: int = 20000

    @property
    def usable(self) -> int:
        output = self.config.max_output_tokens
        reserved = self.reserved_tokens if self.reserved_tokens is not None else min(20000, output)
        return self.config.context_window - min(output, 32000) - reserved

    @property
    def tail_budget(self) -> int:
        return max(2000, min(15000, self.usable // 4))

    def would_trigger(self, tokens: int) -> bool:
        return self.config.active and tokens >= self.usable

    def should_compact(self, send: SendPoint) -> bool:
        return self.would_trigger(send.context_tokens)

    def plan(self, view: ContextView) -> Plan:
        budget, tail_start, size = self.tail_budget, view.end, 0
        for turn in view.turns_newest_first():
            turn_size = view.span_tokens(turn.start, turn.end)
            if size + turn_size <= budget:
                size, tail_start = size + turn_size, turn.start
                continue
            if tail_start == view.end:  # not even the newest turn fits: split it at a step
                start = recent_steps_within(view, turn.step_starts, turn.end, budget)
                tail_start = start if start is not None else view.end
            break
        return describe_tail(view, tail_start)

    def prune(self, view: ContextView) -> tuple[int, ...]:
        if not self.prune_outputs:
            return ()
        protected = chosen_tokens = 0
        chosen: list[int] = []
        for number, turn in enumerate(view.turns_newest_first()):
            if number < self.protect_turns:
                continue
            for i in range(turn.end - 1, turn.start - 1, -1):
                if not is_tool(view, i):
                    continue
                if i in view.pruned:  # older outputs were cleared by an earlier prune
                    return self._worth(chosen, chosen_tokens)
                size = view.tokens(i)
                protected += size
                if protected > self.protect_output_tokens:
                    chosen.append(i)
                    chosen_tokens += size
        return self._worth(chosen, chosen_tokens)

    def _worth(self, chosen: list[int], tokens: int) -> tuple[int, ...]:
        return tuple(chosen) if tokens > self.prune_minimum_tokens else ()


# ---------------------------------------------------------------------------------------------
# codex


@register("codex")
@dataclass(frozen=True)
class CodexPolicy:
    """codex (POLICY.md peer row "codex").

    Models: `tokens >= limit`, limit = 90% of the window, a configured `token_limit` clamped to that
    (window 100 with a limit of 200 compacts at 90); checked at every send. The compacted context keeps
    no assistant or tool items: only the most recent user messages, whole, newest first up to 20000
    tokens (from the live range and from the user messages an earlier compaction kept), then the summary
    as the last user message (`Plan.kept_head`, tail empty). When the summarizer request itself would not
    fit, the oldest head message is dropped until it does (`Plan.trim_summary_request`). The summarizer is
    shown the kept user messages and the previous summary.
    Leaves out: truncating the one user message that would cross 20000 tokens (whole messages only here),
    and codex's own token accounting.
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
        return Plan(view.end, 0, 0, False, kept_head=tuple(reversed(kept)), trim_summary_request=True)


# ---------------------------------------------------------------------------------------------
# claude-code


@register("claude-code")
@dataclass(frozen=True)
class ClaudeCodePolicy:
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
        return describe_tail(view, view.end)

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


# ---------------------------------------------------------------------------------------------
# gemini-cli


@register("gemini-cli")
@dataclass(frozen=True)
class GeminiCliPolicy:
    """gemini-cli (POLICY.md peer row "gemini-cli").

    Models: `tokens >= 0.5 x token limit` (the window), checked at every send. Tail: the last 30% of the
    history by characters (the summary in effect counts as the oldest part), split only at a user message:
    the first user message at which at least 70% of the characters lie before it; failing that, everything
    when the history ends on an assistant message without tool calls, else the latest user message. A
    summary that would make the context larger is rejected (the context stays as it was, risk
    `summary_rejected`), and every later compaction of the replay only truncates (head dropped, no summary).
    Leaves out: gemini-cli's own token counting (the model's count endpoint) and its summary prompt.
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
        return describe_tail(view, self.split(view), summarize=not truncate_only,
                             reject_if_larger=not truncate_only)

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


# ---------------------------------------------------------------------------------------------
# baselines


@register("ratio-20")
@dataclass(frozen=True)
class Ratio20Policy:
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


@register("truncate")
@dataclass(frozen=True)
class TruncatePolicy:
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
        return replace(turn_first_tail(self.config, view), summarize=False)
