"""A runtime's failure is a failure: a process that ends before its first request, or is killed by a signal,
fails its case in both session modes (with a fault injected too), named, with its last stderr lines, and nothing
it printed keeps the key it printed; Ctrl-C and SIGTERM to `run --runtime` end the runtime (a child that left its
process group too) and remove its scratch folder; the version check sees no key and not the user's home.
The runtimes here are stand-ins (fake_runtime.py) driven by the real driver, sandbox and `run`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.runtimes.adapter import load
from harness.runtimes.install import executable, installed_version
from harness.runtimes.sandbox import check
from fake_runtime import KEY, write_fake
from runtime_helpers import CASE

ROOT = Path(__file__).parents[2]


@pytest.fixture(autouse=True)
def sandbox_here():
    try:
        check()
    except HarnessError as exc:
        pytest.skip(str(exc))


def _run(tmp_path: Path, adapter: Path, *extra: str) -> tuple[int, Path]:
    out = tmp_path / "run"
    code = main(["run", "--runtime", str(adapter), "--policy", "truncate", "--cases", str(CASE), "--out", str(out),
                 *extra])
    return code, next(p for p in out.iterdir() if p.name.startswith("runtime-"))


def _everything(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("mode, why", [("exit-before-request", "ended prompt 1 before its first request (exit 0)"),
                                       ("kill-after-request", "killed by SIGKILL"),
                                       ("rpc-killed", "killed by SIGKILL) before its first request")])
def test_a_runtime_that_dies_or_asks_nothing_fails_its_case_even_with_a_fault(tmp_path, mode, why):
    code, folder = _run(tmp_path, write_fake(tmp_path / "fake", mode), "--summary-fault", "500")
    record = json.loads((folder / "cases" / "edge-32k-window.json").read_text())
    assert code == 1 and record["status"] == "error", record.get("runtime")
    assert why in record["error"] and "stderr says Authorization" in record["error"]  # its last stderr lines
    everything = _everything(folder)
    assert KEY not in everything and "<redacted>" in record["error"]  # what it printed, redacted everywhere


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stop_ends_the_runtime_and_its_children_and_removes_its_scratch_folder(tmp_path, stop):
    mark = f"617.{stop.value}"
    adapter = write_fake(tmp_path / "fake", "hang", sleep=mark)
    scratch_root = Path(tempfile.mkdtemp(prefix="h40-", dir="/tmp"))  # short: the sandbox's socket path is limited
    env = {**os.environ, "TMPDIR": str(scratch_root)}
    run = subprocess.Popen([sys.executable, "-m", "harness", "run", "--runtime", str(adapter), "--policy", "truncate",
                            "--cases", str(CASE), "--out", str(tmp_path / "run")], cwd=ROOT, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        started = _wait_for(lambda: list(scratch_root.glob("ch-fake-*/workspace/started")), 120)
        assert started, run.stderr.read().decode()[-800:] if run.poll() is not None else "the runtime never started"
        sleeper = _wait_for(lambda: _processes_with(mark), 10)
        assert sleeper  # its child, out of its process group, is running
        run.send_signal(stop)
        assert run.wait(timeout=30) == 130
    finally:
        if run.poll() is None:
            run.kill()
    assert _wait_for(lambda: not _processes_with(mark), 5), "a runtime process was left running"
    assert not list(scratch_root.glob("ch-*")), "its scratch folder was left behind"
    shutil.rmtree(scratch_root)  # what is left is the fork server's (multiprocessing's own temporary folder)


def _wait_for(probe, seconds: float):
    deadline = time.monotonic() + seconds
    while not (found := probe()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _processes_with(mark: str) -> list[int]:
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if mark.encode() in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "unconfined"])
def test_the_version_check_sees_no_key_and_not_the_users_home(tmp_path, monkeypatch, sandboxed):
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-user0123456789abcdefghijklmnop")
    adapter = load(str(write_fake(tmp_path / "fake", "hang")))  # its --version prints "leaked" if it sees either
    assert installed_version(adapter, executable(adapter), sandboxed) == "1.0.0"
    assert list(home.iterdir()) == []  # it wrote into a scratch home, removed after


def test_without_a_sandbox_the_run_says_so(tmp_path, capsys):
    code, folder = _run(tmp_path, write_fake(tmp_path / "fake", "exit-before-request"), "--sandbox", "off")
    assert code == 1 and "--sandbox off: the runtime runs unconfined" in capsys.readouterr().err
    record = json.loads((folder / "cases" / "edge-32k-window.json").read_text())
    assert "before its first request" in record["error"]
