"""Shared pieces of the importers: the import report, the case metadata, secret redaction, the known
model windows, and `SessionBuilder`, which turns a stream of source items into a valid canonical `Session`.

Every importer feeds a builder in source order. The builder places each tool result right after the
assistant message holding its call (paired by id), gives a call with no result a synthetic
`[no result recorded]` result, counts a result with no call as skipped, and validates the finished
session with `harness.session.parse_session`, so an imported file is always a loadable case.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from harness.errors import HarnessError, InputError
from harness.session import Message, Session, ToolCall, dumps_session, message_record, parse_session

NO_RESULT = "[no result recorded]"
DEFAULT_MAX_OUTPUT_TOKENS = 16384

# Context windows of a few common models, used when the transcript does not state its window.
# Hard-coded here because the price table module (harness.models.pricing) may not exist yet; the longest
# matching prefix wins. Sources: the providers' model pages.
KNOWN_WINDOWS: dict[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude-": 200_000,  # every current Claude model (3.x, 4.x) has a 200k standard window
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
}


def known_window(model: str | None) -> int | None:
    if not model:
        return None
    name = model.lower().split("/")[-1]
    best = ""
    for prefix in KNOWN_WINDOWS:
        if name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return KNOWN_WINDOWS[best] if best else None


# ---------------------------------------------------------------------------------------------
# report and case metadata


@dataclass
class ImportReport:
    """What an import mapped, repaired, skipped and left out. Nothing is dropped without a count here."""

    source: str
    format: str = ""
    detected: bool = False  # True when `--from auto` chose the format
    messages: dict[str, int] = field(default_factory=dict)  # by role, system included
    turns: int = 0
    tool_calls: int = 0
    pairs: int = 0  # tool calls paired with a real result from the source
    synthetic_results: int = 0  # calls that got NO_RESULT
    compactions: int = 0
    skipped: Counter = field(default_factory=Counter)  # kind -> count of source items not mapped
    left_out: Counter = field(default_factory=Counter)  # thinking / encrypted / images, by kind
    tagged: Counter = field(default_factory=Counter)  # messages kept but tagged in meta (noise, demo...)
    redacted: int = 0  # secrets replaced by [REDACTED]
    model: str | None = None
    window: int | None = None
    window_source: str = ""
    notes: list[str] = field(default_factory=list)

    def skip(self, kind: str, count: int = 1) -> None:
        self.skipped[kind] += count

    def leave_out(self, kind: str, count: int = 1) -> None:
        self.left_out[kind] += count

    def tag(self, kind: str, count: int = 1) -> None:
        self.tagged[kind] += count

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "format": self.format, "detected": self.detected,
            "messages": dict(self.messages), "turns": self.turns, "tool_calls": self.tool_calls,
            "pairs": self.pairs, "synthetic_results": self.synthetic_results, "compactions": self.compactions,
            "skipped": dict(self.skipped), "left_out": dict(self.left_out), "tagged": dict(self.tagged),
            "redacted": self.redacted, "model": self.model, "window": self.window,
            "window_source": self.window_source, "notes": list(self.notes),
        }

    def lines(self) -> list[str]:
        how = "detected" if self.detected else "given"
        roles = ", ".join(f"{role} {n}" for role, n in self.messages.items()) or "none"
        out = [
            f"format: {self.format} ({how})",
            f"messages: {sum(self.messages.values())} ({roles})",
            f"turns: {self.turns}",
            f"tool calls: {self.tool_calls}, paired with a result: {self.pairs}, "
            f"given {NO_RESULT!r}: {self.synthetic_results}",
            f"compaction records: {self.compactions}",
            "skipped: " + (_counts(self.skipped) or "nothing"),
            "left out: " + (_counts(self.left_out) or "nothing"),
            "tagged: " + (_counts(self.tagged) or "nothing"),
            f"secrets redacted: {self.redacted}",
            f"model: {self.model or 'unknown'}; window: {self.window} ({self.window_source})",
        ]
        out += [f"note: {note}" for note in self.notes]
        return out

    def render(self) -> str:
        return "\n".join(self.lines())


def _counts(counter: Counter) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counter.items()) if n)


@dataclass(frozen=True)
class CaseMeta:
    """What `case.toml` needs beyond the session: title, pool and the session model."""

    title: str
    context_window: int
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    model: str | None = None
    pool: str = "autonomous"
    source: str = ""
    format: str = ""


# ---------------------------------------------------------------------------------------------
# secrets

_SECRET_PATTERNS = [
    re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}(?![0-9A-Z])"),
    re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/=-]{16,}"),
]
REDACTED = "[REDACTED]"


class Redactor:
    def __init__(self, report: ImportReport):
        self.report = report

    def text(self, value: str) -> str:
        for pattern in _SECRET_PATTERNS:
            value, n = pattern.subn(REDACTED, value)
            self.report.redacted += n
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value


# ---------------------------------------------------------------------------------------------
# JSON helpers with located errors


def load_json_document(text: str, path: str, expected: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, None, f"bad JSON ({exc.msg}, column {exc.colno}); expected {expected}") from None


def load_jsonl(text: str, path: str, expected: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line; a line that is not a JSON object is an error."""
    out: list[tuple[int, dict[str, Any]]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(path, number, None, f"bad JSON ({exc.msg}, column {exc.colno}); expected {expected}") from None
        if not isinstance(record, dict):
            raise InputError(path, number, None, f"expected {expected}, found a JSON {type(record).__name__}")
        out.append((number, record))
    if not out:
        raise InputError(path, None, None, f"the file is empty; expected {expected}")
    return out


def parse_arguments(raw: Any, report: ImportReport) -> dict[str, Any]:
    """Tool arguments as a JSON object: OpenAI sends a JSON string; anything else is wrapped and counted."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            report.tag("arguments kept as raw text (not JSON)")
            return {"raw": raw}
        if isinstance(value, dict):
            return value
        report.tag("arguments wrapped (JSON but not an object)")
        return {"value": value}
    report.tag("arguments wrapped (JSON but not an object)")
    return {"value": raw}


def block_text(content: Any, report: ImportReport, *, text_types: tuple[str, ...] = ("text", "input_text", "output_text")) -> str:
    """Text of a content value that is a string or a list of typed blocks; images and the like are counted."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") in text_types and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict):
            kind = str(block.get("type", "untyped"))
            report.leave_out(f"{kind} block")
            parts.append(f"[{kind} omitted]")
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# the builder


