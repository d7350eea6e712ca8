"""Small hand-built sessions for tests: sizes are exact under the chars/4 estimate."""

from __future__ import annotations

import json
from itertools import count

from harness.session import Message, Session, ToolCall, parse_session


def text(tokens: int, tag: str = "") -> str:
    """A string that chars/4 counts as exactly `tokens` tokens."""
    body = (tag + " ") if tag else ""
    return (body + "w" * max(0, 4 * tokens - len(body)))[: 4 * tokens] if tokens else ""


class Builder:
    """Append messages in order; `step()` adds an assistant message and the results of its calls."""

    def __init__(self, system: str | None = "You are a coding agent."):
        self.system = system
        self.messages: list[Message] = []
        self.ids = count(1)

    def user(self, tokens: int = 10, tag: str = "") -> int:
        self.messages.append(Message("user", text(tokens, tag or f"user{len(self.messages)}")))
        return len(self.messages) - 1

    def step(self, *results: int, say: int = 5, tag: str = "") -> int:
        """An assistant message with one tool call per result size (none: a plain reply)."""
        start = len(self.messages)
        calls = tuple(ToolCall(f"c{next(self.ids)}", "bash", {"cmd": "true"}) for _ in results)
        self.messages.append(Message("assistant", text(say, tag or f"asst{start}"), calls))
        for call, size in zip(calls, results):
            self.messages.append(Message("tool", text(size, f"result{len(self.messages)}"), tool_call_id=call.id))
        return start

    def session(self) -> Session:
        return Session(tuple(self.messages), self.system)


def jsonl(*records: dict) -> list[str]:
    return [json.dumps(r) for r in records]


def parse(*records: dict, path: str = "s.jsonl") -> Session:
    return parse_session(jsonl(*records), path)
