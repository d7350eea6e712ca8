"""httpx2 transport plumbing shared by the adapters: the live transport and the retry-after bound."""

from __future__ import annotations

import json
from contextlib import contextmanager
from types import ModuleType
from typing import Iterator

import httpx2

from harness.errors import HarnessError
from harness.failure import RequestFailed
from harness.models.base import LATENCY_SOURCE_HEADER, RECORDED_ELAPSED_HEADER
from harness.redact import redact, redact_error_body, scrub, scrub_value

RETRY_AFTER_HEADERS = ("retry-after", "retry-after-ms")


def live_transport() -> httpx2.BaseTransport:
    return httpx2.HTTPTransport(retries=0)


class RetryAfterCap(httpx2.BaseTransport):
    """Clamps a server's retry-after hint before the SDK sees it.

    Both SDKs retry 429/5xx/529 with their own back-off and honour retry-after; anthropic obeys any
    hint, even an hour (PROVIDERS.md), so the bound lives here, below the SDK's retry loop.
    """

    def __init__(self, inner: httpx2.BaseTransport | None, max_retry_after_s: float):
        self.inner = inner
        self.max_retry_after_s = max_retry_after_s

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if self.inner is None:
            raise httpx2.ConnectError("no transport: this client can only replay its cassette", request=request)
        response = self.inner.handle_request(request)
        for name in RETRY_AFTER_HEADERS:
            value = response.headers.get(name)
            if value is None:
                continue
            scale = 1000.0 if name.endswith("-ms") else 1.0
            try:
                seconds = float(value) / scale
            except ValueError:  # an HTTP date: replace it with the bound
                seconds = self.max_retry_after_s
            if seconds > self.max_retry_after_s:
                response.headers[name] = f"{self.max_retry_after_s * scale:g}"
        return response

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()


class SecretFilter(httpx2.BaseTransport):
    """Removes secrets from a provider's reply where it enters, before the SDK parses it or a cassette keeps
    it: key-shaped values and the environment's key values in a success (`scrub`, so the reply's prose stays as
    given), and a quoted-back header in an error body (`redact_error_body`). Values are cleaned one by one
    in the parsed body, so the body stays the JSON it was; a body that is not JSON is cleaned as text."""

    def __init__(self, inner: httpx2.BaseTransport):
        self.inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self.inner.handle_request(request)
        content = response.read()
        failed = response.status_code >= 400
        try:
            body = json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            text = content.decode("utf-8", "replace")
            cleaned = (redact if failed else scrub)(text)
            if cleaned != text:
                content = cleaned.encode()
        else:
            cleaned_body = (redact_error_body if failed else scrub_value)(body)
            if cleaned_body != body:
                content = json.dumps(cleaned_body, ensure_ascii=False).encode()
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in ("content-length",
                                                                                          "content-encoding")]
        return httpx2.Response(response.status_code, headers=headers, content=content, request=request)

    def close(self) -> None:
        self.inner.close()


def latency_from(headers: httpx2.Headers, measured_s: float) -> tuple[float, str]:
    """(latency, source): a cassette replay reports the recorded elapsed time, the emulator is `modelled`,
    anything else is a live measurement."""
    source = headers.get(LATENCY_SOURCE_HEADER, "live")
    if source == "recorded":
        try:
            return float(headers.get(RECORDED_ELAPSED_HEADER, "0")), "recorded"
        except ValueError:
            return 0.0, "recorded"
    return measured_s, "modelled" if source == "modelled" else "live"


def one_line(text: object, limit: int = 300) -> str:
    """One line of provider or exception text with every secret removed (an error may quote the key)."""
    flat = redact(" ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def provider_message(body: object, fallback: str) -> str:
    """The human message inside an OpenAI or Anthropic error body."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return one_line(error["message"])
        if body.get("message"):
            return one_line(body["message"])
    return one_line(fallback)


@contextmanager
def sdk_errors(spec: str, sdk: ModuleType) -> Iterator[None]:
    """One-line errors for what an SDK call can raise (after its retries); the two SDKs share their exception
    names. A provider's failure is RequestFailed, so a case keeps the grades that did not need the request;
    a cassette miss stays a HarnessError: the case's input changed, and no probe of it can be trusted."""
    try:
        yield
    except sdk.APIStatusError as err:
        code = getattr(err, "error_code", None)  # Anthropic's typed errors name their cause
        status = f"HTTP {err.status_code}" + (f" {code}" if isinstance(code, str) else "")
        raise RequestFailed(f"{spec}: {status}: {provider_message(err.body, err.message)}") from None
    except sdk.APITimeoutError:
        raise RequestFailed(f"{spec}: request timed out (retries exhausted)") from None
    except sdk.APIConnectionError as err:
        if isinstance(err.__cause__, HarnessError):  # a cassette miss, already one line naming what to do
            raise HarnessError(str(err.__cause__)) from None
        raise RequestFailed(f"{spec}: connection failed: {one_line(err.__cause__ or err)}") from None
    except (sdk.APIResponseValidationError, json.JSONDecodeError, ValueError) as err:
        raise RequestFailed(f"{spec}: unreadable response: {one_line(err)}") from None
