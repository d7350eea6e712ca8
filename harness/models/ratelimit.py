"""Pacing requests to a provider's rate limits, shared by every client of one model in a run.

Both providers report what is left on every response: OpenAI in `x-ratelimit-remaining-requests` /
`-tokens` with `x-ratelimit-reset-requests` / `-tokens` as durations ("1s", "6m0s", "20ms"); Anthropic in
`anthropic-ratelimit-requests-remaining` / `-tokens-remaining` (and `-input-tokens-`) with RFC 3339 reset
times. The limiter counts its own sends against the last report, so concurrent cases stop sending when the
budget is spent and start again at the reset, instead of meeting a storm of 429s; a 429's retry-after pauses
every case, not only the one that met it. `rpm` / `tpm` cap providers that send no headers (local servers).
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Mapping

import httpx2

WINDOW_S = 60.0
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
# (remaining, reset) header pairs per budget, OpenAI's and Anthropic's
REQUEST_HEADERS = (("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
                   ("anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset"))
TOKEN_HEADERS = (("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
                 ("anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset"),
                 ("anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"))
MAX_PAUSE_S = 60.0  # a hint beyond this is clamped, as RetryAfterCap clamps it for the SDK


def parse_reset(value: str, wall_now: float) -> float | None:
    """Seconds from now until a reset: a duration ("1m30s", "20ms", "2.5") or an RFC 3339 time."""
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if parts and "".join(n + u for n, u in parts) == text:
        return sum(float(n) * _UNIT_S[u] for n, u in parts)
    try:
        return max(0.0, datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() - wall_now)
    except ValueError:
        return None


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    if "retry-after-ms" in headers:
        try:
            return float(headers["retry-after-ms"]) / 1000.0
        except ValueError:
            return None
    if "retry-after" in headers:
        try:
            return float(headers["retry-after"])
        except ValueError:
            return None
    return None


@dataclass
class Budget:
    """What the provider last said is left of one budget, counted down by our own sends since."""

    remaining: float | None = None
    reset_at: float = 0.0

    def wait(self, now: float, need: float) -> float:
        if self.remaining is None or now >= self.reset_at or self.remaining >= need:
            return 0.0
        return self.reset_at - now

    def spend(self, amount: float) -> None:
        if self.remaining is not None:
            self.remaining -= amount


class RateLimiter:
    """Thread-safe; `acquire` blocks until a request of `tokens` may go, `observe` reads the response."""

    def __init__(self, rpm: int | None = None, tpm: int | None = None, *, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep):
        self.rpm, self.tpm = rpm, tpm
        self.clock, self.wall, self.sleep = clock, wall, sleep
        self.requests, self.tokens = Budget(), Budget()
        self._sent: deque[tuple[float, int]] = deque()
        self._paused_until = 0.0
        self._lock = threading.Lock()
        self.sent = self.throttled = 0  # requests let through; 429s seen
        self.waited_s = 0.0

    def acquire(self, tokens: int) -> None:
        while True:
            with self._lock:
                now = self.clock()
                wait = self._wait(now, tokens)
                if wait <= 0:
                    self._sent.append((now, tokens))
                    self.requests.spend(1)
                    self.tokens.spend(tokens)
                    self.sent += 1
                    return
                self.waited_s += min(wait, 1.0)
            self.sleep(min(wait, 1.0))  # re-check at least every second: another response may lift the pause

    def _wait(self, now: float, tokens: int) -> float:
        while self._sent and self._sent[0][0] <= now - WINDOW_S:
            self._sent.popleft()
        waits = [self._paused_until - now, self.requests.wait(now, 1), self.tokens.wait(now, tokens)]
        if self.rpm and len(self._sent) >= self.rpm:
            waits.append(self._sent[0][0] + WINDOW_S - now)
        if self.tpm and self._sent:
            waits.append(self._tpm_wait(now, tokens))
        return max(waits)

    def _tpm_wait(self, now: float, tokens: int) -> float:
        """Until enough of the last minute's tokens have aged out for this request (one larger than the
        whole cap goes alone, once the minute is empty)."""
        used = sum(t for _, t in self._sent)
        if used + tokens <= self.tpm:
            return 0.0
        for sent_at, amount in self._sent:
            used -= amount
            if used + tokens <= self.tpm:
                return sent_at + WINDOW_S - now
        return self._sent[-1][0] + WINDOW_S - now

    def observe(self, status: int, headers: Mapping[str, str]) -> None:
        with self._lock:
            now, wall = self.clock(), self.wall()
            for budget, pairs in ((self.requests, REQUEST_HEADERS), (self.tokens, TOKEN_HEADERS)):
                _read_budget(budget, pairs, headers, now, wall)
            if status == 429:
                self.throttled += 1
                pause = retry_after_s(headers)
                if pause is None:
                    pause = max(self.requests.reset_at, self.tokens.reset_at) - now
                self._paused_until = max(self._paused_until, now + min(max(pause, 0.0), MAX_PAUSE_S))


def _read_budget(budget: Budget, pairs, headers: Mapping[str, str], now: float, wall: float) -> None:
    for remaining_name, reset_name in pairs:
        if remaining_name not in headers:
            continue
        try:
            budget.remaining = float(headers[remaining_name])
        except ValueError:
            continue
        reset = parse_reset(headers.get(reset_name, ""), wall)
        budget.reset_at = now + min(reset if reset is not None else 1.0, MAX_PAUSE_S)
        return


class RateLimitedTransport(httpx2.BaseTransport):
    """Below the cassette, above the network: replayed exchanges are never paced."""

    def __init__(self, inner: httpx2.BaseTransport, limiter: RateLimiter):
        self.inner, self.limiter = inner, limiter

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.limiter.acquire(request_tokens(request))
        response = self.inner.handle_request(request)
        self.limiter.observe(response.status_code, response.headers)
        return response

    def close(self) -> None:
        self.inner.close()


def request_tokens(request: httpx2.Request) -> int:
    """A request's size for a token budget, before any tokenizer: its body's characters / 4 (providers
    estimate their token limits from the request too)."""
    return len(request.read()) // 4
