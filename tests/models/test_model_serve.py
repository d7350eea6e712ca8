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
