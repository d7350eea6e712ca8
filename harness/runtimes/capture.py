"""A runtime's real compactions, read from what it sent: each summarization request (or run of them: pi's split
turn and Gemini's self-check send two), the summary it got, and the first turn request after it, which is the
runtime's real post-compaction context. Each becomes a `compaction` record of the case's session, so the
`recorded` policy replays it and the existing probes, grades and reports treat it as any recorded compaction:

- position: the first case message the runtime had not sent when it compacted (the steps used tell it);
- kept_history: what the runtime put ahead of the summary (its synthetic messages, Codex's re-injected
  context and earlier user messages), in order;
- covers: the first case message the runtime kept verbatim after the summary (its tail); the position when it
  kept none.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from harness.models.base import ChatMessage
from harness.runtimes.edits import edited
from harness.runtimes.observe import Observed
from harness.scripted.steps import Script
from harness.session import CompactionRecord, Session

ORIGIN = "runtime"


@dataclass(frozen=True)
class RuntimeCompaction:
    number: int
    requests: tuple[Observed, ...]  # the summarization call(s)
    after: Observed | None  # the first turn request after it (None: the case ended first)
    position: int
    covers: int
    summary: str
    kept: tuple[dict[str, str], ...]
    mid_turn: bool

    @property
    def used_before(self) -> int:
        """Script steps used when it happened (a compaction without a call: before the request after it)."""
        return self.requests[0].used_before if self.requests else self.after.used_before if self.after else 0

    def record(self) -> CompactionRecord:
        meta: dict[str, Any] = {"kept_history": list(self.kept), "mid_turn": self.mid_turn,
                                "requests": [r.seq for r in self.requests]}
        return CompactionRecord(self.summary, self.covers, self.position, ORIGIN, meta=meta)


def compactions(seen: list[Observed], script: Script, session: Session,
                edits: bool = False) -> list[RuntimeCompaction]:
    """`edits`: the runtime also compacts without a call (edits.py); those are found from its requests."""
    found = _with_calls(seen, script, session)
    if not edits:
        return found
    after_calls = {c.after.seq for c in found if c.after is not None}
    for after in edited(seen, after_calls):
        position, mid_turn = _position(after.used_before, script, session)
        kept, covers, _ = _context(after, [], session, position)
        found.append(RuntimeCompaction(0, (), after, position, covers, "", kept, mid_turn))
    found.sort(key=lambda c: c.requests[0].seq if c.requests else c.after.seq)
    return [replace(c, number=n) for n, c in enumerate(found, start=1)]


def _with_calls(seen: list[Observed], script: Script, session: Session) -> list[RuntimeCompaction]:
    found: list[RuntimeCompaction] = []
    for calls, after in groups(seen):
        calls = _in_use_order(calls, after)
        summaries = [c.reply for c in calls if c.reply]
        position, mid_turn = _position(calls[0].used_before, script, session)
        kept, covers, summary = _context(after, summaries, session, position)
        if not summaries and (after is None or covers == 0):
            continue  # no summary and nothing folded (a faulted call the runtime went on without): no compaction
        if after is None and all(c.fault for c in calls):
            continue  # a faulted reply nothing shows the runtime used (codex refuses a cut one and exits)
        found.append(RuntimeCompaction(len(found) + 1, tuple(calls), after, position, covers, summary, kept,
                                       mid_turn))
    return found


def annotated(session: Session, found: list[RuntimeCompaction]) -> Session:
    """The case's session with the runtime's compactions as its recorded ones (the case's own replaced)."""
    return replace(session, compactions=tuple(c.record() for c in found))


def groups(seen: list[Observed]) -> list[tuple[list[Observed], Observed | None]]:
    """Consecutive summarization calls (side requests between them ignored) and the turn request after them."""
    groups: list[tuple[list[Observed], Observed | None]] = []
    open_calls: list[Observed] = []
    for item in seen:
        if item.kind == "compaction":
            open_calls.append(item)
        elif item.kind == "turn" and open_calls:
            groups.append((open_calls, item))
            open_calls = []
    if open_calls:
        groups.append((open_calls, None))
    return groups


def _in_use_order(calls: list[Observed], after: Observed | None) -> list[Observed]:
    """A compaction's calls in the order its summaries appear in the request after it (pi sends its history
    and turn-prefix calls at once, so their arrival order varies from run to run); arrival order otherwise."""
    if after is None or len(calls) < 2:
        return calls
    shown = "\n".join(m.content for m in after.request.messages)

    def place(call: Observed) -> int:
        head = (call.reply or "").strip()[:200]
        found = shown.find(head) if head else -1
        return found if found >= 0 else len(shown)

    return sorted(calls, key=lambda c: (place(c), c.seq))


def _user_indices(session: Session) -> list[int]:
    return [i for i, m in enumerate(session.messages) if m.role == "user"]


def next_position(used: int, script: Script, session: Session) -> int:
    """The case message of the step after `used`: the first one a runtime that stopped there never asked for."""
    return _position(used, script, session)[0]


def _position(used: int, script: Script, session: Session) -> tuple[int, bool]:
    """(position, mid-turn) for a compaction asked after `used` steps: mid-turn, the outputs of the last step
    were in the history it folded, so the next step's own message comes first after it; between turns, the
    next user prompt does."""
    users = _user_indices(session)
    end = len(session.messages)
    if used >= len(script.steps):
        return end, False
    nxt = script.steps[used]
    prev = script.steps[used - 1] if used else None
    if prev is not None and prev.turn == nxt.turn:
        if nxt.source is not None:
            return nxt.source, True
        following = [u for u in users if u > (prev.source or 0)]
        return (following[0] if following else end), True
    starts = script.prompt_positions or tuple(users)  # where each prompt starts (joined messages: the first)
    return (starts[nxt.turn] if nxt.turn < len(starts) else end), False


def _context(after: Observed | None, summaries: list[str], session: Session,
             position: int) -> tuple[tuple[dict[str, str], ...], int, str]:
    """(kept ahead of the summary, covers, summary) from the first request after the compaction."""
    summary = "\n\n".join(s.strip() for s in summaries if s.strip())
    if after is None:
        return (), position, summary
    messages = after.request.messages
    at = _summary_index(messages, summaries)
    ahead = list(messages[:at]) if at is not None else []
    tail = messages[at + 1:] if at is not None else messages
    covers, apart = _tail_start(tail, session, position)
    kept = tuple({"role": m.role, "content": m.content} for m in (*ahead, *apart) if m.content.strip())
    return kept, covers, summary


def _summary_index(messages: tuple[ChatMessage, ...], summaries: list[str]) -> int | None:
    """The message that carries the (last) summary the runtime was given."""
    probes = [s.strip()[:200] for s in summaries if s.strip()]
    for index in range(len(messages) - 1, -1, -1):
        if any(p in messages[index].content for p in probes):
            return index
    return None


GAP = 3  # case messages the tail may skip (a runtime's synthetic or pruned ones) and still be one verbatim run


def _tail_start(tail: tuple[ChatMessage, ...], session: Session,
                position: int) -> tuple[int, list[ChatMessage]]:
    """Where the runtime's verbatim tail starts, and the messages after the summary that are not part of it.
    Its messages are matched to the case's backwards from `position`, in order (identical outputs recur, so
    each match must come before the last); a match further back than GAP messages ends the run: what lies
    before it (an early prompt re-sent, say) is kept apart, not a tail reaching back to it."""
    covers, below, apart = position, min(position, len(session.messages)), []
    ended = False
    for message in reversed(tail):
        text = message.content.strip()
        if not text:
            continue
        found = None if ended else _match(message, session, below)
        if found is not None and below - found <= GAP + 1:
            covers = below = found
        elif found is not None or ended:
            ended = True
            apart.insert(0, message)
    return covers, apart


def _match(message: ChatMessage, session: Session, below: int) -> int | None:
    text = message.content.strip()
    for index in range(below - 1, -1, -1):
        recorded = session.messages[index]
        if recorded.role == message.role and recorded.content.strip() and recorded.content.strip()[:200] in text:
            return index
    return None
