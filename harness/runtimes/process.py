"""A runtime's processes: each in its own process group (and, sandboxed, its own PID namespace), so a timeout or
Ctrl-C ends it and every child it started (node workers, shells), and nothing is left running. The last stderr
lines are kept for the failure, and how it ended: an exit code of its own, or a signal that killed it.

Every live runtime process and scratch folder is known here, so a stop of the whole command (Ctrl-C, SIGTERM:
harness.cli) ends them all and removes the folders before it exits (`end_all`)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import threading
from collections import deque
from pathlib import Path
from typing import IO

from harness.redact import redact
from harness.runtimes.sandbox import Sandbox

STDERR_LINES = 20
ENDING_S = 2.0  # a failing runtime whose output has ended: how long its exit status is waited for
STOP_GRACE_S = 0.5  # end_all: SIGTERM, then SIGKILL after this (a Ctrl-C's whole stop has 2 s)

_live: set[RuntimeProcess] = set()
_scratch: set[Path] = set()
_lock = threading.Lock()
_numbers = itertools.count(1)
_stopping = threading.Event()  # set by end_all: no runtime starts after the command's stop
_sandboxed = {"runtime": 0.0, "relay": 0.0}  # sandboxed_cpu()


class RuntimeFailed(Exception):
    """The runtime crashed, timed out or said something the driver cannot follow; the case fails with it."""

    def __init__(self, message: str, stderr_tail: tuple[str, ...] = (), timed_out: bool = False,
                 killed: int | None = None):
        super().__init__(message)
        self.stderr_tail = stderr_tail
        self.timed_out = timed_out  # the harness's timeout ended it: the runtime hung
        self.killed = killed  # the signal that killed it (not the harness's timeout): never a graded stop


class RuntimeProcess:
    """One started runtime process with piped stdin/stdout and a background reader of its stderr."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], sandbox: Sandbox | None = None):
        self.argv = argv
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self.status = sandbox.scratch / f"exit-{next(_numbers)}.json" if sandbox else None
        self._accounted = False
        command = sandbox.command(argv, cwd, self.status) if sandbox and self.status else argv
        start_in = sandbox.scratch if sandbox else cwd  # bubblewrap's own process stays outside; --chdir is in
        with _lock:
            if _stopping.is_set():
                raise RuntimeFailed("the command is stopping: no runtime starts now")
            self.proc = subprocess.Popen(command, cwd=start_in, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                                         start_new_session=True)
            _live.add(self)
        self._stderr = threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True)
        self._stderr.start()

    def _drain(self, stream: IO[str], into: list[str] | None = None) -> None:
        """Read a pipe to its end: into `into`, or the stderr tail. A pipe closed by end() just stops it."""
        try:
            for line in stream:
                if into is None:  # redacted as it comes: a key the runtime printed is kept nowhere
                    self.stderr_tail.append(redact(line.rstrip("\n")))
                else:
                    into.append(line)
        except (ValueError, OSError):
            return

    @property
    def stdin(self) -> IO[str]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    @property
    def stdout(self) -> IO[str]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    def failure(self, message: str, timed_out: bool = False) -> RuntimeFailed:
        killed = None
        if not timed_out:  # its output ended or it refused: it is ending, give it a moment to say how
            try:
                self.proc.wait(timeout=ENDING_S)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is not None:  # let the reader take what the process wrote before it ended
            self._stderr.join(timeout=2)
            killed = None if timed_out else self.signal()
        if killed is not None:
            message += f" (killed by {_name(killed)})"
        return RuntimeFailed(message, tuple(self.stderr_tail), timed_out, killed)

    def _account(self) -> None:
        """Once it has ended: the CPU time the forwarder measured inside the sandbox, added to `sandboxed_cpu`."""
        if self.status is None or self._accounted or self.proc.poll() is None:
            return
        self._accounted = True
        try:
            used = json.loads(self.status.read_text()).get("cpu_seconds") or {}
            runtime, relay = float(used.get("runtime", 0)), float(used.get("relay", 0))
        except (OSError, ValueError, TypeError, AttributeError):
            return
        with _lock:
            _sandboxed["runtime"] += runtime
            _sandboxed["relay"] += relay

    def returncode(self) -> int | None:
        """The runtime's own exit: in a sandbox, as the forwarder saw it (negative: killed by that signal);
        the sandbox's if the forwarder never wrote it (the sandbox itself was killed)."""
        code = self.proc.poll()
        if code is None or self.status is None:
            return code
        try:
            return int(json.loads(self.status.read_text())["returncode"])
        except (OSError, ValueError, KeyError, TypeError):
            return code

    def signal(self) -> int | None:
        """The signal that killed the runtime, or None (it exited, or is still running)."""
        code = self.returncode()
        return -code if code is not None and code < 0 else None

    def wait(self, timeout_s: float) -> tuple[int, str]:
        """Exit code and stdout of a process that is only waited for; the group is ended on timeout.
        (Not `communicate`: it would read stderr too, away from the tail kept for the failure.)"""
        out: list[str] = []
        reader = threading.Thread(target=self._drain, args=(self.stdout, out), daemon=True)
        reader.start()
        self.stdin.close()
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.end()
            raise self.failure(f"{self.argv[0]} did not finish within {timeout_s:g} s", timed_out=True) from None
        except BaseException:
            self.end()
            raise
        reader.join(timeout=5)
        self._stderr.join(timeout=5)
        with _lock:
            _live.discard(self)
        self._account()
        return self.returncode(), "".join(out)

    def end(self, grace_s: float = 3.0) -> None:
        """SIGTERM to the group, then SIGKILL after a grace period; safe to call twice, and from two threads.
        In a sandbox bubblewrap's own process is spared the SIGTERM: it then waits for what it runs, so the
        runtime's CPU time reaches this process's children's (a killed bubblewrap reaps nothing)."""
        if self.proc.poll() is None:
            _signal_group(self.proc.pid, signal.SIGTERM, spare=self.proc.pid if self.status else None)
            try:
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(self.proc.pid, signal.SIGKILL)  # children the leader left behind
        if self.proc.poll() is None:
            self.proc.wait(timeout=5)
        with _lock:
            _live.discard(self)
        self._account()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass


def sandboxed_cpu() -> dict[str, float]:
    """CPU seconds so far of sandboxed runtimes (and of the relays beside them) that have ended: a PID
    namespace keeps them out of getrusage's count of this process's children."""
    with _lock:
        return dict(_sandboxed)


def _signal_group(pid: int, sig: int, spare: int | None = None) -> None:
    if spare is None:
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        return
    for member in _members(pid):
        if member != spare:
            try:
                os.kill(member, sig)
            except (ProcessLookupError, PermissionError):
                pass


def _members(group: int) -> list[int]:
    """The processes of a process group (from /proc: a process inside a PID namespace is seen by its pid here)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group:  # after the command: state, ppid, pgrp
            found.append(int(entry.name))
    return found


def _name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def track_scratch(path: Path, live: bool) -> None:
    """A drive's scratch folder, known while it exists so that a stop of the command removes it too."""
    with _lock:
        (_scratch.add if live else _scratch.discard)(path)


def end_all() -> None:
    """End every live runtime process group and remove every scratch folder (a stop of the whole command)."""
    with _lock:
        _stopping.set()
        processes, folders = list(_live), list(_scratch)
    for process in processes:
        if process.proc.poll() is None:
            _signal_group(process.proc.pid, signal.SIGTERM, spare=process.proc.pid if process.status else None)
    for process in processes:
        process.end(STOP_GRACE_S)
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
        track_scratch(folder, False)
