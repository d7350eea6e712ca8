"""Both real SDKs over the in-process emulator transport: parsing, cache usage, retries, errors, truncation."""

from __future__ import annotations

import time

import pytest

from harness.errors import HarnessError
from harness.models.anthropic import message_params
from harness.models.base import ChatMessage as M
from harness.models import ModelRequest, ToolCallSpec, open_client
from harness.models.emulator import Emulator, EmulatorTransport, Fault

SPECS = {"openai": "openai:gpt-5@emulator", "anthropic": "anthropic:claude-sonnet-4-6@emulator"}
MODELS = {"openai": "gpt-5", "anthropic": "claude-sonnet-4-6"}
FILLER = "The build pipeline compiles the service, runs the unit tests and publishes the image. "
SYSTEM = "You are a careful coding agent. " + FILLER * 60  # about 1,000 tokens: a cacheable system prompt

HISTORY = (
    M("user", "Fix the failing login test in app/auth.py. Use port 9090 for the dev server. " + FILLER * 20),
    M("assistant", "Reading the file.", (ToolCallSpec("c1", "read_file", {"path": "app/auth.py"}),)),
    M("tool", "def login(user):\n    raise KeyError('session')\n" + FILLER * 10, tool_call_id="c1"),
    M("assistant", "Decided to store the session in a cookie instead of the URL."),
)
INSTRUCTION = M("user", "Summarize the session so far:\n## Goal\n## Files\n## Decisions")


def client(provider: str, transport: EmulatorTransport, **kwargs):
    return open_client(SPECS[provider], transport=transport, **kwargs)


def request(provider: str, messages=HISTORY, **kwargs) -> ModelRequest:
    return ModelRequest(MODELS[provider], SYSTEM, messages, kwargs.pop("max_output_tokens", 800), **kwargs)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_text_and_usage_are_parsed(provider: str, transport: EmulatorTransport) -> None:
    with client(provider, transport) as model:
        response = model.complete(request(provider, HISTORY + (INSTRUCTION,)))
    assert response.text.startswith("## Goal") and "app/auth.py" in response.text
    assert response.usage.input_tokens > 1500 and response.usage.output_tokens > 10
    assert response.latency_source == "modelled" and not response.truncated
    assert response.model == MODELS[provider]


def test_openai_cache_hit_on_the_second_request(transport: EmulatorTransport) -> None:
    with client("openai", transport) as model:
        first = model.complete(request("openai"))
        second = model.complete(request("openai", HISTORY + (INSTRUCTION,), cache_key="session-1"))
    assert first.usage.cached_input_tokens == 0
    assert second.usage.cached_input_tokens > 1024 and second.usage.cached_input_tokens % 128 == 0
    assert second.usage.cache_write_tokens == 0
    assert transport.emulator.requests[-1]["prompt_cache_key"] == "session-1"
    assert transport.emulator.requests[-1]["max_completion_tokens"] == 800


def test_anthropic_cache_write_then_read(transport: EmulatorTransport) -> None:
    with client("anthropic", transport) as model:
        first = model.complete(request("anthropic"))
        second = model.complete(request("anthropic", HISTORY + (INSTRUCTION,), cache_prefix_messages=len(HISTORY)))
    assert first.usage.cache_write_tokens == first.usage.input_tokens  # the whole prompt was written
    assert first.usage.cached_input_tokens == 0
    assert second.usage.cached_input_tokens == first.usage.input_tokens  # the shared prefix is read
    assert second.usage.cache_write_tokens == 0  # the breakpoint stays on the shared prefix
    assert second.usage.input_tokens > second.usage.cached_input_tokens


def test_anthropic_cache_off_sends_no_breakpoints(transport: EmulatorTransport) -> None:
    with client("anthropic", transport) as model:
        model.complete(request("anthropic", cache=False))
        again = model.complete(request("anthropic", cache=False))
    assert again.usage.cached_input_tokens == 0 and again.usage.cache_write_tokens == 0
    assert "cache_control" not in str(transport.emulator.requests[-1])


