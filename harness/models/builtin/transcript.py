"""A conversation a runtime serialised into its summary request (pi and opencode put the whole history in one
user message: `<conversation>\\n[User]: ...\\n\\n[Assistant tool calls]: bash(command="...")\\n[Tool result]: ...
</conversation>`, then the instruction), read back into messages so the summarizer sees turns, calls and
results as it does in any other request."""

from __future__ import annotations

import json
import re

from harness.models.base import ChatMessage, ModelRequest, ToolCallSpec
from harness.models.builtin.text import last_user

_BLOCK = re.compile(r"<(conversation|previous-summary)>\n?(.*?)\n?</\1>", re.S)
_SPEAKER = re.compile(r"^\[(User|Assistant|Assistant thinking|Assistant tool calls?|Tool result)\]:[ \t]?", re.M)
_CALL = re.compile(r"^\s*([\w.-]+)\((.*)\)\s*$", re.S)
_KEYWORD = re.compile(r"(\w+)=(\"(?:[^\"\\\\]|\\\\.)*\"|[^,]+)")


def split_request(request: ModelRequest) -> tuple[tuple[ChatMessage, ...], str]:
    """(the history to summarise, the instruction's text): the messages before the last user message, which
    is the instruction, plus any conversation serialised inside it."""
    instruction = last_user(request)
    if instruction is None:
        return request.messages, ""
    cut = max(i for i, m in enumerate(request.messages) if m is instruction)
    serialised = unpack(instruction)
    if serialised is None:
        return request.messages[:cut], instruction.content
    return request.messages[:cut] + serialised[0], serialised[1]


def unpack(instruction: ChatMessage) -> tuple[tuple[ChatMessage, ...], str] | None:
    """(the messages serialised in `instruction`, the instruction's own text) or None when it holds no
    `<conversation>`. An earlier summary in `<previous-summary>` becomes the first message."""
    blocks = {m.group(1): m for m in _BLOCK.finditer(instruction.content)}
    if "conversation" not in blocks:
        return None
    messages: list[ChatMessage] = []
    if "previous-summary" in blocks:
        messages.append(ChatMessage("user", blocks["previous-summary"].group(2).strip()))
    messages += _messages(blocks["conversation"].group(2))
    rest = _BLOCK.sub("", instruction.content).strip()
    return tuple(messages), rest


def _messages(text: str) -> list[ChatMessage]:
    parts = _SPEAKER.split(text)
    messages: list[ChatMessage] = []
    pending: list[str] = []  # ids of calls still waiting for their results
    for speaker, body in zip(parts[1::2], parts[2::2]):
        body = body.strip()
        if speaker == "User":
            messages.append(ChatMessage("user", body))
        elif speaker in ("Assistant", "Assistant thinking"):
            messages.append(ChatMessage("assistant", body))
        elif speaker.startswith("Assistant tool call"):
            calls = tuple(_call(line, len(messages), n) for n, line in enumerate(_call_lines(body)))
            messages.append(ChatMessage("assistant", "", calls))
            pending = [c.id for c in calls]
        else:
            call_id = pending.pop(0) if pending else f"serialised-{len(messages)}"
            messages.append(ChatMessage("tool", body, tool_call_id=call_id))
    return messages


def _call_lines(body: str) -> list[str]:
    lines = [line for line in body.split("\n") if _CALL.match(line)]
    return lines or [body]


def _call(line: str, at: int, n: int) -> ToolCallSpec:
    match = _CALL.match(line)
    call_id = f"serialised-{at}-{n}"
    if match is None:
        return ToolCallSpec(call_id, line.strip(), {})
    name, inside = match.group(1), match.group(2).strip()
    try:
        arguments = json.loads(inside)  # opencode: name({"command":"..."})
    except json.JSONDecodeError:
        arguments = {key: _value(value) for key, value in _KEYWORD.findall(inside)}  # pi: name(command="...")
    return ToolCallSpec(call_id, name, arguments if isinstance(arguments, dict) else {})


def _value(text: str) -> str:
    text = text.strip()
    if text.startswith('"'):
        try:
            return str(json.loads(text))
        except json.JSONDecodeError:
            return text.strip('"')
    return text
