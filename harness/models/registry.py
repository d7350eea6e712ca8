"""Opening a model client from its spec: spec parsing, the factory, and the key and record-mode policy.

The adapters are imported inside `open_client`, not at the top: the two SDKs take about a second to import
and a builtin-only run never needs them. Nothing below imports this module, so those imports make no cycle.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.models.base import (COMPACT_PROVIDERS, DEFAULT_TIMEOUT_S, EMULATOR, KEY_VARIABLES, RECORD_MODES,
                                 ModelClient, ModelSpec)

DEFAULT_CASSETTE_ROOT = Path("goldens/cassettes")
_SPEC_HINT = ("use builtin, openai:MODEL, anthropic:MODEL, openai:MODEL@BASE_URL, PROVIDER:MODEL@emulator, "
              "or openai-compact:MODEL / anthropic-compact:MODEL (also @emulator or @BASE_URL)")


def check_spec(spec: str) -> ModelSpec:
    """Parse a model spec without opening anything; a malformed one is a one-line HarnessError."""
    text = spec.strip()
    if text == "builtin":
        return ModelSpec("builtin", "builtin")
    provider, sep, rest = text.partition(":")
    if not sep or provider not in ("openai", "anthropic", *COMPACT_PROVIDERS):
        raise HarnessError(f"model spec {spec!r}: unknown provider; {_SPEC_HINT}")
    model, at, base = rest.partition("@")
    if not model or (at and not base):
        raise HarnessError(f"model spec {spec!r}: missing model or base URL; {_SPEC_HINT}")
    if base and base != EMULATOR:
        if provider not in ("openai", *COMPACT_PROVIDERS):  # a compaction proxy may front either provider
            raise HarnessError(f"model spec {spec!r}: a base URL is only supported for openai-compatible servers")
        if not base.startswith(("http://", "https://")):
            raise HarnessError(f"model spec {spec!r}: base URL must start with http:// or https://")
    return ModelSpec(provider, model, base or None)


def cassette_path(root: str | Path | None, case_id: str, spec: str) -> Path:
    """goldens/cassettes/<case>/<provider>-<model>[-<base>].json

    Here rather than in cassette.py because it parses the spec: the cassette transport stays below the
    registry, which opens it."""
    parsed = check_spec(spec)
    name = parsed.provider if parsed.provider == "builtin" else f"{parsed.provider}-{parsed.model}"
    if parsed.base_url:
        name += "-" + re.sub(r"^https?://", "", parsed.base_url)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")
    return Path(root if root is not None else DEFAULT_CASSETTE_ROOT) / _safe_segment(case_id) / f"{safe}.json"


def _safe_segment(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "case"


def require_key(spec: str | ModelSpec, record_mode: str) -> None:
    """Fail before any work when a run in `record_mode` needs a provider key that is not set, without
    opening a client. Builtin, emulated and custom-server specs need none; replay-only runs need none."""
    parsed = spec if isinstance(spec, ModelSpec) else check_spec(spec)
    _check_record_mode(record_mode)
    if parsed.provider == "builtin" or record_mode == "none":
        return
    _api_key(parsed, needed=True)


def open_client(
    spec: str,
    *,
    cassette_path: str | Path | None = None,
    record_mode: str = "none",
    case_id: str | None = None,
    transport: Any = None,
    max_retries: int = 2,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retry_after_s: float = 60.0,
    limiter: Any = None,
    record_errors: bool = False,
    cassette_key: Any = None,
) -> ModelClient:
    """Open a client for `spec`. Missing keys fail here, before any work starts.

    `transport` (an httpx2 transport) replaces the network or the emulator underneath; `cassette_path`
    wraps whatever is underneath in the record/replay transport with `record_mode`; `limiter` (a
    models.ratelimit.RateLimiter shared by the run's clients of one model) paces what reaches the network;
    `record_errors` keeps a provider's 4xx replies in the cassette, to replay that failure on purpose;
    `cassette_key` (canonical request -> the form it matches on) normalises what varies between runs.
    """
    parsed = check_spec(spec)
    _check_record_mode(record_mode)
    if parsed.provider == "builtin":
        from harness.models.builtin import BuiltinClient

        return BuiltinClient()

    from harness.models.cassette import CassetteTransport, will_record
    from harness.models.transport import RetryAfterCap, live_transport

    recording_possible = cassette_path is None or will_record(Path(cassette_path), record_mode)
    api_key = _api_key(parsed, needed=recording_possible)
    inner = transport
    if inner is None:
        if parsed.emulated:
            from harness.models.emulator import EmulatorTransport

            inner = EmulatorTransport()
        elif recording_possible:
            inner = live_transport()
    if limiter is not None and inner is not None:
        from harness.models.ratelimit import RateLimitedTransport

        inner = RateLimitedTransport(inner, limiter)
    stack: Any = inner
    if cassette_path is not None:
        stack = CassetteTransport(
            Path(cassette_path), inner=inner, mode=record_mode, case_id=case_id or "?",
            secrets=tuple(v for v in (api_key,) if v), record_errors=record_errors, key=cassette_key,
        )
    stack = RetryAfterCap(stack, max_retry_after_s)
    if parsed.compacts:
        return _compact_client(parsed, api_key=api_key, transport=stack, max_retries=max_retries, timeout=timeout)
    if parsed.provider == "openai":
        from harness.models.openai import OpenAIClient

        return OpenAIClient(parsed, api_key=api_key, transport=stack, max_retries=max_retries, timeout=timeout)
    from harness.models.anthropic import AnthropicClient

    return AnthropicClient(parsed, api_key=api_key, transport=stack, max_retries=max_retries, timeout=timeout)


def _compact_client(spec: ModelSpec, **options: Any) -> ModelClient:
    if spec.provider == "openai-compact":
        from harness.models.openai_compact import OpenAICompactClient

        return OpenAICompactClient(spec, **options)
    from harness.models.anthropic_compact import AnthropicCompactClient

    return AnthropicCompactClient(spec, **options)


def _check_record_mode(record_mode: str) -> None:
    if record_mode not in RECORD_MODES:
        raise HarnessError(f"record mode {record_mode!r}: choose one of {', '.join(RECORD_MODES)}")


def _api_key(spec: ModelSpec, *, needed: bool) -> str:
    """The provider key, or a placeholder where no real provider is reached (emulator, replay, custom server)."""
    variable = KEY_VARIABLES[spec.provider]
    value = os.environ.get(variable, "").strip()
    if value:
        return value
    if spec.emulated:
        return "emulator-key"
    if spec.base_url:  # OpenAI-compatible local servers usually take any key
        return "no-key"
    if not needed:
        return "replay-only"
    raise HarnessError(f"{variable} is not set: export it to use {spec}, or replay a cassette with --record-mode none")
