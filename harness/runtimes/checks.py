"""What only a running runtime shows, checked without a model on each compaction it made: the failures users
report most after compaction.

- well_formed: the first request after it pairs every tool result with its call and every call with a result;
- under_trigger: that request's tokens leave `margin` tokens of the window (a context still at the trigger
  compacts again at once: a compaction loop);
- resumed: after a mid-turn compaction the runtime asked for the next scripted step (the turn in flight went
  on) rather than dropping it;
- user_kept: the latest user message before the compaction reached the model again verbatim.
"""

from __future__ import annotations

from typing import Any

from harness.models.base import ModelRequest
from harness.runtimes.capture import RuntimeCompaction
from harness.session import Session
from harness.tokens import counter

LOOP_MARGIN = 0.10  # of the window: what a post-compaction context must leave free


def request_tokens(request: ModelRequest) -> int:
    count = counter("o200k")
    texts = [request.system or ""] + [m.content for m in request.messages]
    return sum(count.count_text(t) for t in texts)


def well_formed(request: ModelRequest) -> str | None:
    """None, or the first unpaired call or result."""
    open_calls: set[str] = set()
    for message in request.messages:
        if message.role == "tool":
            if message.tool_call_id not in open_calls:
                return f"tool result {message.tool_call_id} has no call before it"
            open_calls.discard(message.tool_call_id)
        elif open_calls:
            return f"call(s) {', '.join(sorted(open_calls))} have no result"
        open_calls |= {c.id for c in message.tool_calls}
    return f"call(s) {', '.join(sorted(open_calls))} have no result" if open_calls else None


def latest_user(session: Session, position: int) -> str | None:
    for message in reversed(session.messages[:position]):
        if message.role == "user" and message.content.strip():
            return message.content
    return None


def check(found: RuntimeCompaction, session: Session, window: int) -> dict[str, Any]:
    after = found.after
    if after is None:
        return {"after": None}
    tokens = request_tokens(after.request)
    user = latest_user(session, found.position)
    shown = "\n".join(m.content for m in after.request.messages)
    return {
        "after_tokens": tokens,
        "well_formed": well_formed(after.request) is None,
        "unpaired": well_formed(after.request),
        "under_trigger": tokens <= window * (1 - LOOP_MARGIN),
        "resumed": (after.reply is not None and after.used_before == found.used_before)
                   if found.mid_turn else None,
        "user_kept": None if user is None else user.strip() in shown,
    }
