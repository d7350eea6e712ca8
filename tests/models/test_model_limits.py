"""The emulator's limits through the real SDKs (a request over the window is rejected in the provider's own
error shape; rate-limit headers and 429s), and the client-side limiter that reads those headers."""

from __future__ import annotations

import httpx2
import pytest

from harness.errors import HarnessError
from harness.models import ModelRequest, open_client
from harness.models.base import ChatMessage as M
from harness.models.emulator import Emulator, EmulatorTransport
from harness.models.emulator.limits import RateLimits, window_error
from harness.models.ratelimit import RateLimiter, parse_reset

SPECS = {"openai": "openai:gpt-4o@emulator", "anthropic": "anthropic:claude-haiku-4-5@emulator"}
MODELS = {"openai": "gpt-4o", "anthropic": "claude-haiku-4-5"}
LONG = M("user", "The relay listens on port 7555 and the build publishes the image. " * 200)  # ~2,600 tokens


def ask(provider: str, emulator: Emulator, max_output: int = 100, **kwargs):
    with open_client(SPECS[provider], transport=EmulatorTransport(emulator), max_retries=0, **kwargs) as model:
        return model.complete(ModelRequest(MODELS[provider], "You are a coding agent.", (LONG,), max_output))


@pytest.mark.parametrize("provider, wording", [
    ("openai", "This model's maximum context length is 2000 tokens. However, your messages resulted in"),
    ("anthropic", "prompt is too long: "),
])
def test_a_request_over_the_window_is_rejected_as_the_provider_rejects_it(provider, wording):
    emulator = Emulator(windows={MODELS[provider]: 2000})
    with pytest.raises(HarnessError, match="HTTP 400: " + wording.replace("(", r"\(")):
        ask(provider, emulator)
    assert ask(provider, Emulator(windows={MODELS[provider]: 4000})).text  # under the window it answers


def test_the_openai_error_body_carries_its_code_and_param():
    error = window_error("gpt-4o", 130_000, 512, wire="openai")
    assert error is not None and (error.status, error.code, error.param) == (400, "context_length_exceeded", "messages")
    assert "128000 tokens" in error.message  # the window comes from the price table
    tipped = window_error("claude-haiku-4-5", 199_800, 512, wire="anthropic")
    assert tipped is not None and "199800 + 512 > 200000" in tipped.message
    assert window_error("gpt-4o", 100_000, 512, wire="openai") is None
    assert window_error("no-such-model", 10**9, 512, wire="openai") is None  # no row: not checked


@pytest.mark.parametrize("provider, remaining", [
    ("openai", "x-ratelimit-remaining-requests"), ("anthropic", "anthropic-ratelimit-requests-remaining")])
def test_the_emulator_sends_rate_limit_headers_and_429_past_the_budget(provider, remaining):
    emulator = Emulator(limits=RateLimits(rpm=2, period_s=60.0))
    transport = EmulatorTransport(emulator)
    path = "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"
    body = (b'{"model": "%s", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}'
            % MODELS[provider].encode())
    responses = [transport.handle_request(httpx2.Request("POST", "http://e" + path, content=body)) for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 429]
    assert [r.headers[remaining] for r in responses[:2]] == ["1", "0"]
    assert 25 <= float(responses[2].headers["retry-after"]) <= 31  # one request back in half a minute
    assert emulator.limits.rejected == 1


def test_reset_times_are_read_in_both_providers_formats():
    assert parse_reset("6m0s", 0) == 360 and parse_reset("20ms", 0) == pytest.approx(0.02)
    assert parse_reset("1.5s", 0) == 1.5 and parse_reset("2", 0) == 2
    assert parse_reset("2026-11-30T12:00:30Z", wall_now=1796040000.0) == 30  # 2026-11-30T12:00:00Z


class FakeTime:
    def __init__(self):
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_the_limiter_waits_for_the_reset_once_the_reported_budget_is_spent():
    t = FakeTime()
    limiter = RateLimiter(clock=t.clock, wall=lambda: 0.0, sleep=t.sleep)
    limiter.acquire(10)
    limiter.observe(200, {"x-ratelimit-remaining-requests": "1", "x-ratelimit-reset-requests": "5s"})
    limiter.acquire(10)  # the last one left goes at once
    assert t.now == 0
    limiter.acquire(10)  # none left until the reset
    assert t.now == pytest.approx(5)


def test_a_429_pauses_every_request_for_its_retry_after():
    t = FakeTime()
    limiter = RateLimiter(clock=t.clock, sleep=t.sleep)
    limiter.observe(429, {"retry-after": "3"})
    limiter.acquire(1)
    assert t.now == pytest.approx(3) and limiter.throttled == 1


def test_rpm_and_tpm_caps_space_requests_without_any_header():
    t = FakeTime()
    limiter = RateLimiter(rpm=2, clock=t.clock, sleep=t.sleep)
    for _ in range(3):
        limiter.acquire(1)
    assert t.now == pytest.approx(60)  # the third waits for the first to leave the minute
    t2 = FakeTime()
    tokens = RateLimiter(tpm=1000, clock=t2.clock, sleep=t2.sleep)
    tokens.acquire(600)
    tokens.acquire(600)
    assert t2.now == pytest.approx(60)
