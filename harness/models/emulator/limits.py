"""The emulator's limits, as the real APIs enforce them: a request over the model's window is rejected with
that provider's own error, and an optional rate limit answers 429 with retry-after once a minute's budget
is spent, sending each provider's rate-limit headers on every response.

Window errors (400 invalid_request_error), worded as the APIs word them:
- OpenAI: code `context_length_exceeded`, param `messages`, "This model's maximum context length is M tokens.
  However, your messages resulted in N tokens. Please reduce the length of the messages." (or "you requested
  N tokens (P in the messages, C in the completion)" when only the completion budget tips it over);
- Anthropic: "prompt is too long: N tokens > M maximum"; prompt plus max_tokens over the window: "input length
  and `max_tokens` exceed context limit: P + C > M, decrease input length or `max_tokens` and try again"
  (that wording as quoted in public bug reports);
- OpenAI Responses: code `context_length_exceeded`, param `input`, "Your input exceeds the context window of this
  model. Please adjust your input and try again." (as quoted in public bug reports; the real API may send it
  as a stream `error` event after the stream opened; the emulator answers 400 before streaming);
- Gemini: 400 `INVALID_ARGUMENT`, "The input token count (N) exceeds the maximum number of tokens allowed (M)."
  (input alone: Gemini's output limit is separate).
The output counted is what the request reserves (none when it sets no limit). The window of a model comes
from `Emulator.windows` (model -> window, "*" for any model), else the price table (pricing.toml); a model
with neither is not checked.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

from harness.errors import HarnessError
from harness.models.emulator.faults import EmulatorError

MINUTE_S = 60.0


def model_window(model: str) -> int | None:
    """The shipped table's window (the table is read once per process; --prices rows do not reach here)."""
    from harness.models.pricing import _default_prices, resolve

    try:
        return resolve(model, _default_prices()).window
    except HarnessError:
        return None


def window_error(model: str, prompt_tokens: int, max_output: int, wire: str,
                 window: int | None = None) -> EmulatorError | None:
    """`wire`'s rejection of a request that does not fit `window` (default: the model's), or None."""
    limit = window if window is not None else model_window(model)
    if limit is None:
        return None
    if wire == "gemini":  # the input alone is held to the limit; output has its own
        return None if prompt_tokens <= limit else EmulatorError(
            400, "invalid_request_error",
            f"The input token count ({prompt_tokens}) exceeds the maximum number of tokens allowed ({limit}).")
    if prompt_tokens + max_output <= limit:
        return None
    if wire == "anthropic":
        if prompt_tokens > limit:
            return EmulatorError(400, "invalid_request_error", f"prompt is too long: {prompt_tokens} tokens > {limit} maximum")
        return EmulatorError(400, "invalid_request_error",
                             f"input length and `max_tokens` exceed context limit: {prompt_tokens} + {max_output} > "
                             f"{limit}, decrease input length or `max_tokens` and try again")
    if wire == "responses":
        return EmulatorError(400, "invalid_request_error", "Your input exceeds the context window of this model. "
                             "Please adjust your input and try again.", code="context_length_exceeded", param="input")
    if prompt_tokens > limit:
        message = (f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
                   f"{prompt_tokens} tokens. Please reduce the length of the messages.")
    else:
        message = (f"This model's maximum context length is {limit} tokens. However, you requested "
                   f"{prompt_tokens + max_output} tokens ({prompt_tokens} in the messages, {max_output} in the "
                   f"completion). Please reduce the length of the messages or completion.")
    return EmulatorError(400, "invalid_request_error", message, code="context_length_exceeded", param="messages")


@dataclass
class RateLimits:
    """Requests and tokens per minute, replenished continuously (a token bucket each), as both providers
    describe their limits. None: that budget is unlimited. `period_s` shortens the minute (tests)."""

    rpm: int | None = None
    tpm: int | None = None
    period_s: float = MINUTE_S
    wall: Callable[[], float] = field(default=lambda: datetime.now(timezone.utc).timestamp())

    def __post_init__(self) -> None:
        self._requests = float(self.rpm or 0)
        self._tokens = float(self.tpm or 0)
        self._at: float | None = None
        self._lock = threading.Lock()
        self.rejected = 0  # 429s sent

    def admit(self, now: float, tokens: int) -> float | None:
        """Take one request of `tokens` from the budgets; None when admitted, else the seconds to wait."""
        with self._lock:
            self._refill(now)
            need_requests = 1 if self.rpm else 0
            need_tokens = min(tokens, self.tpm) if self.tpm else 0
            if self._requests >= need_requests and self._tokens >= need_tokens:
                self._requests -= need_requests
                self._tokens -= need_tokens
                return None
            self.rejected += 1
            waits = [0.0]
            if self.rpm and self._requests < need_requests:
                waits.append((need_requests - self._requests) * self.period_s / self.rpm)
            if self.tpm and self._tokens < need_tokens:
                waits.append((need_tokens - self._tokens) * self.period_s / self.tpm)
            return max(waits)

    def _refill(self, now: float) -> None:
        elapsed = 0.0 if self._at is None else max(0.0, now - self._at)
        self._at = now
        if self.rpm:
            self._requests = min(float(self.rpm), self._requests + elapsed * self.rpm / self.period_s)
        if self.tpm:
            self._tokens = min(float(self.tpm), self._tokens + elapsed * self.tpm / self.period_s)

    def headers(self, anthropic: bool) -> dict[str, str]:
        """What is left and when it is full again, in the provider's header names and formats."""
        with self._lock:
            budgets = [(name, limit, left) for name, limit, left in
                       (("requests", self.rpm, self._requests), ("tokens", self.tpm, self._tokens)) if limit]
        out: dict[str, str] = {}
        for name, limit, left in budgets:
            full_in = (limit - left) * self.period_s / limit
            if anthropic:
                reset = datetime.fromtimestamp(self.wall() + full_in, timezone.utc).isoformat().replace("+00:00", "Z")
                out |= {f"anthropic-ratelimit-{name}-limit": str(limit),
                        f"anthropic-ratelimit-{name}-remaining": str(int(left)),
                        f"anthropic-ratelimit-{name}-reset": reset}
            else:
                out |= {f"x-ratelimit-limit-{name}": str(limit), f"x-ratelimit-remaining-{name}": str(int(left)),
                        f"x-ratelimit-reset-{name}": f"{full_in:.3f}s"}
        return out
