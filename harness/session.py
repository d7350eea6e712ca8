"""The canonical session: messages, steps and turns; `session.jsonl` read, validate, write.

Indices count the non-system messages of the file from 0, `compaction` lines excluded (DESIGN.md).
A step is one assistant message with the tool results that answer it; a turn is a user message and
every step after it up to the next user message (POLICY.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable

from harness.atomic import write_atomic
from harness.errors import InputError
from harness.input_file import gunzip, read_input
from harness.redact import scrub_value
from harness.validate import decode, encoded, parse_json

ROLES = ("system", "user", "assistant", "tool", "compaction")
OPTIONAL_KEYS = ("id", "ts", "usage", "meta")
ALLOWED_KEYS = {
    "system": {"role", "content", "tools", *OPTIONAL_KEYS},
    "user": {"role", "content", *OPTIONAL_KEYS},
    "assistant": {"role", "content", "tool_calls", *OPTIONAL_KEYS},
    "tool": {"role", "content", "tool_call_id", "is_error", "name", *OPTIONAL_KEYS},
    "compaction": {"role", "content", "covers", "origin", *OPTIONAL_KEYS},
}


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False
    name: str | None = None  # tool name on a tool result, when the source had it
    id: str | None = None
    ts: str | None = None
    usage: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    line: int = field(default=0, compare=False)  # source line, for error messages only


@dataclass(frozen=True)
class CompactionRecord:
    """A summary block made at some point of the recorded session (manual or imported)."""

    content: str
    covers: int  # stands for the messages with index < covers
    position: int  # index of the first message after the line: the block exists from here on
    origin: str = "manual"
    line: int = field(default=0, compare=False)
    meta: dict[str, Any] | None = None

    @property
    def by_hand(self) -> bool:
        """The user compacted here (a case's own compaction, or an imported one its runtime says was /compact)."""
        return self.origin == "manual" or (self.meta or {}).get("trigger") == "manual"


@dataclass(frozen=True)
class Step:
    start: int  # the assistant message
    end: int  # one past its last tool result


@dataclass(frozen=True)
class Turn:
    start: int  # the user message (or 0 when the session opens without one)
    end: int
    steps: tuple[Step, ...]
    has_user: bool = True


@dataclass(frozen=True)
class Session:
    messages: tuple[Message, ...]
    system: str | None = None
    compactions: tuple[CompactionRecord, ...] = ()
    path: str = "<memory>"
    # The tool definitions the agent sent, as {"name", "description", "parameters"}: part of every request's
    # cached prefix (tools come first on Anthropic), so the cost study needs them.
    tools: tuple[dict[str, Any], ...] = ()

    @cached_property
    def turns(self) -> tuple[Turn, ...]:
        return segment(self.messages)

    @cached_property
    def turn_of(self) -> tuple[int, ...]:
        """For each message index, the index of the turn holding it."""
        owner = [0] * len(self.messages)
        for number, turn in enumerate(self.turns):
            for i in range(turn.start, turn.end):
                owner[i] = number
        return tuple(owner)

    @cached_property
    def step_start_of(self) -> tuple[int, ...]:
        """For each message index, the start of the step holding it (itself for a user message)."""
        start = list(range(len(self.messages)))
        for turn in self.turns:
            for step in turn.steps:
                for i in range(step.start, step.end):
                    start[i] = step.start
        return tuple(start)


def segment(messages: Iterable[Message]) -> tuple[Turn, ...]:
    """Split messages into turns of steps. Parallel tool calls of one assistant message are one step."""
    turns: list[Turn] = []
    start, has_user, steps = 0, False, []
    step_start: int | None = None
    count = 0
    for i, message in enumerate(messages):
        count = i + 1
        if message.role == "user":
            if step_start is not None:
                steps.append(Step(step_start, i))
                step_start = None
            if i > start or has_user:
                turns.append(Turn(start, i, tuple(steps), has_user))
            start, has_user, steps = i, True, []
        elif message.role == "assistant":
            if step_start is not None:
                steps.append(Step(step_start, i))
            step_start = i
    if step_start is not None:
        steps.append(Step(step_start, count))
    if count > start or has_user:
        turns.append(Turn(start, count, tuple(steps), has_user))
    return tuple(turns)


def message_text(message: Message) -> str:
    """Everything a request sends for this message, as text: content, tool names and arguments."""
    if not message.tool_calls:
        return message.content
    calls = "\n".join(f"{c.name} {json.dumps(c.arguments, sort_keys=True)}" for c in message.tool_calls)
    return f"{message.content}\n{calls}" if message.content else calls


# ---------------------------------------------------------------------------------------------
# reading and validation


def read_session(path: str | Path) -> Session:
    """Read `session.jsonl`, or `session.jsonl.gz` (large real sessions are stored compressed)."""
    path = Path(path)
    data = read_input(path, "a session", "cannot read session")
    if path.suffix == ".gz":
        data = gunzip(data, str(path), "session")
    text = decode(data, str(path), "the session")
    return parse_session(text.splitlines(), str(path))


def parse_session(lines: Iterable[str], path: str = "<memory>") -> Session:
    system: str | None = None
    tools: tuple[dict[str, Any], ...] = ()
    messages: list[Message] = []
    compactions: list[CompactionRecord] = []
    pending: dict[str, int] = {}  # tool call id -> line of the call, until its result arrives
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        record = _parse_line(raw, path, number)
        role = record["role"]
        fail = _failer(path, number)
        if role == "system":
            if system is not None or messages or compactions:
                fail("role", "a second system message (at most one, first)" if system is not None
                     else "the system message must come first")
            system = _text(record, fail)
            tools = _tools(record.get("tools"), fail)
            continue
        if role == "compaction":
            compactions.append(_compaction(record, len(messages), path, number))
            continue
        if role == "assistant" and pending:
            missing = ", ".join(sorted(pending))
            fail("tool_calls", f"tool call {missing} has no result before the next assistant message")
        message = _message(record, fail, number)
        if role == "assistant":
            for call in message.tool_calls:
                if call.id in pending:
                    fail("tool_calls", f"duplicate tool call id {call.id!r}")
                pending[call.id] = number
        elif role == "tool":
            if message.tool_call_id not in pending:
                fail("tool_call_id", f"tool result {message.tool_call_id!r} has no matching call")
            del pending[message.tool_call_id]
        elif role == "user" and pending:
            missing = ", ".join(sorted(pending))
            fail("tool_calls", f"tool call {missing} has no result before the next user message")
        messages.append(message)
    if pending:
        call_id, line = next(iter(pending.items()))
        raise InputError(path, line, "tool_calls", f"tool call {call_id!r} has no result")
    return Session(tuple(messages), system, tuple(compactions), path, tools)


def _tools(value: Any, fail) -> tuple[dict[str, Any], ...]:
    """Tool definitions on the system line: a list of {name, description?, parameters?} objects."""
    if value is None:
        return ()
    if not isinstance(value, list):
        fail("tools", "must be a list of tool definitions")
    for position, tool in enumerate(value):
        where = f"tools[{position}]"
        if not isinstance(tool, dict):
            fail(where, "must be an object")
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            fail(f"{where}.name", "must be a non-empty string")
        if not isinstance(tool.get("description", ""), str):
            fail(f"{where}.description", "must be a string")
        if not isinstance(tool.get("parameters", {}), dict):
            fail(f"{where}.parameters", "must be a JSON schema object")
        extra = sorted(set(tool) - {"name", "description", "parameters"})
        if extra:
            fail(f"{where}.{extra[0]}", "unknown field on a tool definition")
    return tuple(value)


def _failer(path: str, line: int):
    def fail(field_name: str, problem: str):
        raise InputError(path, line, field_name, problem)

    return fail


def _parse_line(raw: str, path: str, number: int) -> dict[str, Any]:
    record = parse_json(raw, path, "the line", line=number)
    if not isinstance(record, dict):
        raise InputError(path, number, None, "each line must be a JSON object")
    role = record.get("role")
    if role not in ROLES:
        raise InputError(path, number, "role", f"unknown role {role!r} (expected one of {', '.join(ROLES)})")
    unknown = sorted(set(record) - ALLOWED_KEYS[role])
    if unknown:
        raise InputError(path, number, unknown[0], f"unknown field on a {role} message")
    return scrub_value(record)  # a key pasted into a session never reaches a request or a result


def _text(record: dict[str, Any], fail) -> str:
    content = record.get("content")
    if not isinstance(content, str):
        fail("content", "must be a string")
    return content


def _message(record: dict[str, Any], fail, number: int) -> Message:
    role = record["role"]
    calls: list[ToolCall] = []
    if not isinstance(record.get("tool_calls") or [], list):
        fail("tool_calls", "must be a list of {id, name, arguments} objects")
    for key in ("id", "ts", "name"):
        if record.get(key) is not None and not isinstance(record[key], str):
            fail(key, "must be a string")
    for position, call in enumerate(record.get("tool_calls") or []):
        where = f"tool_calls[{position}]"
        if not isinstance(call, dict):
            fail(where, "must be an object")
        if not isinstance(call.get("id"), str) or not call["id"]:
            fail(f"{where}.id", "must be a non-empty string")
        if not isinstance(call.get("name"), str) or not call["name"]:
            fail(f"{where}.name", "must be a non-empty string")
        if not isinstance(call.get("arguments"), dict):
            fail(f"{where}.arguments", "must be a JSON object")
        calls.append(ToolCall(call["id"], call["name"], call["arguments"]))
    if role == "tool" and not isinstance(record.get("tool_call_id"), str):
        fail("tool_call_id", "a tool result needs the id of its call")
    if not isinstance(record.get("is_error", False), bool):
        fail("is_error", "must be true or false")
    for key in ("usage", "meta"):
        if record.get(key) is not None and not isinstance(record[key], dict):
            fail(key, "must be an object")
    return Message(
        role=role,
        content=_text(record, fail),
        tool_calls=tuple(calls),
        tool_call_id=record.get("tool_call_id"),
        is_error=record.get("is_error", False),
        name=record.get("name"),
        id=record.get("id"),
        ts=record.get("ts"),
        usage=record.get("usage"),
        meta=record.get("meta"),
        line=number,
    )


def _compaction(record: dict[str, Any], position: int, path: str, number: int) -> CompactionRecord:
    fail = _failer(path, number)
    covers = record.get("covers")
    if not isinstance(covers, int) or isinstance(covers, bool):
        fail("covers", "must be an integer message index")
    if record.get("origin") is not None and not isinstance(record["origin"], str):
        fail("origin", "must be a string")
    if record.get("meta") is not None and not isinstance(record["meta"], dict):
        fail("meta", "must be an object")
    if not 0 < covers <= position:
        fail("covers", f"{covers} is out of range: the block comes after message {position - 1}, "
                       f"so covers must be between 1 and {position}")
    return CompactionRecord(_text(record, fail), covers, position, record.get("origin", "manual"),
                            number, record.get("meta"))


# ---------------------------------------------------------------------------------------------
# writing


def message_record(message: Message) -> dict[str, Any]:
    """One line of session.jsonl, keys in the order DESIGN.md's contract shows (a tool result names its call
    before its content)."""
    record: dict[str, Any] = {"role": message.role}
    if message.role == "tool":
        record["tool_call_id"] = message.tool_call_id
    record["content"] = message.content
    if message.tool_calls:
        record["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    if message.role == "tool":
        if message.is_error:
            record["is_error"] = True
        if message.name:
            record["name"] = message.name
    for key in OPTIONAL_KEYS:
        value = getattr(message, key)
        if value is not None:
            record[key] = value
    return record


def session_records(session: Session) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    if session.system is not None or session.tools:
        system: dict[str, Any] = {"role": "system", "content": session.system or ""}
        if session.tools:
            system["tools"] = list(session.tools)
        records.append(system)
    blocks = sorted(session.compactions, key=lambda c: c.position)
    b = 0
    for i, message in enumerate(session.messages + (None,)):
        while b < len(blocks) and blocks[b].position == i:
            block = blocks[b]
            record = {"role": "compaction", "content": block.content, "covers": block.covers, "origin": block.origin}
            if block.meta:
                record["meta"] = block.meta
            records.append(record)
            b += 1
        if message is not None:
            records.append(message_record(message))
    return records


def dumps_session(session: Session) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in session_records(session))


def write_session(path: str | Path, session: Session) -> None:
    """Written whole or not at all; a lone surrogate (half an emoji) is escaped, never fatal."""
    write_atomic(path, encoded(dumps_session(session)))
