"""The script: a case's recorded assistant turns as the replies a runtime gets, in order, each with what must
come right before it (the user prompt, or the outputs of the previous step's calls).

A text-only reply inside a turn would end a runtime's loop there, so it is folded into the next step; a turn
whose last step has calls gets a closing text step, so the runtime's loop ends where the recorded turn did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.session import Message, Session

CLOSING_TEXT = "(turn ended)"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class ScriptCall:
    """One recorded call: its id, the fixture file holding its recorded output, and that output."""

    id: str
    fixture: str  # relative to the workspace: .replay/<safe id>.txt
    output: str
    recorded_name: str = ""


@dataclass(frozen=True)
class Expected:
    """What the newest message of the request for a step must be: a user prompt or a call's output."""

    kind: str  # "user" | "tool"
    text: str
    call_id: str | None = None

    def describe(self) -> str:
        shown = _head(self.text)
        return f"the user prompt {shown}" if self.kind == "user" else f"the output of call {self.call_id} {shown}"


@dataclass(frozen=True)
class ScriptStep:
    number: int  # 1-based, as drift messages count
    text: str
    calls: tuple[ScriptCall, ...]
    before: tuple[Expected, ...]  # the user prompt, or each output of the previous step's calls
    turn: int  # 0-based index of the recorded user turn it belongs to
    source: int | None  # index of the recorded assistant message (None for a closing step)


@dataclass(frozen=True)
class Script:
    prompts: tuple[str, ...]  # the recorded user messages, in order: what a driver sends
    steps: tuple[ScriptStep, ...]

    @property
    def calls(self) -> tuple[ScriptCall, ...]:
        return tuple(call for step in self.steps for call in step.calls)


def script_from_session(session: Session) -> Script:
    """The steps of `session` (see the module docstring)."""
    names = _FixtureNames()
    prompts: list[str] = []
    drafts: list[tuple[str, tuple[ScriptCall, ...], int, int | None]] = []  # text, calls, turn, source
    messages = session.messages
    for index, message in enumerate(messages):
        if message.role == "user":
            _close_turn(drafts, len(prompts) - 1)
            prompts.append(message.content)
        elif message.role == "assistant":
            text = message.content
            if drafts and not drafts[-1][1] and index and messages[index - 1].role == "assistant":
                text = _joined(drafts.pop()[0], text)  # a text-only reply inside the turn: fold it in here
            outputs = _results_after(messages, index)
            calls = tuple(ScriptCall(c.id, names.fixture(c.id), outputs.get(c.id, ""), c.name)
                          for c in message.tool_calls)
            drafts.append((text, calls, max(len(prompts) - 1, 0), index))
    _close_turn(drafts, len(prompts) - 1)
    return Script(tuple(prompts), _numbered(drafts, prompts))


def _results_after(messages: tuple[Message, ...], index: int) -> dict[str, str]:
    """The results answering the assistant message at `index`, by call id (an id may recur later in a session)."""
    found: dict[str, str] = {}
    for message in messages[index + 1:]:
        if message.role != "tool":
            break
        found.setdefault(message.tool_call_id or "", message.content)
    return found


def _close_turn(drafts: list, turn: int) -> None:
    if drafts and drafts[-1][1]:
        drafts.append((CLOSING_TEXT, (), turn, None))


def _numbered(drafts: list, prompts: list[str]) -> tuple[ScriptStep, ...]:
    steps: list[ScriptStep] = []
    for number, (text, calls, turn, source) in enumerate(drafts, start=1):
        previous = steps[-1] if steps else None
        if previous is not None and previous.calls:
            before = tuple(Expected("tool", c.output, c.id) for c in previous.calls)
        else:
            before = (Expected("user", prompts[turn] if turn < len(prompts) else ""),)
        steps.append(ScriptStep(number, text, calls, before, turn, source))
    return tuple(steps)


def _joined(first: str, second: str) -> str:
    return "\n\n".join(part for part in (first.strip(), second.strip()) if part)


def _head(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")


class _FixtureNames:
    """`.replay/<id>.txt`, the id made safe for a file name and unique within the script."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def fixture(self, call_id: str) -> str:
        base = _UNSAFE.sub("_", call_id).strip("._") or "call"
        name, n = base, 1
        while name in self.used:
            n += 1
            name = f"{base}-{n}"
        self.used.add(name)
        return f".replay/{name}.txt"
