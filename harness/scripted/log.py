"""The log of what a runtime asked: every request the scripted server receives, one JSON line each (body,
headers, how it was classified, the step it used), written beside the run as it arrives.

Keys never reach the file: credential headers and a `key` query parameter are dropped by name, and every other
string field has the environment's key values and key-shaped tokens removed (`harness.redact.scrub_value`),
field by field before the record is serialised.

A runtime re-sends its whole history with every turn request, so a turn request's line holds only the history
items the previous turn request did not: `history_from: {"seq": N, "items": K}` says its first K items are
request N's (itself read the same way). `read_log` gives every body whole again."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from harness.atomic import AppendOnly, WriteFailed
from harness.errors import HarnessError
from harness.redact import scrub_value

CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie",
                                "proxy-authorization"})
CREDENTIAL_PARAMETERS = frozenset({"key", "api_key", "api-key"})
# Key variables a runtime is configured with besides the harness's own (harness.redact covers those).
RUNTIME_KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "HARNESS_API_KEY", "QWEN_API_KEY")
HISTORY_KEYS = ("messages", "input", "contents")


class RequestLog:
    """Append-only JSON lines; each line is flushed as written, so a stopped server loses nothing."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._seq = 0
        self._last_turn: tuple[int, list] | None = None  # (seq, history) of the last turn request logged
        self._scrubbed: dict[str, tuple[Any, tuple[str, ...], Any]] = {}  # field -> (value, secrets, scrubbed)
        try:
            self._log = AppendOnly(self.path)  # one whole line per request, even on a full disk
        except WriteFailed as exc:
            raise HarnessError(f"request log {exc}") from None

    def write(self, *, path: str, headers: dict[str, str], body: Any, wire: str, stream: bool, kind: str,
              step: int | None = None, note: str | None = None) -> int:
        """Record one request; returns its sequence number (1-based)."""
        with self._lock:
            self._seq += 1
            record = {"seq": self._seq, "wire": wire, "path": safe_path(path), "stream": stream, "kind": kind,
                      "step": step, "note": note, "headers": safe_headers(headers), "body": body}
            if kind == "turn":
                record.update(self._delta(body))
            secrets = runtime_secrets()
            record = scrub_value({**record, "body": None}, secrets) | {"body": self._scrub(record["body"], secrets)}
            line = json.dumps(record, ensure_ascii=False)
            self._log.append(line + "\n")
            return self._seq

    def _scrub(self, body: Any, secrets: tuple[str, ...]) -> Any:
        """The body scrubbed field by field. A field that is the very object the last request carried is
        scrubbed once: a runtime re-sends its tools and instructions, and the emulator keeps the first object
        (harness.models.emulator.resent)."""
        if not isinstance(body, dict):
            return scrub_value(body, secrets)
        out = {}
        for key, value in body.items():
            last = self._scrubbed.get(key)
            if last is None or last[0] is not value or last[1] != secrets:
                last = self._scrubbed[key] = (value, secrets, scrub_value(value, secrets))
            out[scrub_value(key, secrets)] = last[2]
        return out

    def _delta(self, body: Any) -> dict[str, Any]:
        """A turn request's body with the history the previous turn request already had left out (noted as
        `history_from`); the body as it is when they share nothing."""
        key = history_key(body)
        if key is None:
            return {}
        history, last = body[key], self._last_turn
        self._last_turn = (self._seq, history)
        kept = 0
        if last is not None:
            for mine, theirs in zip(history, last[1]):
                if mine != theirs:
                    break
                kept += 1
        if not kept:
            return {}
        return {"body": {**body, key: history[kept:]}, "history_from": {"seq": last[0], "items": kept}}

    def close(self) -> None:
        with self._lock:
            self._log.close()


def history_key(body: Any) -> str | None:
    """Where the body holds the history: Chat's and Messages' `messages`, Responses' `input`, Gemini's
    `contents`."""
    if not isinstance(body, dict):
        return None
    return next((k for k in HISTORY_KEYS if isinstance(body.get(k), list)), None)


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The log's records in order, each body whole (the history `history_from` points at put back)."""
    records: list[dict[str, Any]] = []
    histories: dict[int, list] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        body, origin = record.get("body"), record.pop("history_from", None)
        key = history_key(body)
        if origin is not None and key is not None:
            body[key] = histories[origin["seq"]][:origin["items"]] + body[key]
        if key is not None:
            histories[record["seq"]] = body[key]
        records.append(record)
    return records


def safe_headers(headers: dict[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items() if name.lower() not in CREDENTIAL_HEADERS}


def safe_path(path: str) -> str:
    """The request path with credential query parameters dropped (Gemini clients may send `?key=`)."""
    parts = urlsplit(path)
    if not parts.query:
        return path
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() not in CREDENTIAL_PARAMETERS]
    return urlunsplit(parts._replace(query=urlencode(kept)))


def runtime_secrets() -> tuple[str, ...]:
    return tuple(v for v in (os.environ.get(name, "").strip() for name in RUNTIME_KEY_VARIABLES) if len(v) >= 8)
