"""Anthropic Messages arrays: `[...]` or `{system?, messages: [...], model?, tools?}`.

Maps: `system` (string or text blocks) -> the session system; user `text` blocks -> a user message;
`tool_result {tool_use_id, content, is_error}` blocks -> results paired by id (placed before the user's own
text of the same message); assistant `text` -> content, `tool_use {id, name, input}` -> tool calls;
`thinking` / `redacted_thinking` are left out and counted; images and documents are replaced by a
placeholder and counted. The report counts every message by fate (`fates`).
"""

from __future__ import annotations

from typing import Any

from harness.errors import InputError
from harness.importers.builder import SessionBuilder
from harness.importers.report import ImportReport
from harness.importers.sources import block_text, load_json_document
from harness.importers.openai_chat import messages_of
from harness.session import Session

EXPECTED = "an Anthropic messages array of {role: user|assistant, content: str | [blocks]} (or {system, messages})"


def add_anthropic_content(builder: SessionBuilder, role: str, content: Any, where: str, path: str,
                          report: ImportReport, **extra: Any) -> None:
    """One Anthropic message (user or assistant) into the builder; shared with the Claude Code importer."""
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = content
    else:
        raise InputError(path, extra.get("line") or 1, f"{where}.content", "expected a string or a list of content blocks")
    texts: list[str] = []
    calls: list[tuple[str, str, dict]] = []
    for position, block in enumerate(blocks):
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise InputError(path, extra.get("line") or 1, f"{where}.content[{position}]", "expected a typed content block")
        kind = block["type"]
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind in ("thinking", "redacted_thinking"):
            report.leave_out(kind)
        elif kind == "tool_use" and role == "assistant":
            arguments = block.get("input")
            calls.append((str(block.get("id")), str(block.get("name")), arguments if isinstance(arguments, dict) else {"value": arguments}))
        elif kind == "tool_result" and role == "user":
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str):
                raise InputError(path, extra.get("line") or 1, f"{where}.content[{position}].tool_use_id",
                                 "a tool_result needs the id of its tool_use")
            builder.result(call_id, block_text(block.get("content"), report), is_error=bool(block.get("is_error")),
                           ts=extra.get("ts"), line=extra.get("line", 0))
        else:
            report.leave_out(f"{kind} block")
            texts.append(f"[{kind} omitted]")
    text = "\n".join(t for t in texts if t)
    if role == "assistant":
        builder.assistant(text, calls, usage=extra.get("usage"), meta=extra.get("meta"), ts=extra.get("ts"),
                          id=extra.get("id"), line=extra.get("line", 0))
    elif text or not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
        builder.user(text, meta=extra.get("meta"), ts=extra.get("ts"), id=extra.get("id"), line=extra.get("line", 0))


def import_anthropic_messages(text: str, path: str, report: ImportReport) -> Session:
    document = load_json_document(text, path, EXPECTED)
    messages = messages_of(document, path, EXPECTED)
    builder = SessionBuilder(path, report)
    if isinstance(document, dict):
        if isinstance(document.get("model"), str):
            report.model = document["model"]
        if document.get("tools"):
            report.skip("tool definitions", len(document["tools"]))
        if document.get("system"):
            builder.set_system(block_text(document["system"], report))
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            role = message.get("role") if isinstance(message, dict) else None
            raise InputError(path, 1, f"{where}.role", f"unknown role {role!r}; expected user or assistant ({EXPECTED})")
        builder.entry(index)
        add_anthropic_content(builder, message["role"], message.get("content"), where, path, report)
    return builder.build()
