"""Server-Sent Events as the wires send them: a reply's text (or a call's arguments) in several pieces, so
clients really assemble a stream, and one event as `event:` (when named) and `data:` lines."""

from __future__ import annotations

import json
from typing import Any

CHUNK_CHARS = 24  # text per delta: several deltas for any real reply


def pieces(text: str) -> list[str]:
    return [text[i:i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)] or [""]


def event(data: dict[str, Any], name: str | None = None) -> str:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data)}\n\n"
