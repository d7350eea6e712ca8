"""A small responder that acts like a model driving an agent: it calls the shell tool the request offers,
then, once the call's output comes back, answers in text quoting it (issue 27's wire tests)."""

from __future__ import annotations

from harness.models.base import ModelRequest, ToolCallSpec
from harness.models.emulator.reply import Exchange, Reply

COMMAND = "cat notes.txt"
SHELL_TOOL = {"name": "bash", "description": "Run a shell command",
              "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                             "required": ["command"]}}


class CallThenText:
    """Step 1: text (optional) and a call of the offered shell tool; step 2 (a tool output is newest): text."""

    def __init__(self, preamble: str = "", call_id: str = "call_1"):
        self.preamble, self.call_id = preamble, call_id
        self.seen: list[tuple[ModelRequest, Exchange]] = []

    def __call__(self, request: ModelRequest, exchange: Exchange) -> Reply:
        self.seen.append((request, exchange))
        newest = request.messages[-1]
        if newest.role == "tool":
            return Reply(f"The file says: {newest.content} (answer to {newest.tool_call_id})")
        shell = next(t for t in request.tools if t["name"] == "bash" and "command" in t["parameters"]["properties"])
        call = ToolCallSpec(self.call_id, shell["name"], {"command": COMMAND})
        return Reply(self.preamble, (call,), "tool_calls")
