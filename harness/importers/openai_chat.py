"""OpenAI chat message arrays: `[...]` or `{messages: [...], model?, tools?}`.

Maps: system (first) -> the session system; user -> user; assistant `content` + `tool_calls`
(`function.arguments` is a JSON string) -> assistant with tool calls; `tool` messages -> results paired by
`tool_call_id`. Later system/developer messages are kept as tagged user messages. `reasoning_content`
(DeepSeek, vLLM) is left out and counted. Legacy `function` messages are skipped and counted. The report counts
every message by fate (`fates`).
"""

from __future__ import annotations

import re
from typing import Any

from harness.errors import InputError
from harness.importers.builder import SessionBuilder
from harness.importers.report import ImportReport
from harness.importers.sources import block_text, load_json_document, parse_arguments
from harness.session import Session

EXPECTED = "an OpenAI chat array of {role, content} messages (or an object with `messages`)"
THINKING = re.compile(r"<thinking>(.*?)</thinking>\s*", re.S)


def messages_of(document: Any, path: str, expected: str = EXPECTED) -> list[Any]:
    if isinstance(document, dict):
        messages = document.get("messages")
        if not isinstance(messages, list):
            raise InputError(path, 1, "messages", f"missing or not a list; expected {expected}")
        return messages
    if isinstance(document, list):
        return document
    raise InputError(path, 1, None, f"expected {expected}, found a JSON {type(document).__name__}")


def check_message(message: Any, index: int, path: str, expected: str = EXPECTED,
                  roles: tuple[str, ...] = ("system", "developer", "user", "assistant", "tool", "function")) -> dict:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise InputError(path, 1, where, f"expected a message object; {expected}")
    role = message.get("role")
    if role not in roles:
        raise InputError(path, 1, f"{where}.role", f"unknown role {role!r}; expected one of {', '.join(roles)} ({expected})")
    return message


def add_openai_message(builder: SessionBuilder, message: dict[str, Any], index: int, path: str,
                       report: ImportReport, *, strip_thinking: bool = False,
                       user_meta: dict[str, Any] | None = None) -> None:
    """One OpenAI chat message into the builder (shared by the openai-shaped formats). With `strip_thinking`,
    inline `<thinking>` text leaves the content for `meta.thinking`."""
    role = message["role"]
    text = block_text(message.get("content"), report)
    meta = None
    if strip_thinking and role == "assistant":
        text, meta = _thinking_out(text, builder, report)
    if role in ("system", "developer"):
        builder.set_system(text)
    elif role == "user":
        builder.user(text, meta=user_meta)
    elif role == "assistant":
        if message.get("reasoning_content"):
            report.leave_out("thinking")
        calls = []
        for position, call in enumerate(message.get("tool_calls") or []):
            where = f"messages[{index}].tool_calls[{position}]"
            if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
                raise InputError(path, 1, where, "expected {id, type: function, function: {name, arguments}}")
            function = call["function"]
            calls.append((str(call.get("id") or f"call-{index}-{position}"), str(function.get("name") or "unknown"),
                          parse_arguments(function.get("arguments"), report)))
        if message.get("function_call"):
            report.skip("legacy function_call on an assistant message")
        builder.assistant(text, calls, meta=meta)
    elif role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            raise InputError(path, 1, f"messages[{index}].tool_call_id", "a tool message needs the id of its call")
        builder.result(call_id, text, name=message.get("name"))
    else:  # function
        report.skip("legacy function message")
        builder.skip_entry("skipped (legacy function message)")


def _thinking_out(text: str, builder: SessionBuilder, report: ImportReport) -> tuple[str, dict[str, Any] | None]:
    thoughts = [m.group(1).strip() for m in THINKING.finditer(text) if m.group(1).strip()]
    stripped, n = THINKING.subn("", text)
    report.thinking["empty"] += n - len(thoughts)
    if not thoughts:
        return stripped, None
    report.thinking["blocks"] += len(thoughts)
    report.thinking["characters"] += sum(map(len, thoughts))
    return stripped, {"thinking": builder.redact.text("\n\n".join(thoughts))}


def import_openai_chat(text: str, path: str, report: ImportReport) -> Session:
    document = load_json_document(text, path, EXPECTED)
    messages = messages_of(document, path)
    if isinstance(document, dict) and isinstance(document.get("model"), str):
        report.model = document["model"]
    if isinstance(document, dict) and document.get("tools"):
        report.skip("tool definitions", len(document["tools"]))
    builder = SessionBuilder(path, report)
    for index, message in enumerate(messages):
        check_message(message, index, path)
        builder.entry(index)
        add_openai_message(builder, message, index, path, report)
    return builder.build()
