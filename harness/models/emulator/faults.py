"""What the emulator answers with instead of a reply: injected faults, and request errors as HTTP errors."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

FAULT_KINDS = ("429", "500", "529", "400", "401", "timeout", "malformed", "truncate", "compaction_unavailable",
               "drop_compaction")


@dataclass(frozen=True)
class Fault:
    kind: str  # one of FAULT_KINDS
    retry_after: float | None = None  # seconds, sent as retry-after for 429/5xx


class EmulatorError(Exception):
    """A request the emulator answers with a provider-shaped HTTP error (bad request, no route, a fault)."""

    def __init__(self, status: int, kind: str, message: str, retry_after: float | None = None, *,
                 code: str | None = None, param: str | None = None):
        super().__init__(message)
        self.status, self.kind, self.message, self.retry_after = status, kind, message, retry_after
        # Anthropic's error.details.error_code (its typed errors); OpenAI's error body carries code and param
        self.code, self.param = code, param


class EmulatorTimeout(Exception):
    """The emulator 'hangs': the transport raises a read timeout, the server drops the connection."""


# The faults answered with an HTTP error: kind -> (status, provider error type, message).
STATUS_FAULTS = MappingProxyType({
    "429": (429, "rate_limit_error", "Rate limited (injected)"),
    "500": (500, "api_error", "Internal server error (injected)"),
    "529": (529, "overloaded_error", "Overloaded (injected)"),
    "400": (400, "invalid_request_error", "Bad request (injected)"),
    "401": (401, "authentication_error", "invalid x-api-key (injected)"),
    "compaction_unavailable": (529, "overloaded_error", "Compaction is temporarily unavailable (injected)"),
})
# Faults that carry Anthropic's typed error code.
FAULT_CODES = MappingProxyType({"compaction_unavailable": "compaction_unavailable"})


def fault_error(fault: Fault) -> EmulatorError:
    status, kind, message = STATUS_FAULTS[fault.kind]
    return EmulatorError(status, kind, message, fault.retry_after, code=FAULT_CODES.get(fault.kind))
