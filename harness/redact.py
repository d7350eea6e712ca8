"""Secrets are removed where they enter, never by a pattern over a written file.

A key reaches the harness in four places: the provider key variables (sent only as a request header, which
no file keeps), a session or instruction a user points at, a provider's reply (a 200 body may quote a key, an
error body may quote the request's headers back) and an exception's text. Each entry removes it there, before
anything is built or serialised from it:

- `scrub` / `scrub_value`: content (sessions, replies). Removes the exact key values of the environment and
  key-shaped tokens (`sk-...`, `AKIA...`, `ghp_...`, a long token after `Bearer `). Ordinary prose that
  mentions a header or a token ("Bearer token", `x-api-key`, a probe id `c2-api-key`) stays byte for byte.
- `redact` / `redact_error_body`: error texts only, where a header quoted back is expected: the above plus
  the value after `Authorization:` / `x-api-key:` / `api-key=` and, in a JSON body, any field of that name.

The token shapes are shared with the importers' transcript filter (harness.importers.redact), which counts
what it removes; these only remove.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
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
# A literal each pattern above cannot match without: most strings hold none, and `in` is far cheaper than a
# pattern's scan (a session's every string is scrubbed as it is read).
_TOKEN_NEEDLES = ("sk-ant-", "sk-", "AKIA", "gh", "github_pat_", "Bearer ")
HEADER_FIELDS = frozenset({"authorization", "x-api-key", "api-key", "api_key", "apikey", "proxy-authorization"})
# Header values as an error text quotes them: `Authorization: Bearer x`, `"x-api-key": "x"`, `api-key=x`
# (a name inside a longer word, like the probe id `c2-api-key`, is no header).
_HEADER = re.compile(r"""(?i)((?<![\w-])(?:authorization|x-api-key|api-key|api_key)["']?\s*[:=]\s*["']?)"""
                     r"""((?:bearer\s+|basic\s+)?[^\s"',;}]+)""")
_BEARER = re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{4,})")


def environment_secrets() -> tuple[str, ...]:
    """The key values set in this process, longest first (so a key containing another goes whole)."""
    values = {os.environ.get(name, "").strip() for name in KEY_ENVIRONMENT}
    return tuple(sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True))


def scrub(text: str, extra: tuple[str, ...] = ()) -> str:
    """Content with the environment's key values and key-shaped tokens replaced by <redacted>."""
    return _scrub(text, _secrets(extra))


def scrub_value(value: Any, extra: tuple[str, ...] = ()) -> Any:
    """A JSON-shaped value with `scrub` applied to every string in it, keys too (structure untouched)."""
    secrets = _secrets(extra)
    return _walk(value, lambda text: _scrub(text, secrets), by_name=False)


def redact(text: str, extra: tuple[str, ...] = ()) -> str:
    """An error text with every secret replaced by <redacted>, including a header value quoted back."""
    return _redact(text, _secrets(extra))


def redact_error_body(value: Any, extra: tuple[str, ...] = ()) -> Any:
    """A provider's error body (parsed JSON) with `redact` on every string and header-named fields removed."""
    secrets = _secrets(extra)
    return _walk(value, lambda text: _redact(text, secrets), by_name=True)


def _secrets(extra: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(s for s in (*extra, *environment_secrets()) if len(s) >= MIN_SECRET_CHARS)


@lru_cache(maxsize=4096)  # a runtime's request log scrubs the same history again on every turn
def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    if not text:
        return text
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern, needle in zip(TOKEN_PATTERNS, _TOKEN_NEEDLES):
        if needle in text:
            text = pattern.sub(REDACTED, text)
    return text


def _redact(text: str, secrets: tuple[str, ...]) -> str:
    if not text:
        return text
    text = _HEADER.sub(lambda m: m.group(1) + REDACTED, _scrub(text, secrets))
    return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)


def _walk(value: Any, clean, by_name: bool) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [_walk(v, clean, by_name) for v in value]
    if isinstance(value, dict):
        return {clean(k) if isinstance(k, str) else k:
                REDACTED if by_name and isinstance(k, str) and k.lower() in HEADER_FIELDS and isinstance(v, str)
                else _walk(v, clean, by_name) for k, v in value.items()}
    return value
