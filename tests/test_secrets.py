"""Secrets never leave the process (issue 17): a server that quotes the request's key back in its error body
leaves no trace of it in any file the run writes or in anything printed; cassettes keep only well-formed
successes."""

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest

from harness.cli import main
from harness.models.cassette import CassetteTransport
from harness.redact import redact

from test_runner import make_case

KEY = "sk-proj-test0123456789abcdefSECRET"


class EchoingHandler(BaseHTTPRequestHandler):
    """Answers every request 401, quoting the Authorization header and the key, as some servers do."""

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        reply_json(self, 401, {"error": {"message": f"Incorrect API key provided. Authorization: "
                                                    f"{self.headers.get('Authorization')}; key={KEY}",
                                         "type": "invalid_request_error", "code": "invalid_api_key"}})

    def log_message(self, *args):
        pass


def reply_json(handler: BaseHTTPRequestHandler, status: int, document: dict) -> None:
    body = json.dumps(document).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]):
    """`handler` on loopback in a thread; yields its /v1 base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def echo_server(loopback):
    with serving(EchoingHandler) as url:
        yield url


def files_holding(root: Path, text: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_a_key_echoed_in_an_error_body_reaches_no_file_and_no_output(tmp_path, capsys, monkeypatch, echo_server):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    make_case(tmp_path / "cases", "a")
    spec = f"openai:gpt-5@{echo_server}"
    code = main(["run", "--cases-dir", str(tmp_path / "cases"), "--summarizer", spec, "--answerer", "builtin",
                 "--record-mode", "all", "--cassettes", str(tmp_path / "cassettes"), "--out", str(tmp_path / "out"),
                 "--retries", "0"])
    run_output = capsys.readouterr()
    simulate_code = main(["simulate", str(tmp_path / "cases" / "a"), "--summarizer", spec])
    simulate_output = capsys.readouterr()
    assert code == 1 and simulate_code == 2  # the case's first summarizer request failed on the 401; simulate stopped
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert "HTTP 401" in run["cases"]["a"]["failure"]["error"]  # the failure itself is kept, only the key is not
    assert run["aggregates"]["failed_requests"]["cases"]["a"]
    assert "HTTP 401" in simulate_output.err
    for secret in (KEY, KEY[8:24]):
        assert files_holding(tmp_path, secret) == []
        for stream in (run_output.out, run_output.err, simulate_output.out, simulate_output.err):
            assert secret not in stream
    written = [p for p in tmp_path.rglob("*") if p.is_file() and "cases" not in p.relative_to(tmp_path).parts[:1]]
    assert any(p.name == "report.md" for p in written) and any(p.name == "run.json" for p in written)
    assert not (tmp_path / "cassettes").exists() or not list((tmp_path / "cassettes").rglob("*.json"))


def test_the_filter_covers_headers_bearer_and_sk_tokens(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plain-key-without-a-shape-42")
    for text in ("x-api-key: abcdefgh123", '"api-key": "zz-top-999"', "Authorization: Basic dXNlcjpwYXNz",
                 "Bearer eyJhbGciOiJIUzI1NiJ9.payload", "the key sk-ant-api03-abcdefghijklmnopqrstuv was bad",
                 "got plain-key-without-a-shape-42 back"):
        cleaned = redact(text)
        assert "<redacted>" in cleaned
        for word in ("abcdefgh123", "zz-top-999", "dXNlcjpwYXNz", "eyJhbGci", "abcdefghijklmnop", "shape-42"):
            assert word not in cleaned
    assert redact("no secret here: port 8080, src/server/config.ts") == "no secret here: port 8080, src/server/config.ts"


class Replies(httpx2.BaseTransport):
    def __init__(self, status, content):
        self.status, self.content = status, content

    def handle_request(self, request):
        return httpx2.Response(self.status, content=self.content, request=request)


@pytest.mark.parametrize("status, content", [(200, b"<html>not json"), (200, b"[1, 2]"), (401, b'{"error": {}}'),
                                             (404, b"{}")])
def test_cassettes_record_only_well_formed_successes(tmp_path, status, content):
    path = tmp_path / "c.json"
    transport = CassetteTransport(path, inner=Replies(status, content), mode="all", case_id="a")
    request = httpx2.Request("POST", "http://x/v1/chat/completions", content=b'{"model": "m"}')
    assert transport.handle_request(request).status_code == status  # the caller still sees the reply
    assert not path.exists()


def test_an_error_kept_on_purpose_is_replayed_as_the_error_and_new_mode_asks_again(tmp_path):
    path = tmp_path / "c.json"
    request = lambda: httpx2.Request("POST", "http://x/v1/chat/completions", content=b'{"model": "m"}')  # noqa: E731
    CassetteTransport(path, inner=Replies(401, b'{"error": {}}'), mode="all", case_id="a",
                      record_errors=True).handle_request(request())
    assert CassetteTransport(path, inner=None, mode="none", case_id="a").handle_request(request()).status_code == 401
    fresh = CassetteTransport(path, inner=Replies(200, b'{"ok": true}'), mode="new", case_id="a")
    assert fresh.handle_request(request()).status_code == 200  # not the recorded 401
