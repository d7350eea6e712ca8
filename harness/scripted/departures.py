"""What a replay cannot give a runtime as it happened, and what it sends instead: "what the replay could not
reproduce", listed per case in run.json (`outcome.runtime.not_reproduced`) and the reports, never a drift.

A runtime is driven one prompt at a time and answers each with the recorded steps, so a recorded session is sent
in the closest form a runtime can take:

- unanswered: a user message no assistant message answers (an interrupt marker, a slash command and its
  output, back-to-back task notifications) is joined to the next prompt;
- trailing: user messages that end the session have no reply to give: they are not sent;
- closed: a turn that ended on tool outputs (the user interrupted it, or typed while it ran) is closed with the
  scripted reply `(turn ended)`, which the recording does not have;
- queued: a user message typed while the agent worked (Claude Code handed it over beside a tool result) is sent
  as the next prompt once the turn is closed;
- leading: assistant messages before the first user message have no prompt to answer: not sent;
- sub-agent: a sub-agent's call is replayed as a shell call printing its recorded result; the sub-agent's own
  conversation is not run;
- calls: every recorded call is replayed as `cat .replay/<id>.txt`, so its recorded arguments (a file an edit
  wrote, say) are not in the runtime's context;
- empty: an empty prompt is sent as `(empty message)` (a runtime refuses an empty one);
- manual-compaction: the user compacted by hand there (`/compact`); a runtime compacts by its own trigger only.

A drive adds what the runtime itself did otherwise (record.py): `cut`, an output it passed on cut.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("unanswered", "trailing", "closed", "queued", "leading", "sub-agent", "calls", "empty", "manual-compaction",
         "cut")
SUB_AGENT_TOOLS = frozenset({"Task", "Agent", "spawn_agent", "dispatch_agent", "task"})
EMPTY_PROMPT = "(empty message)"


@dataclass(frozen=True)
class Departure:
    """One thing the replay sends otherwise than it happened: where (a case message index) and how."""

    position: int
    kind: str  # one of KINDS
    detail: str

    def to_json(self) -> dict:
        return {"position": self.position, "kind": self.kind, "detail": self.detail}


def tag_of(meta: dict | None) -> str:
    """What a user message is, as the importer tagged it: interrupt, command, task-notification, meta, shell,
    queued, or a prompt."""
    meta = meta or {}
    if meta.get("tag"):
        return str(meta["tag"])
    return "queued" if meta.get("queued") else "prompt"


def unanswered(position: int, tag: str, joined_to: int) -> Departure:
    return Departure(position, "unanswered", f"{_what(tag)} no assistant message answers: joined to the "
                                             f"prompt it precedes (message {joined_to})")


def trailing(position: int, tag: str) -> Departure:
    return Departure(position, "trailing", f"{_what(tag)} at the session's end, which nothing answers: not sent")


def closed(position: int, why: str) -> Departure:
    return Departure(position, "closed", f"the turn ended on tool outputs ({why}): closed with the scripted "
                                         "reply '(turn ended)'")


def queued(position: int, tag: str) -> Departure:
    return Departure(position, "queued", f"{_what(tag)} given while the agent worked (beside a tool result): "
                                         "sent as the next prompt after the turn was closed")


def leading(position: int, count: int) -> Departure:
    return Departure(position, "leading", f"{count} assistant message(s) before the first user message: not sent")


def sub_agent(position: int, name: str, call_id: str) -> Departure:
    return Departure(position, "sub-agent", f"sub-agent call {name} {call_id}: its recorded result replayed "
                                            "through the shell tool; the sub-agent's own conversation is not run")


def calls(position: int, count: int, argument_chars: int) -> Departure:
    return Departure(position, "calls", f"{count} recorded call(s) replayed as `cat` of their outputs: their "
                                        f"arguments ({argument_chars:,} characters) are not in the runtime's context")


def empty(position: int) -> Departure:
    return Departure(position, "empty", f"an empty prompt, sent as {EMPTY_PROMPT!r}")


def manual_compaction(position: int) -> Departure:
    return Departure(position, "manual-compaction", "the user compacted by hand here (/compact): the runtime is not "
                                                    "asked to; it compacts by its own trigger only")


def cut(position: int, call_id: str, sent: int, recorded: int) -> Departure:
    return Departure(position, "cut", f"the runtime passed on {sent:,} of the {recorded:,} characters of output "
                                      f"{call_id}")


def _what(tag: str) -> str:
    return {"interrupt": "an interrupt marker", "command": "a slash command (or its output)",
            "task-notification": "a task notification", "meta": "a message the agent injected",
            "shell": "a shell escape (or its output)", "queued": "a queued prompt"}.get(tag, "a user message")
