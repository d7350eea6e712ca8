"""The output secret filter: no key leaves the process in results, reports, cassettes, logs or errors.

A provider's error body may quote the request's headers back (a 401 echoing `Authorization: Bearer ...`),
so every string the harness writes or prints passes through `redact`. It removes the values of the key
variables in the environment, the value of any Authorization / x-api-key / api-key header, bearer tokens
and `sk-`-shaped keys. The token patterns are shared with the importers' transcript filter
(harness.importers.redact), which counts what it removes; this one only removes.
"""

from __future__ import annotations

import os
import re
from typing import Any

REDACTED = "<redacted>"
KEY_ENVIRONMENT = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
MIN_SECRET_CHARS = 8  # shorter environment values ("x", "no-key") would blank ordinary words

# Shapes of provider and platform tokens, wherever they appear (also used by the transcript importers).
TOKEN_PATTERNS = (
    re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}(?![0-9A-Z])"),
    re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/=-]{16,}"),
)
# Header values as text quotes them: `Authorization: Bearer x`, `"x-api-key": "x"`, `api-key=x`.
_HEADER = re.compile(r"""(?i)(\b(?:authorization|x-api-key|api-key|api_key)["']?\s*[:=]\s*["']?)"""
                     r"""((?:bearer\s+|basic\s+)?[^\s"',;}]+)""")
_BEARER = re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{4,})")


def environment_secrets() -> tuple[str, ...]:
    """The key values set in this process, longest first (so a key containing another goes whole)."""
    values = {os.environ.get(name, "").strip() for name in KEY_ENVIRONMENT}
    return tuple(sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True))


def redact(text: str, extra: tuple[str, ...] = ()) -> str:
    """`text` with every secret replaced by <redacted>."""
    if not text:
        return text
    for secret in (*extra, *environment_secrets()):
        if len(secret) >= MIN_SECRET_CHARS:
            text = text.replace(secret, REDACTED)
    text = _HEADER.sub(lambda m: m.group(1) + REDACTED, text)
    text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    for pattern in TOKEN_PATTERNS:
        text = pattern.sub(REDACTED, text)
    return text


def redact_value(value: Any, extra: tuple[str, ...] = ()) -> Any:
    """A JSON-shaped value with every string in it (keys too) redacted."""
    if isinstance(value, str):
        return redact(value, extra)
    if isinstance(value, list):
        return [redact_value(v, extra) for v in value]
    if isinstance(value, dict):
        return {redact(k, extra) if isinstance(k, str) else k: redact_value(v, extra) for k, v in value.items()}
    return value
