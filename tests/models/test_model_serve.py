"""The emulator on loopback answers the real SDKs (the `compaction-harness serve` backend)."""

from __future__ import annotations

import anthropic
import httpx2
import openai

from harness.models.emulator import EmulatorServer

PROMPT = "Which port does the dev server use? The dev server listens on port 9090."


def test_serve_answers_real_clients_over_loopback(loopback: None) -> None:
    with EmulatorServer(port=0) as server:
        with httpx2.Client() as http:
            chat = openai.OpenAI(api_key="test", base_url=f"{server.url}/v1", http_client=http, max_retries=0)
            completion = chat.chat.completions.create(
                model="gpt-5", max_completion_tokens=100,
                messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": PROMPT}])
            claude = anthropic.Anthropic(api_key="test", base_url=server.url, http_client=http, max_retries=0,
                                         timeout=30.0)
            message = claude.messages.create(model="claude-haiku-4-5", max_tokens=100,
                                             messages=[{"role": "user", "content": PROMPT}])
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.prompt_tokens > 0
    assert message.stop_reason == "end_turn" and message.usage.output_tokens > 0
    assert len(server.emulator.requests) == 2


def test_server_stops_and_frees_the_port(loopback: None) -> None:
    server = EmulatorServer(port=0).start()
    url = server.url
    server.stop()
    with httpx2.Client() as http:
        try:
            http.post(f"{url}/v1/chat/completions", json={}, timeout=1.0)
        except httpx2.TransportError:
            return
    raise AssertionError("the server still answered after stop()")


def test_the_serve_command_answers_bad_bodies_on_every_wire_without_a_traceback(tmp_path, loopback: None) -> None:
    """`compaction-harness serve --port 0` names the port it got, and wrong-shape bodies on each wire are 400s
    in that wire's shape; its stderr holds no traceback (issue 44)."""
    import os
    import signal
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "harness", "serve", "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "300"})
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        url = line.split("emulator on ", 1)[1].split()[0]
        assert not url.endswith(":0")
        with httpx2.Client(timeout=30) as http:
            replies = [http.post(url + path, content=body) for path in
                       ("/v1/chat/completions", "/v1/responses", "/v1/messages",
                        "/v1beta/models/gemini-2.5-pro:streamGenerateContent")
                       for body in (b"[1,2]", b"null", b'{"model": 5}', b"[" * 500 + b"]" * 500)]
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert {r.status_code for r in replies} == {400}
    assert {tuple(sorted(r.json())) for r in replies} == {("error",), ("error", "type")}
    assert "Traceback" not in err
