"""SCRATCH until p27a's harness/models/emulator/reply.py reaches main: the same two types, to build against.
Deleted when main has them (then imported from harness.models.emulator.reply)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.models.base import ToolCallSpec


@dataclass(frozen=True)
class Reply:
    text: str
    tool_calls: tuple[ToolCallSpec, ...] = ()
    finish: str = "stop"


@dataclass(frozen=True)
class Exchange:
    wire: str
    path: str
    payload: dict[str, Any]
    headers: dict[str, str]
    stream: bool
