"""A runtime's process group is ended on timeout: the shell it started and that shell's child are gone."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from harness.runtimes.process import RuntimeFailed, RuntimeProcess


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_timeout_ends_the_whole_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    script = f"sleep 60 & echo $! > {pidfile}; echo started >&2; wait"
    proc = RuntimeProcess(["sh", "-c", script], tmp_path, {"PATH": os.environ["PATH"]})
    with pytest.raises(RuntimeFailed, match="did not finish within 1 s") as err:
        proc.wait(1)
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child) and proc.proc.poll() is not None
    assert "started" in err.value.stderr_tail


def test_exit_code_and_output(tmp_path):
    proc = RuntimeProcess([sys.executable, "-c", "print('hi')"], tmp_path, dict(os.environ))
    assert proc.wait(30) == (0, "hi\n")


def test_pi_output_is_parsed_only_where_an_event_it_reads_can_be():
    """pi prints each streamed delta and each message whole again; only the events RpcSession reads are
    parsed, and a line whose type is not first is parsed (it may be one of them)."""
    from harness.runtimes.session import READ_EVENTS, read_line

    for kind in READ_EVENTS:
        assert read_line(f'{{"type":"{kind}","id":"h1"}}\n')
    for skipped in ('{"type":"message_update","delta":"x"}', '{"type":"turn_end","message":{}}',
                    '{"type":"agent_ended"}', "warning: slow\n", ""):
        assert not read_line(skipped)
    assert read_line('{"id":"h1","type":"response"}') and read_line('{ "type": "agent_end" }')
