"""`SessionBuilder`: turns a stream of source items into a valid canonical `Session`.

Every importer feeds a builder in source order. The builder places each tool result right after the
assistant message holding its call (paired by id), gives a call with no result a synthetic
`[no result recorded]` result, counts a result with no call as skipped, and validates the finished
session with `harness.session.parse_session`, so an imported file is always a loadable case. Importers of
single-document formats open each source entry (`entry`), so the report counts every entry by fate (`fates`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Hashable

from harness.errors import HarnessError, InputError
from harness.importers.fates import NOTHING_BEFORE, ORPHAN, SYSTEM, EntryLedger
from harness.importers.redact import Redactor
from harness.importers.report import NO_RESULT, ImportReport
from harness.session import Message, Session, ToolCall, message_record, parse_session


@dataclass
class _Item:
    kind: str  # "message" | "result" | "compaction"
    message: Message | None = None
    call_id: str | None = None
    content: str = ""
    origin: str = ""
    meta: dict[str, Any] | None = None
    line: int = 0
    entry: Hashable | None = None  # the source entry it came from (formats that account per entry)


class SessionBuilder:
    """Collects messages, tool calls and results and compaction records in source order."""

    def __init__(self, path: str, report: ImportReport, *, source_lines: bool = False):
        self.path = path
        self.report = report
        self.source_lines = source_lines  # write each message's source line as meta.source_line
        self.redact = Redactor(report)
        self.system: str | None = None
        self.items: list[_Item] = []
        self._open_assistant: int | None = None  # index in items of an assistant that may take more calls
        self._call_ids: Counter = Counter()
        self.ledger = EntryLedger()
        self._entry: Hashable | None = None
        self._redacted_at = 0  # report.redacted when the current entry opened

    # -- source entries (single-document formats) ---------------------------------------------

    def entry(self, key: Hashable) -> None:
        """The items fed from now on come from source entry `key`; its fate is counted when the session is built."""
        self._close_entry()
        self.ledger.open(key)
        self._entry, self._redacted_at = key, self.report.redacted

    def skip_entry(self, fate: str) -> None:
        """The current entry is not mapped, for the reason `fate` names."""
        if self._entry is not None:
            self.ledger.named[self._entry] = fate

    def _close_entry(self) -> None:
        if self._entry is not None and self.report.redacted > self._redacted_at:
            self.ledger.redacted.add(self._entry)

    # -- adding ---------------------------------------------------------------------------

    def set_system(self, text: str, line: int = 0) -> None:
        text = self.redact.text(text)
        if self.system is None and not self.items:
            self.system = text
            if self._entry is not None:
                self.ledger.named[self._entry] = SYSTEM
        else:  # a later system/developer message: kept in place as a tagged user message
            self.user(text, meta={"source_role": "system"}, line=line)
            self.report.tag("later system message kept as user")

    def user(self, text: str, *, meta: dict[str, Any] | None = None, ts: str | None = None,
             id: str | None = None, line: int = 0) -> None:
        self._open_assistant = None
        self.items.append(_Item("message", Message("user", self.redact.text(text), meta=meta or None, ts=ts,
                                                   id=id, line=line), entry=self._entry))

    def assistant(self, text: str, calls: list[tuple[str, str, dict[str, Any]]] = (), *,
                  usage: dict[str, Any] | None = None, meta: dict[str, Any] | None = None,
                  ts: str | None = None, id: str | None = None, line: int = 0, open_for_calls: bool = True) -> None:
        text = self.redact.text(text)
        tool_calls = tuple(self._call(call_id, name, args) for call_id, name, args in calls)
        if not text.strip() and not tool_calls:
            self.report.skip("empty assistant message")
            return
        self.items.append(_Item("message", Message("assistant", text, tool_calls, usage=usage, meta=meta or None,
                                                   ts=ts, id=id, line=line), entry=self._entry))
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
                                                   line=line), entry=self._entry))
        self._open_assistant = len(self.items) - 1

    def result(self, call_id: str, text: str, *, is_error: bool = False, name: str | None = None,
               meta: dict[str, Any] | None = None, ts: str | None = None, line: int = 0) -> None:
        self._open_assistant = None
        self.items.append(_Item("result", Message("tool", self.redact.text(text), tool_call_id=call_id,
                                                  is_error=is_error, name=name, meta=meta or None, ts=ts,
                                                  line=line), call_id=call_id, entry=self._entry))

    def compaction(self, summary: str, origin: str, *, meta: dict[str, Any] | None = None, line: int = 0) -> None:
        self._open_assistant = None
        self.items.append(_Item("compaction", content=self.redact.text(summary), origin=origin,
                                meta=self.redact.value(meta) if meta else None, line=line, entry=self._entry))

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
        self._close_entry()
        results: dict[str, list[_Item]] = {}
        for item in self.items:
            if item.kind == "result":
                results.setdefault(item.call_id, []).append(item)
        messages: list[Message] = []
        records: list[Any] = []
        used_ids: Counter = Counter()
        for item in self.items:
            if item.kind == "result":
                continue
            if item.kind == "compaction":
                if not messages:
                    self.report.skip("compaction record with nothing before it")
                    self.ledger.item(item.entry, False, why=NOTHING_BEFORE)
                    continue
                self.ledger.item(item.entry, True)
                record = {"role": "compaction", "content": item.content, "covers": len(messages),
                          "origin": item.origin}
                if item.meta:
                    record["meta"] = item.meta
                records.append(record)
                continue
            message = item.message
            self.ledger.item(item.entry, True, tagged=bool((message.meta or {}).get("tag")))
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
                    answer = queue.pop(0)
                    self.ledger.item(answer.entry, True)
                    result = answer.message
                    answers.append(Message("tool", result.content, tool_call_id=new_id, is_error=result.is_error,
                                           name=result.name or call.name, meta=result.meta, ts=result.ts,
                                           line=result.line))
                    self.report.pairs += 1
                else:
                    answers.append(Message("tool", NO_RESULT, tool_call_id=new_id, name=call.name,
                                           meta={"synthetic": True}, line=message.line))
                    self.report.synthetic_results += 1
            fixed = Message("assistant", message.content, tuple(calls), usage=message.usage, meta=message.meta,
                            ts=message.ts, id=message.id, line=message.line)
            for m in (fixed, *answers):
                messages.append(m)
                records.append(("message", m))
        orphans = sum(len(queue) for queue in results.values())
        for queue in results.values():
            for item in queue:
                self.ledger.item(item.entry, False, why=ORPHAN)
        if orphans:
            self.report.skip("tool result with no matching call", orphans)
        lines = []
        if self.system is not None:
            lines.append(json.dumps({"role": "system", "content": self.system}, ensure_ascii=False))
        for record in records:
            if isinstance(record, tuple):
                record = message_record(self._located(record[1]))
            lines.append(json.dumps(record, ensure_ascii=False))
        try:
            session = parse_session(lines, self.path)
        except InputError as exc:  # a bug in an importer, not in the user's file
            raise HarnessError(f"{self.path}: the imported session failed validation ({exc}); please report this") from None
        self._fill_report(session)
        return session

    def _located(self, message: Message) -> Message:
        """The message with `meta.source_line` when asked for (a synthetic result carries its call's line)."""
        if not self.source_lines or not message.line:
            return message
        return replace(message, meta={**(message.meta or {}), "source_line": message.line})

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
        for fate, count in self.ledger.fates().items():
            self.report.fate(fate, count)
