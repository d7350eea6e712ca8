"""A recorded call becomes a call of the tool the runtime offers, with arguments shaped from its schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scripted import NoToolForCall, mapped_call
from harness.scripted.steps import ScriptCall

CALL = ScriptCall("call_7", ".replay/call_7.txt", "recorded", "grep")


def _tool(name: str, properties: dict, required: tuple[str, ...] = ()) -> dict:
    return {"name": name, "description": "", "parameters": {"type": "object", "properties": properties,
                                                            "required": list(required)}}


STRING = {"type": "string"}


@pytest.mark.parametrize(("tool", "arguments"), [
    (_tool("bash", {"command": STRING}, ("command",)), {"command": "cat .replay/call_7.txt"}),  # pi
    (_tool("exec_command", {"cmd": STRING, "yield_time_ms": {"type": "number"}}, ("cmd",)),
     {"cmd": "cat .replay/call_7.txt"}),  # codex
    (_tool("run_shell_command", {"command": STRING, "description": STRING}, ("command",)),
     {"command": "cat .replay/call_7.txt"}),  # gemini, qwen
    (_tool("Bash", {"command": STRING, "timeout": {"type": "number"}}, ("command",)),
     {"command": "cat .replay/call_7.txt"}),  # claude code
    (_tool("bash", {"command": STRING, "description": STRING, "timeout": {"type": "integer"}},
           ("command", "description")),
     {"command": "cat .replay/call_7.txt", "description": "replay a recorded output"}),  # opencode requires one
    (_tool("shell", {"command": {"type": "array", "items": STRING}}, ("command",)),
     {"command": ["cat", ".replay/call_7.txt"]}),  # an argv array
    (_tool("my_bash_tool", {"cmd": STRING}), {"cmd": "cat .replay/call_7.txt"}),  # by name stem and schema
])
def test_the_shell_tool_runs_cat_on_the_fixture(tool, arguments):
    other = _tool("read_file", {"path": STRING}, ("path",))
    call = mapped_call(CALL, (other, tool), Path("/ws"))
    assert (call.id, call.name, call.arguments) == ("call_7", tool["name"], arguments)


def test_without_a_shell_the_read_tool_reads_the_fixture_by_absolute_path():
    tools = (_tool("write_file", {"path": STRING, "content": STRING}), _tool("Read", {"file_path": STRING}))
    call = mapped_call(CALL, tools, Path("/ws"))
    assert (call.name, call.arguments) == ("Read", {"file_path": "/ws/.replay/call_7.txt"})


def test_no_shell_and_no_read_tool_is_an_error_naming_what_was_offered():
    with pytest.raises(NoToolForCall, match=r"call call_7: the request offers no shell or read tool \(write_file\)"):
        mapped_call(CALL, (_tool("write_file", {"path": STRING}),), None)
    with pytest.raises(NoToolForCall, match=r"\(no tools\)"):
        mapped_call(CALL, (), None)
