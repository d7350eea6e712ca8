"""A runtime driven through its own HTTP server, one long-lived process per case (`[session] mode = "http"`):
opencode's `opencode serve`. Starting `opencode run` once per prompt cost about 3 s of CPU each time; the server
starts once, a session is created over its API, and each prompt is posted and waited for.

The adapter names, under [session]:
- command: the server's argv (`${port}`: 0 unconfined, so it picks a free port and prints it; in a sandbox
  a fixed port, below);
- ready: a pattern its output matches once it listens, whose first group is its base URL (loopback only);
- create: `METHOD /path` that creates a session, answering a JSON object whose `session_id` field is its id;
- prompt: `METHOD /path` (`${session}` filled) posting `prompt_body` (`${prompt_json}`: the prompt as a JSON
  string); it answers when the turn has ended, a JSON object whose `info.error` says how it failed, if it did;
- busy: `METHOD /path` answering an object keyed by session id, the session still working while its entry's
  `type` is not `idle` (a compaction started at the turn's end): the next prompt waits for it.

In a sandbox the server listens on a fixed port of the sandbox's own loopback (`${port}`, Sandbox.expose), which
the harness cannot reach: it talks to it through the Unix socket forward.py relays (Sandbox.served).
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.redact import redact
from harness.runtimes.adapter import RuntimeAdapter, fill
from harness.runtimes.one_process import OneProcess
from harness.runtimes.process import RuntimeFailed, RuntimeProcess
from harness.runtimes.sandbox import Sandbox

LOOPBACK = ("127.0.0.1", "localhost", "::1")
START_TIMEOUT_S = 120.0
POLL_S = 0.2


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket: the runtime's server as the sandbox relays it."""

    def __init__(self, path: Path, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self.path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


class HttpSession(OneProcess):
    def __init__(self, adapter: RuntimeAdapter, values: dict[str, Any], cwd: Path, env: dict[str, str],
                 log_dir: Path | None = None, sandbox: Sandbox | None = None):
        inside = sandbox.expose if sandbox is not None else None
        self.adapter, self.values = adapter, {**values, "port": inside or 0}
        self.served = sandbox.served if inside is not None else None
        self.http = adapter.http
        argv = [fill(part, self.values, f"{adapter.source}: session.command") for part in adapter.first]
        self.process = RuntimeProcess(argv, cwd, env, sandbox)
        self.output: deque[str] = deque(maxlen=50)
        self._listening = threading.Event()
        self.base = ""
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self.session = self._start(adapter)
        except BaseException:  # a server that never became usable is not left running
            self.process.end()
            raise
        self.errors: list[str] = []
        self.sent = 0

    def _start(self, adapter: RuntimeAdapter) -> str:
        """Wait for it to say where it listens, then create the session; its id."""
        if not self._listening.wait(START_TIMEOUT_S) or not self.base:
            raise self.process.failure(redact(f"{adapter.name} server did not say it listens on loopback within "
                                              f"{START_TIMEOUT_S:g} s (output: {' | '.join(self.output)})"))
        created = self._call(self.http["create"], {}, START_TIMEOUT_S)
        session = str((created or {}).get(self.http.get("session_id", "id"), ""))
        if not session:
            raise self.process.failure(redact(f"{adapter.name} server created no session: {created!r}"[:500]))
        return session

    def _read(self) -> None:
        """Its output, drained to the end; the base URL taken from the line `ready` matches."""
        pattern = re.compile(self.http["ready"])
        try:
            for line in self.process.stdout:
                self.output.append(line.rstrip("\n"))
                found = pattern.search(line) if not self.base else None
                if found:
                    url = found.group(1).rstrip("/")
                    self.base = url if urlsplit(url).hostname in LOOPBACK else ""
                    self._listening.set()
        except (ValueError, OSError):
            pass
        self._listening.set()  # it exited: stop waiting

    def _connection(self, timeout_s: float) -> http.client.HTTPConnection:
        if self.served is not None:
            return _UnixConnection(self.served, timeout_s)
        address = urlsplit(self.base)
        return http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=timeout_s)

    def _call(self, route: str, body: Any, timeout_s: float) -> Any:
        method, _, path = fill(route, {"session": getattr(self, "session", "")}, f"{self.adapter.source}: "
                                                                                   "session").partition(" ")
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        connection = self._connection(timeout_s)
        try:
            connection.request(method, path, body=data, headers={"content-type": "application/json"})
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException) as exc:
            raise self.process.failure(redact(f"{self.adapter.name} server: {method} {path}: {exc}"),
                                       timed_out=isinstance(exc, TimeoutError)) from None
        finally:
            connection.close()
        if response.status >= 400:
            raise self.process.failure(redact(f"{self.adapter.name} server: {method} {path}: {response.status} "
                                              f"{text[:300]}"))
        try:
            return json.loads(text) if text.strip() else None
        except json.JSONDecodeError:
            return text

    def send(self, prompt: str) -> None:
        self.sent += 1
        deadline = time.monotonic() + self.adapter.turn_timeout_s
        body = fill(self.http["prompt_body"], {"prompt_json": json.dumps(prompt)}, f"{self.adapter.source}: "
                                                                                    "session.prompt_body")
        reply = self._call(self.http["prompt"], body.encode(), self.adapter.turn_timeout_s)
        error = ((reply or {}).get("info") or {}).get("error") if isinstance(reply, dict) else None
        if error:
            self.errors.append(redact(f"prompt {self.sent} ended in error: {json.dumps(error)[:300]}"))
        if self.http.get("busy"):
            self._settle(deadline)

    def _settle(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            status = self._call(self.http["busy"], None, self.adapter.turn_timeout_s)
            entry = status.get(self.session) if isinstance(status, dict) else None
            if not isinstance(entry, dict) or entry.get("type") == "idle":
                return
            time.sleep(POLL_S)
        raise self.process.failure(f"{self.adapter.name}: the session was still busy after "
                                   f"{self.adapter.turn_timeout_s:g} s", timed_out=True)


__all__ = ["HttpSession", "RuntimeFailed"]
