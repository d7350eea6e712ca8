"""What a runtime really sent at a probe point: the turn request that carried the case up to that point, read
from the requests the server saw. A runtime cuts tool outputs itself (pi keeps the last 50 KB, opencode 2000
lines / 50 KB, Codex about 10K characters) and may clear old ones (opencode's prune); the graded context of a
runtime run shows each case message as that request carried it, not as the case recorded it.

The request at a point that ends before case message `end` is the one that asked for the first scripted step
at or after `end` (the last such request the model answered: after a mid-turn compaction the runtime asks for
the same step again, post-compaction). Past the last step (the case's end) it is the last request answered:
messages after it were never sent, so they stay as the case recorded them."""

from __future__ import annotations

from dataclasses import dataclass

from harness.models.base import ModelRequest
from harness.runtimes.observe import Observed
from harness.scripted.steps import Script
from harness.session import Session


@dataclass(frozen=True)
class SentContexts:
    """The requests a drive's model answered, by the script step they asked for, over the case's session."""

    session: Session
    starts: tuple[int, ...]  # per step: the first case message its request did not yet hold
    answered: dict[int, ModelRequest]  # steps used before the request -> the last such request answered

    def request_at(self, end: int) -> ModelRequest | None:
        step = next((k for k, start in enumerate(self.starts) if start >= end), None)
        if step is not None and step in self.answered:
            return self.answered[step]
        earlier = [k for k in self.answered if step is None or k < step]
        return self.answered[max(earlier)] if earlier else None

    def at(self, end: int) -> tuple[tuple[int, str], ...]:
        """(index, content) of each case message before `end` that the request at that point carried
        otherwise than the case recorded it (a cut or cleared tool output)."""
        request = self.request_at(end)
        if request is None:
            return ()
        outputs = {m.tool_call_id: m.content for m in request.messages if m.role == "tool" and m.tool_call_id}
        messages = self.session.messages[:end]
        return tuple((i, outputs[m.tool_call_id]) for i, m in enumerate(messages)
                     if m.role == "tool" and m.tool_call_id in outputs and outputs[m.tool_call_id] != m.content)


def sent_contexts(seen: list[Observed], script: Script, session: Session) -> SentContexts:
    answered: dict[int, ModelRequest] = {}
    for item in seen:
        if item.kind == "turn" and item.reply is not None:
            answered[item.used_before] = item.request  # a later one for the same step replaces it
    return SentContexts(session, step_starts(script, session), answered)


def step_starts(script: Script, session: Session) -> tuple[int, ...]:
    """Per step, the case message its reply stands for: its recorded assistant message; for a closing step
    (none of its own), the next user prompt after the step before it, or the session's end."""
    users = [i for i, m in enumerate(session.messages) if m.role == "user"]
    starts: list[int] = []
    for step in script.steps:
        if step.source is not None:
            starts.append(step.source)
            continue
        after = starts[-1] if starts else 0
        starts.append(next((u for u in users if u > after), len(session.messages)))
    return tuple(starts)
