"""mini-swe-agent trajectories (`*.traj.json`): `{info, messages, trajectory_format, instance_id}`.

`messages` are OpenAI chat (see openai_chat): system, the task as user, assistant messages with `tool_calls`
(a `bash` function with `{"command": ...}`), tool messages wrapping `<returncode>` and `<output>`. Every
message's `extra` (raw responses, timings) is not mapped. The last message may have role `exit`: its content
is the output of the submit command, so it becomes the result of a call still waiting for one (else it is
skipped and counted). Older trajectories without tool calls (text actions in a ```bash block answered by a
user message) become `bash` tool calls with the following user message as the result.
The model name comes from the raw responses in `extra`. The report counts every message by fate (`fates`).
"""

from __future__ import annotations

import re
from typing import Any

from harness.errors import InputError
from harness.importers.builder import SessionBuilder
from harness.importers.report import ImportReport
from harness.importers.sources import block_text, load_json_document
from harness.importers.openai_chat import add_openai_message, check_message
from harness.session import Session

EXPECTED = "a mini-swe-agent trajectory {info, messages: [...], trajectory_format}"
BASH_BLOCK = re.compile(r"```(?:bash|sh)?\s*\n(.*?)\n?```", re.S)


def import_mini_swe_agent(text: str, path: str, report: ImportReport) -> Session:
    document = load_json_document(text, path, EXPECTED)
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        raise InputError(path, 1, "messages", f"missing or not a list; expected {EXPECTED}")
    if not isinstance(document.get("info"), dict):
        raise InputError(path, 1, "info", f"missing; expected {EXPECTED}")
    messages: list[Any] = document["messages"]
    legacy = not any(isinstance(m, dict) and m.get("tool_calls") for m in messages)
    builder = SessionBuilder(path, report)
    extras = 0
    waiting_legacy: str | None = None  # call id of a legacy text action waiting for its observation
    for index, message in enumerate(messages):
        message = check_message(message, index, path, EXPECTED,
                                roles=("system", "user", "assistant", "tool", "exit"))
        builder.entry(index)
        if "extra" in message:
            extras += 1
            model = _model_of(message["extra"])
            if model:
                report.model = model
        role = message["role"]
        if role == "exit":
            pending = builder.pending_call_ids()
            exit_meta = {"exit_status": (message.get("extra") or {}).get("exit_status")} if isinstance(message.get("extra"), dict) else None
            if pending or waiting_legacy:
                call_id = waiting_legacy or pending[-1]
                builder.result(call_id, block_text(message.get("content"), report), meta=exit_meta)
                report.tag("exit message used as the result of the submit call")
                waiting_legacy = None
            else:
                report.skip("exit message")
                builder.skip_entry("skipped (exit message with no call waiting)")
            continue
        if legacy and role == "assistant":
            content = block_text(message.get("content"), report)
            actions = BASH_BLOCK.findall(content)
            if actions:
                call_id = f"action-{index}"
                builder.assistant(content, [(call_id, "bash", {"command": actions[-1].strip()})])
                waiting_legacy = call_id
                continue
        if legacy and role == "user" and waiting_legacy:
            builder.result(waiting_legacy, block_text(message.get("content"), report))
            waiting_legacy = None
            continue
        add_openai_message(builder, message, index, path, report)
    if extras:
        report.skip("extra (raw responses and timings, not mapped)", extras)
    info = document["info"]
    if info.get("exit_status"):
        report.notes.append(f"exit status: {info['exit_status']}")
    return builder.build()


def _model_of(extra: Any) -> str | None:
    if isinstance(extra, dict) and isinstance(extra.get("response"), dict):
        model = extra["response"].get("model")
        return model if isinstance(model, str) else None
    return None
