"""A runtime's processes: each in its own process group, so a timeout or Ctrl-C ends it and every child it
started (node workers, shells), and nothing is left running. The last stderr lines are kept for the failure."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections import deque
from pathlib import Path
from typing import IO

STDERR_LINES = 20


class RuntimeFailed(Exception):
    """The runtime crashed, timed out or said something the driver cannot follow; the case fails with it."""

    def __init__(self, message: str, stderr_tail: tuple[str, ...] = (), timed_out: bool = False):
        super().__init__(message)
        self.stderr_tail = stderr_tail
        self.timed_out = timed_out  # the harness's timeout ended it: the runtime hung


class RuntimeProcess:
    """One started runtime process with piped stdin/stdout and a background reader of its stderr."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]):
        self.argv = argv
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                                     start_new_session=True)
        self._stderr = threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True)
        self._stderr.start()

    def _drain(self, stream: IO[str], into: list[str] | None = None) -> None:
        """Read a pipe to its end: into `into`, or the stderr tail. A pipe closed by end() just stops it."""
        try:
            for line in stream:
                if into is None:
                    self.stderr_tail.append(line.rstrip("\n"))
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
        if self.proc.poll() is not None:  # let the reader take what the process wrote before it ended
            self._stderr.join(timeout=2)
        return RuntimeFailed(message, tuple(self.stderr_tail), timed_out)

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
        return self.proc.returncode, "".join(out)

    def end(self) -> None:
        """SIGTERM to the group, then SIGKILL after a grace period; safe to call twice."""
        if self.proc.poll() is None:
            _signal_group(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(self.proc.pid, signal.SIGKILL)  # children the leader left behind
        if self.proc.poll() is None:
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
