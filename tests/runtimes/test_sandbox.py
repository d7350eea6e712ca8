"""What the sandbox guarantees, shown by a program run in it the way a drive runs a runtime (RuntimeProcess in
a Sandbox, the harness's server bridged in): it reaches the server at its loopback URL and nothing else (not
another port of the host's loopback, not a public address, no name lookup), sees nothing of the machine but the
system and its install (a secret beside it is not there, the user's home is not there), cannot write anywhere
but the scratch folder, holds no capability even as root, and a process it leaves behind dies with it."""

from __future__ import annotations

import json
import os
import socket
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.runtimes.process import RuntimeProcess
from harness.runtimes.sandbox import Sandbox, bridge, check

PROBE = r'''
import json, os, socket, sys, urllib.request
port, other, secret, outside, system = sys.argv[1:6]
found = {}
def attempt(name, action):
    try:
        found[name] = action()
    except Exception as exc:
        found[name] = f"failed: {type(exc).__name__}"
attempt("server", lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).read().decode())
attempt("host_loopback", lambda: socket.create_connection(("127.0.0.1", int(other)), timeout=5) and "connected")
attempt("public", lambda: socket.create_connection(("1.1.1.1", 443), timeout=5) and "connected")
attempt("lookup", lambda: socket.getaddrinfo("github.com", 443)[0][4][0])
attempt("secret", lambda: open(secret).read())
attempt("home", lambda: sorted(os.listdir(os.path.expanduser("~root"))))
attempt("write_outside", lambda: open(outside, "w").write("x") and "written")
attempt("write_system", lambda: open(os.path.join(system, "planted"), "w").write("x") and "written")
attempt("write_scratch", lambda: open("scratch-file", "w").write("x") and "written")
attempt("interfaces", lambda: sorted(name for _, name in socket.if_nameindex()))
attempt("capabilities", lambda: [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0])
print(json.dumps(found))
'''


class Hello(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("content-length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def sandbox_here():
    try:
        return check()
    except HarnessError as exc:
        pytest.skip(str(exc))


def test_inside_only_the_server_is_reachable_and_nothing_of_the_machine_is_in_view(tmp_path, sandbox_here):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "probe.py").write_text(PROBE)
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen()
    port = 40000 + os.getpid() % 20000  # the server's port: inside, forward.py listens on it
    box = Sandbox(scratch, port=port)
    argv = [str(Path(sys.executable).resolve()), "-I", "probe.py", str(port), str(other.getsockname()[1]),
            str(secret), str(tmp_path / "written"), sys.base_prefix]
    with bridge(box, Hello):
        process = RuntimeProcess(argv, scratch, {"PATH": os.environ["PATH"]}, box)
        code, out = process.wait(60)
    other.close()
    assert code == 0, process.stderr_tail
    found = json.loads(out)
    assert found["server"] == "hello"  # the harness's server, at its loopback URL, through the bridge
    assert found["interfaces"] == ["lo"]
    assert int(found["capabilities"], 16) == 0  # none, even run as root: no mount, no device, no other namespace
    for name in ("host_loopback", "public", "lookup", "secret", "write_system"):
        assert str(found[name]).startswith("failed:"), (name, found[name])
    # root's home holds at most the way to the harness's own Python installation, when it lives there (pyenv)
    shown = {Path(sys.base_prefix).relative_to("/root").parts[0]} if sys.base_prefix.startswith("/root/") else set()
    assert found["home"] == "failed: FileNotFoundError" or set(found["home"]) <= shown, found["home"]
    assert found["write_scratch"] == "written" and (scratch / "scratch-file").exists()
    assert not (tmp_path / "written").exists()  # (inside, the folders above the scratch one are a throwaway tmpfs)


def test_a_killed_runtime_is_known_killed_and_nothing_it_started_outlives_it(tmp_path, sandbox_here):
    box = Sandbox(tmp_path, port=40000 + os.getpid() % 20000)
    script = "setsid sleep 611.5 & sleep 0.5; kill -9 $$"  # a child out of its group, then killed itself
    process = RuntimeProcess(["sh", "-c", script], tmp_path, {"PATH": os.environ["PATH"]}, box)
    code, _ = process.wait(60)
    assert code == -9 and process.signal() == 9
    assert "SIGKILL" in str(process.failure("it ended"))
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _sleeps(p, b"611.5")]  # its PID namespace ended


def test_unconfined_a_signal_is_known_too(tmp_path):
    process = RuntimeProcess(["sh", "-c", "kill -TERM $$"], tmp_path, {"PATH": os.environ["PATH"]})
    code, _ = process.wait(60)
    assert code == -15 and process.failure("it ended").killed == 15


def _sleeps(pid: str, mark: bytes) -> bool:
    try:
        return mark in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False


BUSY = "import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\nprint('busy', flush=True)\n" \
       "sys.stdin.read()"


@pytest.mark.parametrize("ending", ["ended", "exits"])
def test_a_sandboxed_runtimes_cpu_time_is_counted_though_its_pid_namespace_hides_it(tmp_path, sandbox_here, ending):
    """getrusage never sees a process in bubblewrap's PID namespace: the forwarder measures it inside, and it is
    counted once the runtime has ended, whether the harness ends it (pi's and opencode's one process per case)
    or it exits (an exec runtime)."""
    from harness.runtimes.process import sandboxed_cpu

    box = Sandbox(tmp_path, port=40000 + os.getpid() % 20000)
    before = sandboxed_cpu()
    process = RuntimeProcess([str(Path(sys.executable).resolve()), "-c", BUSY], tmp_path,
                             {"PATH": os.environ["PATH"]}, box)
    if ending == "ended":
        assert process.stdout.readline().strip() == "busy"
        process.end()
        process.end()  # a second end counts nothing twice
    else:
        process.wait(60)
    used = sandboxed_cpu()
    assert 0.5 <= used["runtime"] - before["runtime"] < 30
    assert used["relay"] > before["relay"]
