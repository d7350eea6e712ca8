"""The script: a case's recorded assistant turns as the replies a runtime gets, in order, each with what must
come right before it (the user prompt, or the outputs of the previous step's calls).

A text-only reply inside a turn would end a runtime's loop there, so it is folded into the next step; a turn
whose last step has calls gets a closing text step, so the runtime's loop ends where the recorded turn did.
What a runtime cannot be given as it happened (a user message nothing answers, a trailing one, a turn the user
interrupted) is sent in the closest form it can take and listed as a departure (departures.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from harness.scripted import departures
from harness.scripted.departures import Departure
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
    prompts: tuple[str, ...]  # what a driver sends, one per turn: the recorded user messages, joined where needed
    steps: tuple[ScriptStep, ...]
    prompt_positions: tuple[int, ...] = ()  # per prompt, the case message it starts at
    departures: tuple[Departure, ...] = ()  # what is sent otherwise than it happened (departures.py)

    @property
    def calls(self) -> tuple[ScriptCall, ...]:
        return tuple(call for step in self.steps for call in step.calls)


def script_from_session(session: Session) -> Script:
    """The steps of `session` (see the module docstring)."""
    builder = _Builder(session.messages)
    builder.departures += [departures.manual_compaction(c.position) for c in session.compactions if c.by_hand]
    for index, message in enumerate(session.messages):
        if message.role == "user":
            builder.user(index)
        elif message.role == "assistant":
            builder.assistant(index)
    return builder.script()


class _Builder:
    """One pass over the messages. User messages wait until an assistant message answers them: then they become
    one prompt (all but the last joined to it as unanswered); those still waiting at the end are trailing."""

    def __init__(self, messages: tuple[Message, ...]):
        self.messages = messages
        self.names = _FixtureNames()
        self.prompts: list[str] = []
        self.positions: list[int] = []
        self.drafts: list[tuple[str, tuple[ScriptCall, ...], int, int | None]] = []  # text, calls, turn, source
        self.waiting: list[int] = []  # user messages no assistant message has answered yet
        self.departures: list[Departure] = []
        self.leading: list[int] = []  # assistant messages before the first user message

    def user(self, index: int) -> None:
        if not self.waiting:
            self._close(index)
        self.waiting.append(index)

    def assistant(self, index: int) -> None:
        if self.waiting:
            self._prompt()
        elif not self.prompts:
            self.leading.append(index)
            return
        messages = self.messages
        text = messages[index].content
        if self.drafts and not self.drafts[-1][1] and messages[index - 1].role == "assistant" \
                and self.drafts[-1][2] == len(self.prompts) - 1:
            text = _joined(self.drafts.pop()[0], text)  # a text-only reply inside the turn: fold it in here
        outputs = _results_after(messages, index)
        calls = tuple(ScriptCall(c.id, self.names.fixture(c.id), outputs.get(c.id, ""), c.name)
                      for c in messages[index].tool_calls)
        self.departures.extend(departures.sub_agent(index, c.recorded_name, c.id) for c in calls
                               if c.recorded_name in departures.SUB_AGENT_TOOLS)
        self.drafts.append((text, calls, len(self.prompts) - 1, index))

    def _prompt(self) -> None:
        """The waiting user messages become the next prompt: the last one, with those before it joined."""
        first, index = self.waiting[0], self.waiting[-1]
        for earlier in self.waiting[:-1]:
            self.departures.append(departures.unanswered(earlier, self._tag(earlier), index))
        if self._tag(index) == "queued" or (index and self.messages[index - 1].role == "tool"
                                            and len(self.waiting) == 1):
            self.departures.append(departures.queued(index, self._tag(index)))
        text = _joined(*(self.messages[i].content for i in self.waiting))
        if not text:
            self.departures.append(departures.empty(index))
            text = departures.EMPTY_PROMPT
        self.prompts.append(text)
        self.positions.append(first)
        self.waiting = []

    def _close(self, before: int) -> None:
        """A turn whose last step has calls gets a closing step (the recording has no reply there)."""
        if self.drafts and self.drafts[-1][1]:
            self.drafts.append((CLOSING_TEXT, (), len(self.prompts) - 1, None))
            why = "the session ends" if before >= len(self.messages) else \
                f"then {_WHY.get(self._tag(before), 'a user message')} at message {before}"
            self.departures.append(departures.closed(before, why))

    def _tag(self, index: int) -> str:
        return departures.tag_of(self.messages[index].meta)

    def script(self) -> Script:
        if not self.waiting:  # else the turn was closed at the first trailing message
            self._close(len(self.messages))
        for index in self.waiting:
            self.departures.append(departures.trailing(index, self._tag(index)))
        if self.leading:
            self.departures.append(departures.leading(self.leading[0], len(self.leading)))
        steps = _numbered(self.drafts, self.prompts)
        sent = [call for step in steps for call in step.calls]
        if sent:
            first = next(s.source for s in steps if s.calls)
            chars = sum(len(json.dumps(c.arguments)) for s in steps if s.calls
                        for c in self.messages[s.source].tool_calls)
            self.departures.append(departures.calls(first, len(sent), chars))
        return Script(tuple(self.prompts), steps, tuple(self.positions),
                      tuple(sorted(self.departures, key=lambda d: d.position)))


_WHY = {"interrupt": "an interrupt", "queued": "a queued prompt", "command": "a slash command",
        "task-notification": "a task notification", "meta": "a message the agent injected", "shell": "a shell escape"}


def _results_after(messages: tuple[Message, ...], index: int) -> dict[str, str]:
    """The results answering the assistant message at `index`, by call id (an id may recur later in a session)."""
    found: dict[str, str] = {}
    for message in messages[index + 1:]:
        if message.role != "tool":
            break
        found.setdefault(message.tool_call_id or "", message.content)
    return found


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


def _joined(*parts: str) -> str:
    return "\n\n".join(part.strip() for part in parts if part.strip())


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
