"""The log of what a runtime asked: every request the scripted server receives, one JSON line each (body,
headers, how it was classified, the step it used), written beside the run as it arrives.

Keys never reach the file: credential headers and a `key` query parameter are dropped by name, and every other
string field has the key values of the environment removed (`harness.redact`), field by field before the
record is serialised."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from harness.errors import HarnessError
from harness.redact import redact_value

CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie",
                                "proxy-authorization"})
CREDENTIAL_PARAMETERS = frozenset({"key", "api_key", "api-key"})
# Key variables a runtime is configured with besides the harness's own (harness.redact covers those).
RUNTIME_KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "HARNESS_API_KEY", "QWEN_API_KEY")


class RequestLog:
    """Append-only JSON lines; each line is flushed as written, so a stopped server loses nothing."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._seq = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8")
        except OSError as exc:
            raise HarnessError(f"request log {self.path}: cannot open: {exc.strerror or exc}") from None

    def write(self, *, path: str, headers: dict[str, str], body: Any, wire: str, stream: bool, kind: str,
              step: int | None = None, note: str | None = None) -> int:
        """Record one request; returns its sequence number (1-based)."""
        with self._lock:
            self._seq += 1
            record = {"seq": self._seq, "wire": wire, "path": safe_path(path), "stream": stream, "kind": kind,
                      "step": step, "note": note, "headers": safe_headers(headers), "body": body}
            line = json.dumps(redact_value(record, runtime_secrets()), ensure_ascii=False)
            self._handle.write(line + "\n")
            self._handle.flush()
            return self._seq

    def close(self) -> None:
        with self._lock:
            self._handle.close()


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
