"""Cassette keys for a runtime's compaction requests: what varies between two runs of the same runtime on the
same case (dates and times, the scratch workspace's and home's paths, session/request ids, uuids) is replaced by a fixed
stand-in in the request's canonical form before it is hashed. Only the key changes: the summarizer under test
still receives the request as the runtime sent it."""

from __future__ import annotations

import re
from typing import Any, Callable

_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? [A-Z][a-z]+ \d{1,2},? \d{4}\b")
_TIME = re.compile(r"\b\d{1,2}:\d{2}:\d{2}\b")
# Ids runtimes mint per session or request: Codex's call ids and thread ids, opencode's ses_/msg_/prt_ ids.
_MINTED = re.compile(r"\b(?:call|ses|msg|prt|req|resp|run|thread|chatcmpl|toolu)_[A-Za-z0-9]{8,}\b")
_LONG_HEX = re.compile(r"\b[0-9a-f]{24,}\b")
# What Codex wraps each command output in: a random chunk id and the measured wall time.
_CHUNK = re.compile(r"\bChunk ID: [0-9a-f]+\b")
_WALL = re.compile(r"\bWall time: \d+(?:\.\d+)? seconds\b")
# The scratch folder the runtime driver makes per case (tempfile, prefix SCRATCH_PREFIX + runtime name + "-"):
# its home and workspace paths reach a runtime's prompts (Codex's environment context names its home).
SCRATCH_PREFIX = "ch-"
_SCRATCH = re.compile(r"[^\s\"'`=:,;()<>]*/" + SCRATCH_PREFIX + r"[A-Za-z0-9._-]+-[a-z0-9_]{8}(?![A-Za-z0-9_])")


def key_normaliser(workspace: str | None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A function from a request's canonical form to the form its cassette key is computed from."""
    def normalise(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: normalise(v) for k, v in value.items()}
        if isinstance(value, list):
            return [normalise(v) for v in value]
        if isinstance(value, str):
            return normalise_text(value, workspace)
        return value

    return normalise


def normalise_text(text: str, workspace: str | None = None) -> str:
    if workspace:
        text = text.replace(workspace.rstrip("/"), "<workspace>")
    text = _SCRATCH.sub("<scratch>", text)
    text = _WALL.sub("Wall time: <seconds>", _CHUNK.sub("Chunk ID: <id>", text))
    text = _UUID.sub("<uuid>", text)
    text = _TIMESTAMP.sub("<timestamp>", text)
    text = _DATE.sub("<date>", text)
    text = _TIME.sub("<time>", text)
    text = _MINTED.sub(lambda m: m.group(0).split("_", 1)[0] + "_<id>", text)
    return _LONG_HEX.sub("<hex>", text)
