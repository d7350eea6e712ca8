"""A runtime driven through its own HTTP server (mode http, opencode serve), without a runtime: a stand-in
server that prints where it listens, creates a session and answers prompts. One process serves every prompt;
a failed turn is kept as the runtime's error; a busy session is waited for; a server that never says where it
listens, or listens beyond loopback, fails the case naming it."""

from __future__ import annotations

import sys
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
server = HTTPServer(("127.0.0.1", 0), H)
print(f"server listening on http://{sys.argv[1]}:{server.server_port}", flush=True)
server.serve_forever()
'''


def _adapter(tmp_path: Path, host: str = "127.0.0.1"):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    text = (Path(A.ADAPTERS) / "opencode.toml").read_text()
    text = text.replace('command = ["${bin}", "serve", "--hostname", "127.0.0.1", "--port", "${port}"]',
                        f'command = ["{sys.executable}", "{script}", "{host}", "{tmp_path / "prompts.txt"}"]')
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
        assert session.errors == ['prompt 1 ended in error: {"name": "APIError"}']
        assert session.last_error().startswith("prompt 1 ended in error")
    finally:
        session.close()
    assert session.process.proc.poll() is not None  # ended with the case


def test_a_server_listening_beyond_loopback_is_refused(tmp_path):
    adapter = _adapter(tmp_path, host="10.0.0.1")
    with pytest.raises(RuntimeFailed, match="did not say it listens on loopback"):
        open_session(adapter, {}, tmp_path, {"PATH": "/usr/bin:/bin"})
