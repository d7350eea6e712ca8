"""What a responder answers and what it may look at: the interface between the emulator's wires and the
model behind them (the builtin by default; a scripted model replaying a case, or a test's own function).

A responder is called once per model request with the provider-neutral request and the raw exchange
(wire, path, body, headers), and returns a Reply; each wire renders it in its own shape, streamed or not.
It may raise EmulatorError (e.g. a drift: status 409 with a message): the wire returns that in its own
error shape. The emulator still applies the output limit and the `truncate` fault to the reply's text.
Provider compaction endpoints (`/responses/compact`, Anthropic's explicit compaction) stay the builtin's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from harness.models import _tokens
from harness.models.base import ModelRequest, ToolCallSpec

WIRES = ("openai", "responses", "anthropic", "gemini")  # "openai" is Chat Completions
FINISHES = ("stop", "length", "tool_calls")


@dataclass(frozen=True)
class Reply:
    """One assistant turn: text, then the calls it makes (parallel calls together). `finish` is the
    provider-neutral stop reason; each wire maps it to its own (Messages `tool_use`, Gemini `STOP`, ...)."""

    text: str
    tool_calls: tuple[ToolCallSpec, ...] = ()
    finish: str = "stop"  # one of FINISHES

    def __post_init__(self) -> None:
        if self.finish not in FINISHES:
            raise ValueError(f"Reply.finish: {self.finish!r} is not one of {', '.join(FINISHES)}")

    @property
    def stop(self) -> str:
        """The stop reason a wire reports: a cut reply is "length"; one with calls is "tool_calls"."""
        if self.finish == "length":
            return "length"
        return "tool_calls" if self.tool_calls else "stop"

    @property
    def output_tokens(self) -> int:
        """Text and calls (name and JSON arguments), as a provider bills the model's output."""
        return _tokens.count(self.text) + sum(_tokens.count(c.name + arguments(c)) for c in self.tool_calls)


def arguments(call: ToolCallSpec) -> str:
    """A call's arguments as the JSON string the OpenAI wires carry."""
    return json.dumps(call.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class Exchange:
    """The raw request as received, for a responder that classifies requests by their wire shape."""

    wire: str  # one of WIRES
    path: str  # as received, query string included
    payload: dict[str, Any]
    headers: dict[str, str]  # lower-cased names
    stream: bool


Responder = Callable[[ModelRequest, Exchange], Reply]


def exchange(wire: str, path: str, payload: dict[str, Any], headers: dict[str, str] | None,
             stream: bool) -> Exchange:
    return Exchange(wire, path, payload, {k.lower(): v for k, v in (headers or {}).items()}, stream)