@dataclass
class _Item:
    kind: str  # "message" | "result" | "compaction"
    message: Message | None = None
    call_id: str | None = None
    content: str = ""
    origin: str = ""
    meta: dict[str, Any] | None = None
    line: int = 0


class SessionBuilder:
    """Collects messages, tool calls and results and compaction records in source order."""

    def __init__(self, path: str, report: ImportReport):
        self.path = path
        self.report = report
        self.redact = Redactor(report)
        self.system: str | None = None
        self.items: list[_Item] = []
        self._open_assistant: int | None = None  # index in items of an assistant that may take more calls
        self._call_ids: Counter = Counter()

    # -- adding ---------------------------------------------------------------------------

    def set_system(self, text: str, line: int = 0) -> None:
        text = self.redact.text(text)
        if self.system is None and not self.items:
            self.system = text
        else:  # a later system/developer message: kept in place as a tagged user message
            self.user(text, meta={"source_role": "system"}, line=line)
            self.report.tag("later system message kept as user")

    def user(self, text: str, *, meta: dict[str, Any] | None = None, ts: str | None = None,
             id: str | None = None, line: int = 0) -> None:
        self._open_assistant = None
        self.items.append(_Item("message", Message("user", self.redact.text(text), meta=meta or None, ts=ts,
                                                   id=id, line=line)))

    def assistant(self, text: str, calls: list[tuple[str, str, dict[str, Any]]] = (), *,
                  usage: dict[str, Any] | None = None, meta: dict[str, Any] | None = None,
                  ts: str | None = None, id: str | None = None, line: int = 0, open_for_calls: bool = True) -> None:
        text = self.redact.text(text)
        tool_calls = tuple(self._call(call_id, name, args) for call_id, name, args in calls)
        if not text.strip() and not tool_calls:
            self.report.skip("empty assistant message")
            return
        self.items.append(_Item("message", Message("assistant", text, tool_calls, usage=usage, meta=meta or None,
                                                   ts=ts, id=id, line=line)))
        self._open_assistant = len(self.items) - 1 if open_for_calls else None

    def call(self, call_id: str, name: str, args: dict[str, Any], *, line: int = 0, ts: str | None = None) -> None:
        """A tool call that arrives as its own item (Codex): joins the assistant message just before it
        when nothing but calls came after that message (parallel calls), else opens a new one."""
        if self._open_assistant is not None and self._open_assistant == len(self.items) - 1:
            item = self.items[self._open_assistant]
            old = item.message
            item.message = Message(old.role, old.content, old.tool_calls + (self._call(call_id, name, args),),
                                   usage=old.usage, meta=old.meta, ts=old.ts, id=old.id, line=old.line)
            return
        self.items.append(_Item("message", Message("assistant", "", (self._call(call_id, name, args),), ts=ts,
                                                   line=line)))
        self._open_assistant = len(self.items) - 1

    def result(self, call_id: str, text: str, *, is_error: bool = False, name: str | None = None,
               meta: dict[str, Any] | None = None, ts: str | None = None, line: int = 0) -> None:
        self._open_assistant = None
        self.items.append(_Item("result", Message("tool", self.redact.text(text), tool_call_id=call_id,
                                                  is_error=is_error, name=name, meta=meta or None, ts=ts,
                                                  line=line), call_id=call_id))

    def compaction(self, summary: str, origin: str, *, meta: dict[str, Any] | None = None, line: int = 0) -> None:
        self._open_assistant = None
        self.items.append(_Item("compaction", content=self.redact.text(summary), origin=origin,
                                meta=self.redact.value(meta) if meta else None, line=line))

    def pending_call_ids(self) -> list[str]:
        """Call ids that no result item has answered yet (for formats whose last call may end the file)."""
        answered = Counter(item.call_id for item in self.items if item.kind == "result")
        out = []
        for item in self.items:
            if item.kind == "message" and item.message.role == "assistant":
                for call in item.message.tool_calls:
                    if answered[call.id]:
                        answered[call.id] -= 1
                    else:
                        out.append(call.id)
        return out

    def _call(self, call_id: str, name: str, args: dict[str, Any]) -> ToolCall:
        self._call_ids[call_id] += 1
        if self._call_ids[call_id] > 1:
            self.report.notes.append(f"tool call id {call_id!r} repeats in the source; pairing by order")
        return ToolCall(call_id or "call", name or "unknown", self.redact.value(args))

    # -- finishing ------------------------------------------------------------------------

    def build(self) -> Session:
        results: dict[str, list[Message]] = {}
        for item in self.items:
            if item.kind == "result":
                results.setdefault(item.call_id, []).append(item.message)
        messages: list[Message] = []
        records: list[Any] = []
        used_ids: Counter = Counter()
        for item in self.items:
            if item.kind == "result":
                continue
            if item.kind == "compaction":
                if not messages:
                    self.report.skip("compaction record with nothing before it")
                    continue
                record = {"role": "compaction", "content": item.content, "covers": len(messages),
                          "origin": item.origin}
                if item.meta:
                    record["meta"] = item.meta
                records.append(record)
                continue
            message = item.message
            if message.role != "assistant" or not message.tool_calls:
                messages.append(message)
                records.append(("message", message))
                continue
            calls: list[ToolCall] = []
            answers: list[Message] = []
            for call in message.tool_calls:
                # ids repeated in the source (legacy formats) are renamed so the session stays unambiguous
                used_ids[call.id] += 1
                new_id = call.id if used_ids[call.id] == 1 else f"{call.id}#{used_ids[call.id]}"
                calls.append(ToolCall(new_id, call.name, call.arguments))
                queue = results.get(call.id) or []
                if queue:
                    result = queue.pop(0)
                    answers.append(Message("tool", result.content, tool_call_id=new_id, is_error=result.is_error,
                                           name=result.name or call.name, meta=result.meta, ts=result.ts,
                                           line=result.line))
                    self.report.pairs += 1
                else:
                    answers.append(Message("tool", NO_RESULT, tool_call_id=new_id, name=call.name,
                                           meta={"synthetic": True}))
                    self.report.synthetic_results += 1
            fixed = Message("assistant", message.content, tuple(calls), usage=message.usage, meta=message.meta,
                            ts=message.ts, id=message.id, line=message.line)
            for m in (fixed, *answers):
                messages.append(m)
                records.append(("message", m))
        orphans = sum(len(queue) for queue in results.values())
        if orphans:
            self.report.skip("tool result with no matching call", orphans)
        lines = []
        if self.system is not None:
            lines.append(json.dumps({"role": "system", "content": self.system}, ensure_ascii=False))
        for record in records:
            if isinstance(record, tuple):
                record = message_record(record[1])
            lines.append(json.dumps(record, ensure_ascii=False))
        try:
            session = parse_session(lines, self.path)
        except InputError as exc:  # a bug in an importer, not in the user's file
            raise HarnessError(f"{self.path}: the imported session failed validation ({exc}); please report this") from None
        self._fill_report(session)
        return session

    def _fill_report(self, session: Session) -> None:
        roles = Counter(m.role for m in session.messages)
        counts = {"system": 1} if session.system is not None else {}
        for role in ("user", "assistant", "tool"):
            if roles[role]:
                counts[role] = roles[role]
        self.report.messages = counts
        self.report.turns = len(session.turns)
        self.report.tool_calls = sum(len(m.tool_calls) for m in session.messages)
        self.report.compactions = len(session.compactions)


def roundtrip(session: Session) -> str:
    return dumps_session(session)


Fail = Callable[[int | None, str | None, str], None]


def failer(path: str) -> Fail:
    def fail(line: int | None, field_name: str | None, problem: str) -> None:
        raise InputError(path, line, field_name, problem)

    return fail
