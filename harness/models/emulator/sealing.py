"""The emulator's opaque compaction payloads: OpenAI's `encrypted_content` (the summary sealed with the
emulator's own key, so no other provider or client can read it) and Anthropic's block `signature` (over the
block's content, encrypted_content and tool_changes, so an edited block is refused with the typed error).

Sealing with a fixed emulator key rather than a per-process table keeps the emulator stateless: a cassette
recorded in one process and extended in another still decrypts. Not cryptography anyone should rely on:
a keyed SHA-256 stream, enough that the text is not readable and any edit is detected.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import zlib
from typing import Any

from harness.models.emulator.faults import EmulatorError

_KEY = b"compaction-harness emulator sealing key"
_PREFIX = "emu1."


def _stream(nonce: bytes, length: int) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += hashlib.sha256(_KEY + nonce + counter.to_bytes(8, "big")).digest()
        counter += 1
    return bytes(out[:length])


def _tag(*parts: bytes) -> bytes:
    return hmac.new(_KEY, b"\0".join(parts), hashlib.sha256).digest()[:16]


def seal(text: str) -> str:
    """Opaque, deterministic (the same text seals the same way, so replays match)."""
    plain = zlib.compress(text.encode())
    nonce = hashlib.sha256(b"nonce" + plain).digest()[:12]
    cipher = bytes(a ^ b for a, b in zip(plain, _stream(nonce, len(plain))))
    return _PREFIX + base64.urlsafe_b64encode(nonce + _tag(nonce, cipher) + cipher).decode()


def unseal(token: Any) -> str:
    """The sealed text; an edited or foreign payload is the 400 OpenAI answers for bad encrypted content."""
    try:
        assert isinstance(token, str) and token.startswith(_PREFIX)
        raw = base64.urlsafe_b64decode(token[len(_PREFIX):].encode())
        nonce, tag, cipher = raw[:12], raw[12:28], raw[28:]
        assert hmac.compare_digest(tag, _tag(nonce, cipher))
        return zlib.decompress(bytes(a ^ b for a, b in zip(cipher, _stream(nonce, len(cipher))))).decode()
    except (AssertionError, ValueError, zlib.error, UnicodeDecodeError):
        raise EmulatorError(400, "invalid_request_error", "The encrypted content of a compaction item could "
                            "not be verified or decrypted.", code="invalid_encrypted_content") from None


def _digest(value: Any) -> bytes:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).digest()[:16]


def sign(content: str, encrypted: str | None, tool_changes: Any) -> str:
    """`emu1.` + the digests of content and tool_changes + a tag over them and encrypted_content."""
    content_digest, changes_digest = _digest(content), _digest(tool_changes)
    tag = _tag(content_digest, changes_digest, (encrypted or "").encode())
    return _PREFIX + base64.urlsafe_b64encode(content_digest + changes_digest + tag).decode()


def check_signature(block: dict[str, Any]) -> None:
    """Raise the typed error Anthropic documents for a forged signature, an edited content or edited
    tool_changes (in that order: a forged signature says nothing about the content)."""
    try:
        raw = base64.urlsafe_b64decode(str(block.get("signature") or "")[len(_PREFIX):].encode())
        assert str(block.get("signature")).startswith(_PREFIX) and len(raw) == 48
    except (AssertionError, ValueError):
        raise _invalid("compaction_signature_invalid", "compaction block signature is invalid") from None
    content_digest, changes_digest, tag = raw[:16], raw[16:32], raw[32:]
    if not hmac.compare_digest(tag, _tag(content_digest, changes_digest,
                                         (block.get("encrypted_content") or "").encode())):
        raise _invalid("compaction_signature_invalid", "compaction block signature is invalid")
    if _digest(block.get("content")) != content_digest:
        raise _invalid("compaction_content_mismatch",
                       "compaction block content differs from the text its signature recorded")
    if _digest(block.get("tool_changes")) != changes_digest:
        raise _invalid("compaction_tool_changes_mismatch",
                       "compaction block tool_changes differ from the ones returned with it")


def _invalid(code: str, message: str) -> EmulatorError:
    return EmulatorError(400, "invalid_request_error", message, code=code)
