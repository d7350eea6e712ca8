"""Tool results that are no step's output: a subagent's report (the Task / Agent tool), and the harness's own
protocol messages (a tool call the user rejected, a `<tool_use_error>` about how the tool was called).

A subagent's report is the agent's own findings, written by a helper: the summary keeps its conclusions the
way it keeps the agent's prose, not as a failed step when a finding mentions an error. A protocol message says
how the harness took the call ("File has not been read yet"), not what the project did: it is no project error.
"""

from __future__ import annotations

import re

_SUBAGENT_TOOLS = ("task", "agent")
# The bookkeeping Claude Code appends to a subagent's report: its id for resuming, its token use.
_TRAILER = re.compile(r"^\s*agentId: .*$|<usage>.*?(</usage>|\Z)", re.M | re.S)
_REJECTED = re.compile(r"^\s*The user doesn't want to proceed with this tool use", re.I)
_PROTOCOL = re.compile(r"^\s*<tool_use_error>", re.I)


def is_subagent(name: str, arguments: dict) -> bool:
    return name.lower() in _SUBAGENT_TOOLS or "subagent_type" in arguments


def report_text(content: str) -> str:
    """A subagent's report without the harness's trailer."""
    return _TRAILER.sub("", content).strip()


def is_rejection(content: str) -> bool:
    """The user declined the tool call: nothing ran."""
    return bool(_REJECTED.match(content))


def is_protocol_error(content: str) -> bool:
    """The harness refused the call as made (a file edited before it was read, an ambiguous replace)."""
    return bool(_PROTOCOL.match(content))
