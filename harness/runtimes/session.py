"""Sending a case's user prompts through a runtime's own headless continuation.

exec: one process per prompt (`first`, then `next` for every later prompt), each waited for; a process killed by
      a signal fails the case, a non-zero exit is recorded (whether it lost the turn is the driver's call).
      (codex `exec` / `exec resume --last`, opencode `run` / `run --continue`.)
rpc:  one process for the whole case speaking pi's JSON lines: `prompt`, then events until `agent_end`, then
      until no compaction is running (a prompt sent during one starts a second, and one of them fails).
http: one server process for the whole case, prompts posted to its API (server_session.py: opencode serve).

Every process runs in the drive's sandbox (None: --sandbox off). What a runtime printed is redacted
(harness.redact) before it is kept or written: its stdout per prompt, its errors, its stderr lines.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from pathlib import Path
from typing import Any

from harness.atomic import write_atomic
from harness.redact import redact
from harness.runtimes.adapter import RuntimeAdapter, fill
from harness.runtimes.one_process import OneProcess
from harness.runtimes.process import RuntimeFailed, RuntimeProcess
from harness.runtimes.sandbox import Sandbox

SETTLE_S = 0.3  # after agent_end: how long to watch for a compaction_start before asking for the state
# The events of pi's that RpcSession reads. Most of its output is the others (a partial message per streamed
# delta, each message and turn whole again at its end): a line that names another type first is not parsed.
READ_EVENTS = ("response", "agent_start", "agent_end", "compaction_start", "compaction_end")
_READ_PREFIXES = tuple(f'{{"type":"{kind}"' for kind in READ_EVENTS)


def read_line(line: str) -> bool:
    """Whether a line of pi's output is parsed: a JSON object that does not name another event type first
    (decided before any copy of the line)."""
    return line.startswith("{") and (not line.startswith('{"type":"') or line.startswith(_READ_PREFIXES))


class ExecSession:
    def __init__(self, adapter: RuntimeAdapter, values: dict[str, Any], cwd: Path, env: dict[str, str],
                 log_dir: Path | None = None, sandbox: Sandbox | None = None):
        self.adapter, self.values, self.cwd, self.env, self.log_dir = adapter, values, cwd, env, log_dir
        self.sandbox = sandbox
        self.sent = 0
        self.current: RuntimeProcess | None = None
        self.errors: list[str] = []  # non-zero exits, with the last lines printed
        self.exit_code: int | None = None  # the last prompt's process's

    def send(self, prompt: str) -> None:
        template = self.adapter.first if self.sent == 0 else self.adapter.next
        argv = [fill(part, {**self.values, "prompt": prompt}, f"{self.adapter.source}: session") for part in template]
        self.current = RuntimeProcess(argv, self.cwd, self.env, self.sandbox)
        code, out = self.current.wait(self.adapter.turn_timeout_s)
        out = redact(out)
        self.sent += 1
        self.exit_code = code
        if self.log_dir is not None:  # what the runtime printed, kept beside the request log
            write_atomic(self.log_dir / f"prompt-{self.sent:02d}.out", out)
        if code is not None and code < 0:  # killed: never a turn the runtime gave up
            raise self.current.failure(f"{self.adapter.name} ended on prompt {self.sent}")
        if code != 0:  # whether that lost the turn is the driver's call (a runtime may exit 1 after recovering)
            said = " | ".join(line.strip()[:300] for line in out.strip().splitlines()[-3:])
            self.errors.append(f"exited {code} on prompt {self.sent}{f': {said}' if said else ''}")

    def stderr_tail(self) -> tuple[str, ...]:
        return tuple(self.current.stderr_tail) if self.current else ()

    def last_error(self) -> str | None:
        if self.errors:
            return self.errors[-1]
        tail = self.stderr_tail()
        return tail[-1] if tail else None

    def close(self) -> None:
        if self.current is not None:
            self.current.end()


class RpcSession(OneProcess):
    def __init__(self, adapter: RuntimeAdapter, values: dict[str, Any], cwd: Path, env: dict[str, str],
                 log_dir: Path | None = None, sandbox: Sandbox | None = None):
        self.adapter = adapter
        argv = [fill(part, values, f"{adapter.source}: session.command") for part in adapter.first]
        self.process = RuntimeProcess(argv, cwd, env, sandbox)
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._ids = 0
        self.compactions: list[dict[str, Any]] = []  # compaction_end events, as the runtime reported them
        self.errors: list[str] = []  # what the runtime said went wrong: failed runs and compactions

    def _read(self) -> None:
        for line in self.process.stdout:
            if not read_line(line):
                continue
            line = line.rstrip("\r\n")
            try:
                self.events.put(json.loads(line))
            except json.JSONDecodeError:
                continue
        self.events.put(None)  # end of stream

    def _command(self, payload: dict[str, Any]) -> str:
        self._ids += 1
        ident = f"h{self._ids}"
        try:
            self.process.stdin.write(json.dumps({**payload, "id": ident}) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self.process.failure(f"{self.adapter.name} closed its input") from None
        return ident

    def _next(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        try:
            event = self.events.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise self.process.failure(f"{self.adapter.name}: no {waiting_for} within "
                                       f"{self.adapter.turn_timeout_s:g} s", timed_out=True) from None
        if event is None:
            failure = self.process.failure(f"{self.adapter.name} exited while waiting for {waiting_for}")
            raise failure if failure.killed else RuntimeFailed(f"{failure} (exit {self.process.returncode()})",
                                                              failure.stderr_tail)
        self._note(event)
        return event

    def _note(self, event: dict[str, Any]) -> None:
        """Keep compactions and the errors pi reports in events (a failed run still ends with agent_end)."""
        kind = event.get("type")
        if kind == "compaction_end":
            self.compactions.append(event)
            if event.get("errorMessage"):
                self.errors.append(redact(f"compaction failed: {event['errorMessage']}"))
        elif kind == "agent_end":
            for message in event.get("messages") or ():
                if isinstance(message, dict) and message.get("stopReason") == "error":
                    self.errors.append(redact(str(message.get("errorMessage") or "a run ended in error")))

    def _response(self, ident: str, deadline: float, command: str) -> dict[str, Any]:
        while True:
            event = self._next(deadline, f"the reply to {command}")
            if event.get("type") == "response" and event.get("id") == ident:
                if not event.get("success", False):
                    raise self.process.failure(f"{self.adapter.name} refused {command}: {event.get('error')}")
                return event

    def send(self, prompt: str) -> None:
        deadline = time.monotonic() + self.adapter.turn_timeout_s
        self._response(self._command({"type": "prompt", "message": prompt}), deadline, "prompt")
        while self._next(deadline, "agent_end").get("type") != "agent_end":
            pass
        self._settle(deadline)

    def _settle(self, deadline: float) -> None:
        """Wait out a compaction the end of the run started, and an overflow compaction's retried run."""
        while True:
            busy = self._watch(time.monotonic() + SETTLE_S, deadline)
            state = self._response(self._command({"type": "get_state"}), deadline, "get_state").get("data") or {}
            if not busy and not state.get("isCompacting") and not state.get("isStreaming"):
                return
            time.sleep(0.1)

    def _watch(self, until: float, deadline: float) -> bool:
        """Events for a short while; True when a compaction or a retried run was still going at its end."""
        busy = False
        while time.monotonic() < until or busy:
            try:
                event = self.events.get(timeout=max(0.01, min(until, deadline) - time.monotonic()))
            except queue.Empty:
                if busy and time.monotonic() > deadline:
                    raise self.process.failure(f"{self.adapter.name}: a compaction did not end in time",
                                               timed_out=True) from None
                if not busy:
                    return False
                continue
            if event is None:
                raise self.process.failure(f"{self.adapter.name} exited during a compaction")
            kind = event.get("type")
            if kind in ("compaction_start", "agent_start"):
                busy = True
            elif kind == "compaction_end":
                busy = bool(event.get("willRetry"))
            elif kind == "agent_end":
                busy = False
            self._note(event)
        return busy



def open_session(adapter: RuntimeAdapter, values: dict[str, Any], cwd: Path, env: dict[str, str],
                 log_dir: Path | None = None, sandbox: Sandbox | None = None) -> Any:
    if adapter.mode == "http":  # its own server, one per case (runtimes/server_session.py)
        from harness.runtimes.server_session import HttpSession

        return HttpSession(adapter, values, cwd, env, log_dir, sandbox)
    return (RpcSession if adapter.mode == "rpc" else ExecSession)(adapter, values, cwd, env, log_dir, sandbox)


__all__ = ["ExecSession", "RpcSession", "RuntimeFailed", "open_session"]