def test_anthropic_breakpoints_and_merged_turns() -> None:
    messages = HISTORY + (M("user", "and one more thing"), INSTRUCTION)
    params = message_params(ModelRequest("claude-sonnet-4-6", "sys", messages, 100, cache_prefix_messages=4))
    assert params["system"][-1]["cache_control"] == {"type": "ephemeral"}
    roles = [m["role"] for m in params["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]  # consecutive user turns merged
    assert params["messages"][2]["content"][0]["type"] == "tool_result"
    assert params["messages"][1]["content"][1] == {"type": "tool_use", "id": "c1", "name": "read_file",
                                                   "input": {"path": "app/auth.py"}}
    marked = [(i, j) for i, m in enumerate(params["messages"]) for j, b in enumerate(m["content"])
              if "cache_control" in b]
    assert marked == [(3, 0)]  # the last message of the shared prefix
    assert len(params["messages"][4]["content"]) == 2


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("kind", ["429", "500", "529"])
def test_retries_honour_retry_after(provider: str, kind: str, emulator: Emulator,
                                    transport: EmulatorTransport) -> None:
    emulator.inject(Fault(kind, retry_after=0.01), Fault(kind, retry_after=0.01))
    started = time.perf_counter()
    with client(provider, transport, max_retries=2) as model:
        response = model.complete(request(provider))
    assert response.text and not emulator.faults
    assert time.perf_counter() - started < 1.0  # the tiny hint was used, not the 0.5 s back-off


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_retries_exhausted_is_a_one_line_error(provider: str, emulator: Emulator,
                                               transport: EmulatorTransport) -> None:
    emulator.inject(*[Fault("429", retry_after=0.01)] * 2)
    with client(provider, transport, max_retries=1) as model, pytest.raises(HarnessError) as info:
        model.complete(request(provider))
    assert "HTTP 429" in str(info.value) and "Rate limited" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_retry_after_is_bounded(provider: str, emulator: Emulator, transport: EmulatorTransport) -> None:
    emulator.inject(Fault("429", retry_after=3600))  # anthropic would otherwise wait an hour
    started = time.perf_counter()
    with client(provider, transport, max_retry_after_s=0.02) as model:
        assert model.complete(request(provider)).text
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("kind,status", [("400", 400), ("401", 401)])
def test_client_errors_are_not_retried(provider: str, kind: str, status: int, emulator: Emulator,
                                       transport: EmulatorTransport) -> None:
    emulator.inject(kind)
    with client(provider, transport) as model, pytest.raises(HarnessError) as info:
        model.complete(request(provider))
    message = str(info.value)
    assert f"HTTP {status}" in message and "(injected)" in message and "\n" not in message
    assert message.startswith(SPECS[provider])
    assert emulator.requests == []  # failed before the model; no retry either
    assert not emulator.faults


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_truncation_is_reported(provider: str, emulator: Emulator, transport: EmulatorTransport) -> None:
    emulator.inject("truncate")
    with client(provider, transport) as model:
        cut = model.complete(request(provider, HISTORY + (INSTRUCTION,)))
        small = model.complete(request(provider, HISTORY + (M("user", "What port and which file?"),),
                                       max_output_tokens=3))
    assert cut.truncated and cut.finish_reason == ("length" if provider == "openai" else "max_tokens")
    assert small.truncated and small.usage.output_tokens <= 3


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_timeout_and_malformed_json(provider: str, emulator: Emulator, transport: EmulatorTransport) -> None:
    emulator.inject("timeout")
    with client(provider, transport, max_retries=0) as model:
        with pytest.raises(HarnessError, match="timed out"):
            model.complete(request(provider))
        emulator.inject("malformed")
        with pytest.raises(HarnessError, match="unreadable response"):
            model.complete(request(provider))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_async_complete(provider: str, transport: EmulatorTransport) -> None:
    import asyncio

    async def both():
        with client(provider, transport) as model:
            return await asyncio.gather(model.acomplete(request(provider)), model.acomplete(request(provider)))

    first, second = asyncio.run(both())
    assert first.text == second.text
