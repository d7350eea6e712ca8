"""A runtime driven through its own HTTP server (mode http, opencode serve), without a runtime: a stand-in
server that prints where it listens, creates a session and answers prompts. One process serves every prompt;
a failed turn is kept as the runtime's error; a busy session is waited for; a server that never says where it
listens, or listens beyond loopback, fails the case naming it."""

from __future__ import annotations

import os
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from harness.runtimes import adapter as A
from harness.runtimes.process import RuntimeFailed
from harness.runtimes.session import open_session

SERVER = r'''
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
prompts, polls = [], []
class H(BaseHTTPRequestHandler):
    def _send(self, value):
        data = json.dumps(value).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])) or b"{}")
        if self.path == "/session":
            return self._send({"id": "ses_1"})
        text = body["parts"][0]["text"]
        prompts.append(text)
        with open(sys.argv[2], "a") as log: log.write(text + "\n")
        self._send({"info": {"error": {"name": "APIError"}} if text == "fail" else {}, "parts": []})
    def do_GET(self):
        polls.append(1)
        self._send({"ses_1": {"type": "busy" if len(polls) < 3 else "idle"}})
    def log_message(self, *a): pass
server = HTTPServer(("127.0.0.1", int(sys.argv[3]) if len(sys.argv) > 3 else 0), H)
print(f"server listening on http://{sys.argv[1]}:{server.server_port}", flush=True)
server.serve_forever()
'''


def _adapter(tmp_path: Path, host: str = "127.0.0.1", port: str = ""):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    text = (Path(A.ADAPTERS) / "opencode.toml").read_text()
    python = Path(sys.executable).resolve()  # a file: a venv's link points out of what the sandbox shows
    extra = f', "{port}"' if port else ""
    text = text.replace('command = ["${bin}", "serve", "--hostname", "127.0.0.1", "--port", "${port}"]',
                        f'command = ["{python}", "{script}", "{host}", "{tmp_path / "prompts.txt"}"{extra}]')
    text = text.replace(r"ready = 'listening on (http://127\.0\.0\.1:\d+)'", r"ready = 'listening on (http://\S+)'")
    text = text.replace("turn_timeout_s = 600", "turn_timeout_s = 20")
    path = tmp_path / "server.toml"
    path.write_text(text)
    return A.load(str(path))


def test_one_server_takes_every_prompt_and_a_failed_turn_is_kept_as_an_error(tmp_path, loopback):
    session = open_session(_adapter(tmp_path), {}, tmp_path, {"PATH": "/usr/bin:/bin"})
    try:
        pid = session.process.proc.pid
        for prompt in ("first", 'a "quoted"\nsecond', "fail"):
            session.send(prompt)
        assert session.process.proc.pid == pid and session.process.proc.poll() is None  # the same process
        assert (tmp_path / "prompts.txt").read_text() == 'first\na "quoted"\nsecond\nfail\n'
        assert session.errors == ['prompt 3 ended in error: {"name": "APIError"}']
        assert session.last_error().startswith("prompt 3 ended in error")
    finally:
        session.close()
    assert session.process.proc.poll() is not None  # ended with the case


def test_a_server_listening_beyond_loopback_is_refused(tmp_path):
    adapter = _adapter(tmp_path, host="10.0.0.1")
    before = set(_servers(tmp_path))
    with pytest.raises(RuntimeFailed, match="did not say it listens on loopback"):
        open_session(adapter, {}, tmp_path, {"PATH": "/usr/bin:/bin"})
    assert not set(_servers(tmp_path)) - before  # and it is not left running


def _servers(tmp_path: Path) -> list[str]:
    """The pids of stand-in servers of this test still running."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(tmp_path).encode() in (entry / "cmdline").read_bytes():
                found.append(entry.name)
        except OSError:
            continue
    return found


def test_in_the_sandbox_the_server_is_reached_through_the_socket_in_the_scratch_folder(tmp_path):
    """Inside its sandbox the runtime's server listens on the sandbox's own loopback, which the harness cannot
    reach: it is given a fixed port (`${port}`) and the harness talks to it through forward.py's relay."""
    from harness.errors import HarnessError
    from harness.runtimes.sandbox import Sandbox, bridge, check

    try:
        check()
    except HarnessError as exc:
        pytest.skip(str(exc))
    model_port = 40000 + os.getpid() % 20000
    box = Sandbox(tmp_path, port=model_port, expose=4096)
    adapter = _adapter(tmp_path, port="${port}")
    with bridge(box, BaseHTTPRequestHandler):
        session = open_session(adapter, {}, tmp_path, {"PATH": "/usr/bin:/bin"}, None, box)
        try:
            assert session.base == "http://127.0.0.1:4096" and session.served == tmp_path / "served.sock"
            session.send("inside")
            session.send("fail")
        finally:
            session.close()
    assert (tmp_path / "prompts.txt").read_text() == "inside\nfail\n"
    assert session.errors == ['prompt 2 ended in error: {"name": "APIError"}']
