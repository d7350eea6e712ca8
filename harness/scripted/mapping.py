"""A recorded call of any name becomes a call of the tool the request offers for the job: its shell tool
running `cat <fixture>`, or else its read tool on the fixture. The tool is found by name and by schema, and
the arguments are shaped from the schema (a `command`/`cmd` string, or an argv array)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.models.base import ToolCallSpec
from harness.scripted.steps import ScriptCall

# Names runtimes give their shell and read tools (RUNTIMES.md), most specific first.
SHELL_NAMES = ("bash", "Bash", "exec_command", "run_shell_command", "shell", "shell_command", "local_shell")
READ_NAMES = ("read", "Read", "read_file", "view")
SHELL_STEMS = ("bash", "shell", "exec")
READ_STEMS = ("read", "view", "cat")
COMMAND_FIELDS = ("command", "cmd", "script")
PATH_FIELDS = ("file_path", "absolute_path", "filePath", "path", "filename")


class NoToolForCall(Exception):
    """The request offers neither a shell tool nor a read tool."""


SHELL_COMMAND = "cat {fixture}"  # what a shell tool runs; a runtime adapter may say otherwise ([tools] shell_command)


def mapped_call(call: ScriptCall, tools: tuple[dict[str, Any], ...], workspace: Path | None,
                command: str = SHELL_COMMAND) -> ToolCallSpec:
    """The call the runtime should run to print `call`'s recorded output."""
    shell = _find(tools, SHELL_NAMES, COMMAND_FIELDS)
    if shell is not None:
        return ToolCallSpec(call.id, shell["name"], _shell_arguments(shell, command.format(fixture=call.fixture)))
    reader = _find(tools, READ_NAMES, PATH_FIELDS)
    if reader is not None:
        path = str(workspace / call.fixture) if workspace is not None else call.fixture
        return ToolCallSpec(call.id, reader["name"], _read_arguments(reader, path))
    offered = ", ".join(t.get("name", "?") for t in tools) or "no tools"
    raise NoToolForCall(f"call {call.id}: the request offers no shell or read tool ({offered})")


def _find(tools: tuple[dict[str, Any], ...], names: tuple[str, ...], fields: tuple[str, ...]) -> dict | None:
    """The offered tool with a known name and a usable field; else one whose name holds a known name's
    stem (`my_bash`, `shell_exec`) and has a usable field."""
    usable = [t for t in tools if _field(t, fields) is not None]
    for name in names:
        for tool in usable:
            if tool.get("name") == name:
                return tool
    stems = set(SHELL_STEMS if names is SHELL_NAMES else READ_STEMS)
    return next((t for t in usable if stems & set(str(t.get("name", "")).lower().replace("-", "_").split("_"))),
                None)


def _properties(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool.get("parameters") or tool.get("input_schema") or {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return properties if isinstance(properties, dict) else {}


def _field(tool: dict[str, Any], fields: tuple[str, ...]) -> str | None:
    properties = _properties(tool)
    return next((f for f in fields if f in properties), None)


def _shell_arguments(tool: dict[str, Any], command: str) -> dict[str, Any]:
    field = _field(tool, COMMAND_FIELDS)
    assert field is not None  # _find only returns tools that have one
    kind = _properties(tool)[field].get("type") if isinstance(_properties(tool)[field], dict) else None
    value: Any = command.split() if kind == "array" else command  # an argv array runs without a shell
    return _with_required(tool, {field: value})


def _read_arguments(tool: dict[str, Any], path: str) -> dict[str, Any]:
    field = _field(tool, PATH_FIELDS)
    assert field is not None
    return _with_required(tool, {field: path})


def _with_required(tool: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Fill the schema's other required fields (opencode's bash requires a `description`) with neutral values."""
    schema = tool.get("parameters") or tool.get("input_schema") or {}
    for name in schema.get("required") or ():
        if name in arguments:
            continue
        spec = _properties(tool).get(name) or {}
        arguments[name] = _neutral(spec)
    return arguments


def _neutral(spec: dict[str, Any]) -> Any:
    if "default" in spec:
        return spec["default"]
    if spec.get("enum"):
        return spec["enum"][0]
    kind = spec.get("type")
    if kind in ("integer", "number"):
        return spec.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return "replay a recorded output"
