"""Codex CLI rollout JSONL (`~/.codex/sessions/.../rollout-*.jsonl`): `{timestamp, type, payload}` per line.

Maps: `session_meta.base_instructions.text` -> the session system; `response_item` messages (user, assistant,
developer -> a tagged user message); `function_call` / `custom_tool_call` -> tool calls (consecutive calls join
one assistant message), paired with `function_call_output` / `custom_tool_call_output` by `call_id` (the
custom output's JSON `{output, metadata.exit_code}` is unwrapped; a non-zero exit code marks an error);
`reasoning` is encrypted and left out (counted); `compacted {message, replacement_history}` -> a `compaction`
line (origin `codex`) with the summary, whose meta keeps the whole replacement history in order (`kept_history`:
every role, developer messages included);
`turn_context.model` -> the model; `task_started.model_context_window` -> the window. `event_msg` lines are
UI events and are skipped with counts by event type.
"""

from __future__ import annotations

import json
from typing import Any

from harness.errors import InputError
from harness.importers.builder import SessionBuilder
from harness.importers.report import ImportReport
from harness.importers.sources import block_text, load_jsonl, parse_arguments
from harness.session import Session

EXPECTED = "a Codex rollout line {timestamp, type, payload}"


def _output_text(output: Any) -> tuple[str, bool]:
    if isinstance(output, dict):  # some versions: {content, success}
        text = output.get("content")
        return (text if isinstance(text, str) else json.dumps(output)), output.get("success") is False
    return ("" if output is None else str(output)), False


def _custom_output(output: Any) -> tuple[str, bool, dict[str, Any] | None]:
    if isinstance(output, str):
        try:
            value = json.loads(output)
        except (ValueError, RecursionError):  # not JSON, or JSON no reader holds: the output as it is
            return output, False, None
        if isinstance(value, dict) and "output" in value:
            metadata = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
            code = metadata.get("exit_code")
            return str(value["output"]), isinstance(code, int) and code != 0, ({"exit_code": code} if code is not None else None)
    text, failed = _output_text(output)
    return text, failed, None


def _kept_item(item: dict[str, Any], report: ImportReport) -> dict[str, Any]:
    """One item of a `replacement_history`, whatever its role or type, as {role, content} (a message) or
    {type, content} (anything else, its payload as JSON), so the kept history is whole and in order."""
    if item.get("type") == "message":
        role = str(item.get("role") or "unknown")
        report.tag(f"kept history item: {role}")
        return {"role": role, "content": block_text(item.get("content"), report)}
    kind = str(item.get("type") or "untyped")
    report.tag(f"kept history item: {kind}")
    return {"type": kind, "content": json.dumps({k: v for k, v in item.items() if k != "type"}, ensure_ascii=False)}


MAPPED_ITEMS = ("message", "function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output")


def _fate(kind: str, payload: dict[str, Any]) -> str:
    """What becomes of one rollout line, for the report's account of the whole file."""
    if kind == "compacted" or (kind == "response_item" and payload.get("type") in MAPPED_ITEMS):
        return "kept"
    if kind == "session_meta":
        return "kept (system)" if payload.get("base_instructions") else "skipped as noise"
    if kind == "response_item" and payload.get("type") == "reasoning":
        return "left out (encrypted reasoning)"
    return "skipped as noise"  # turn_context and event_msg are read for the model and window only


def import_codex(text: str, path: str, report: ImportReport) -> Session:
    lines = load_jsonl(text, path, EXPECTED)
    builder = SessionBuilder(path, report)
    for number, line in lines:
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(kind, str) or not isinstance(payload, dict):
            raise InputError(path, number, "type" if not isinstance(kind, str) else "payload", f"missing; expected {EXPECTED}")
        ts = line.get("timestamp")
        before = report.redacted
        if kind == "session_meta":
            instructions = payload.get("base_instructions")
            instructions = instructions.get("text") if isinstance(instructions, dict) else instructions
            if isinstance(instructions, str) and instructions:
                builder.set_system(instructions, line=number)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                report.model = payload["model"]
        elif kind == "event_msg":
            event = payload.get("type")
            if event == "task_started" and isinstance(payload.get("model_context_window"), int):
                report.window = payload["model_context_window"]
                report.window_source = "transcript (task_started.model_context_window)"
            report.skip(f"event_msg: {event}")
        elif kind == "compacted":
            history = payload.get("replacement_history") or []
            kept = [_kept_item(item, report) for item in history if isinstance(item, dict)]
            meta = {"replacement_history_items": len(history), "kept_history": kept}
            builder.compaction(str(payload.get("message") or ""), "codex", meta=meta, line=number)
        elif kind == "response_item":
            _response_item(builder, payload, number, ts, path, report)
        else:
            report.skip(f"line type: {kind}")
        fate = _fate(kind, payload)
        report.fate("kept, secret redacted" if fate == "kept" and report.redacted > before else fate)
    return builder.build()


def _response_item(builder: SessionBuilder, item: dict[str, Any], number: int, ts: str | None, path: str,
                   report: ImportReport) -> None:
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        text = block_text(item.get("content"), report)
        if role == "assistant":
            builder.assistant(text, ts=ts, line=number)
        elif role == "user":
            builder.user(text, ts=ts, line=number)
        elif role in ("developer", "system"):
            builder.user(text, meta={"source_role": role}, ts=ts, line=number)
            report.tag(f"{role} message kept as user")
        else:
            raise InputError(path, number, "payload.role", f"unknown message role {role!r}; expected user, assistant or developer")
    elif kind == "reasoning":
        report.leave_out("encrypted reasoning")
    elif kind in ("function_call", "custom_tool_call"):
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            raise InputError(path, number, "payload.call_id", f"a {kind} needs a call_id")
        if kind == "function_call":
            arguments = parse_arguments(item.get("arguments"), report)
        else:
            arguments = {"input": item.get("input", "")}
        builder.call(call_id, str(item.get("name") or "unknown"), arguments, line=number, ts=ts)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            raise InputError(path, number, "payload.call_id", f"a {kind} needs the call_id of its call")
        if kind == "function_call_output":
            text, failed = _output_text(item.get("output"))
            meta = None
        else:
            text, failed, meta = _custom_output(item.get("output"))
        builder.result(call_id, text, is_error=failed, meta=meta, ts=ts, line=number)
    else:
        report.skip(f"response_item: {kind}")
