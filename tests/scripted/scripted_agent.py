"""A small agent for the scripted model's tests: it offers a `bash` tool, runs each shell call it is given with
subprocess in the workspace, sends the output back, and ends a turn on a reply without calls, like a runtime.

`send(messages, tools) -> (text, calls)` is the model side: the responder called directly, or an SDK client
over the emulator (scripted_sdk.py). Messages are kept in Chat Completions form; each SDK's sender converts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Callable

BASH = {"name": "bash", "description": "Run a shell command in the working directory.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}
EXEC_COMMAND = {"name": "exec_command", "description": "Runs a command in a PTY.",  # codex's shell tool
                "parameters": {"type": "object", "properties": {"cmd": {"type": "string"},
                                                                "yield_time_ms": {"type": "number"}},
                               "required": ["cmd"]}}
CLAUDE_BASH = {"name": "Bash", "description": "Executes a bash command.",  # claude code's
               "parameters": {"type": "object", "properties": {"command": {"type": "string"},
                                                               "timeout": {"type": "number"}},
                              "required": ["command"]}}
Send = Callable[[list[dict], tuple[dict, ...]], tuple[str, list[tuple[str, str, dict]]]]


def run_agent(prompts: tuple[str, ...], send: Send, workspace: Path, *, max_rounds: int = 50,
              tamper: Callable[[int, str, str], str] | None = None, tool: dict = BASH) -> dict[str, str]:
    """Every prompt in turn; returns the output of each call run, by call id. `tamper(n, call id, output)` may
    change the n-th output (0-based) before it is sent back, to make a replay drift."""
    messages: list[dict] = [{"role": "system", "content": "You are a test agent."}]
    outputs: dict[str, str] = {}
    for prompt in prompts:
        messages.append({"role": "user", "content": prompt})
        for _ in range(max_rounds):
            text, calls = send(messages, (tool,))
            message: dict = {"role": "assistant", "content": text}
            if calls:  # an empty list is a 400 on the real API
                message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments":
                                                                                    json.dumps(a)}}
                                         for i, n, a in calls]
            messages.append(message)
            if not calls:
                break
            for call_id, name, arguments in calls:
                assert name == tool["name"], name
                command = arguments.get("command") or arguments["cmd"]
                output = subprocess.run(["bash", "-c", command], cwd=workspace, capture_output=True,
                                        check=True).stdout.decode("utf-8")
                if tamper is not None:
                    output = tamper(len(outputs), call_id, output)
                outputs[call_id] = output
                messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
    return outputs
