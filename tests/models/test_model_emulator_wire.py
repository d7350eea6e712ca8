"""The emulator as a client meets it (issue 18 item 4): streaming in both wire formats through the real SDKs,
GET /v1/models, a 400 in the provider's shape for a request with no messages, and the method it received."""

from __future__ import annotations

import json

import anthropic
import httpx2
import openai
import pytest

from harness.models.emulator import Emulator, EmulatorServer, EmulatorTransport

QUESTION = "The dev server port is 9090.\n\nQuestion: Which port does the dev server use?"


def sdks(transport: EmulatorTransport) -> tuple[openai.OpenAI, anthropic.Anthropic]:
    http = httpx2.Client(transport=transport)
    return (openai.OpenAI(api_key="k", base_url="http://openai.emulator.invalid/v1", http_client=http, max_retries=0),
            anthropic.Anthropic(api_key="k", base_url="http://anthropic.emulator.invalid", http_client=http,
                                max_retries=0))


def test_openai_stream_matches_the_plain_reply(transport: EmulatorTransport) -> None:
    client, _ = sdks(transport)
    messages = [{"role": "user", "content": QUESTION}]
    plain = client.chat.completions.create(model="gpt-5", messages=messages)
    chunks = list(client.chat.completions.create(model="gpt-5", messages=messages, stream=True,
                                                 stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(chunks) >= 3 and text == plain.choices[0].message.content
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == plain.usage.prompt_tokens


def test_openai_stream_has_no_usage_unless_asked(transport: EmulatorTransport) -> None:
    client, _ = sdks(transport)
    chunks = list(client.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": QUESTION}],
                                                 stream=True))
    assert chunks and all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_anthropic_stream_matches_the_plain_reply(transport: EmulatorTransport) -> None:
    _, client = sdks(transport)
    messages = [{"role": "user", "content": QUESTION}]
    plain = client.messages.create(model="claude-sonnet-4-6", max_tokens=200, messages=messages)
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=200, messages=messages) as stream:
        final = stream.get_final_message()
    assert final.content[0].text == plain.content[0].text and final.stop_reason == plain.stop_reason
    assert final.usage.output_tokens == plain.usage.output_tokens > 0


def test_models_are_listed_in_each_format(transport: EmulatorTransport) -> None:
    openai_client, anthropic_client = sdks(transport)
    assert "gpt-5" in [m.id for m in openai_client.models.list()]
    assert "claude-sonnet-4-6" in [m.id for m in anthropic_client.models.list()]


def test_no_messages_is_a_400_in_the_provider_shape(transport: EmulatorTransport) -> None:
    openai_client, anthropic_client = sdks(transport)
    with pytest.raises(openai.BadRequestError) as raised:
        openai_client.chat.completions.create(model="gpt-5", messages=[])
    assert raised.value.body["type"] == "invalid_request_error" and "messages" in raised.value.body["message"]
    with pytest.raises(anthropic.BadRequestError) as raised_a:
        anthropic_client.messages.create(model="claude-sonnet-4-6", max_tokens=10, messages=[])
    assert raised_a.value.body["type"] == "error" and raised_a.value.body["error"]["type"] == "invalid_request_error"


def test_the_error_names_the_method_received(loopback: None) -> None:
    with EmulatorServer(port=0, emulator=Emulator()) as server:
        with httpx2.Client() as http:
            got = http.get(f"{server.url}/v1/chat/completions")
            missing = http.delete(f"{server.url}/v1/nowhere")
            models = http.get(f"{server.url}/v1/models")
    assert got.status_code == 405 and "GET /v1/chat/completions" in got.json()["error"]["message"]
    assert missing.status_code == 404 and "DELETE /v1/nowhere" in json.dumps(missing.json())
    assert models.status_code == 200 and models.json()["object"] == "list"
