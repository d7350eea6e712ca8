"""Faults injected on a runtime's summarization calls (`run --runtime X --summary-fault KIND[:N]`): what a
provider does to a compaction request on a bad day, in the request's own wire, so what is measured is how the
runtime meets it (retries, falls back, says so, or hangs).

- timeout: no reply; the connection is held `hold_s` seconds then closed with nothing sent (a client whose own
  timeout is shorter gives up first);
- 500: the wire's server-error shape (status 500, `api_error`);
- empty: a well-formed reply with no text (finish "stop");
- cut: the summarizer's reply cut halfway, with the wire's "length" finish (ran out of output budget).

N is how many summarization requests get it, counted from the first; without N every one does (the runtime
never gets a summary: whatever it does, it does for good). `:1` faults the first request only (a retry
succeeds)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from harness.errors import HarnessError
from harness.models import _tokens
from harness.models.emulator.faults import EmulatorTimeout, Fault, fault_error
from harness.models.emulator.reply import Reply

SUMMARY_FAULT_KINDS = ("timeout", "500", "empty", "cut")
DEFAULT_HOLD_S = 10.0  # how long a `timeout` holds the connection before closing it


@dataclass(frozen=True)
class SummaryFault:
    kind: str  # one of SUMMARY_FAULT_KINDS
    count: int | None = None  # the first N summarization requests; None: every one
    hold_s: float = DEFAULT_HOLD_S

    @property
    def spec(self) -> str:
        return self.kind if self.count is None else f"{self.kind}:{self.count}"


def parse_summary_fault(text: str, hold_s: float = DEFAULT_HOLD_S) -> SummaryFault:
    """`KIND` or `KIND:N`; a bad one is a usage error naming the flag."""
    kind, sep, count = text.strip().partition(":")
    if kind not in SUMMARY_FAULT_KINDS:
        raise HarnessError(f"--summary-fault {text!r}: KIND is one of {', '.join(SUMMARY_FAULT_KINDS)}")
    if sep and not (count.isdigit() and int(count) > 0):
        raise HarnessError(f"--summary-fault {text!r}: N (after the colon) is a whole number of requests, 1 or more")
    if hold_s <= 0:
        raise HarnessError(f"--summary-fault-hold {hold_s:g}: a number of seconds above 0")
    return SummaryFault(kind, int(count) if sep else None, hold_s)


class FaultPlan:
    """Which summarization requests are faulted: the first `count` to arrive (thread-safe)."""

    def __init__(self, fault: SummaryFault | None):
        self.fault = fault
        self.applied = 0
        self._lock = threading.Lock()

    def take(self) -> str | None:
        """The fault kind for the summarization request arriving now, or None."""
        if self.fault is None:
            return None
        with self._lock:
            if self.fault.count is not None and self.applied >= self.fault.count:
                return None
            self.applied += 1
            return self.fault.kind

    def before(self, kind: str) -> Reply | None:
        """Apply a fault that needs no summary: raise the error or the timeout, or return the empty reply."""
        if kind == "timeout":
            time.sleep(self.fault.hold_s if self.fault else DEFAULT_HOLD_S)
            raise EmulatorTimeout()
        if kind == "500":
            raise fault_error(Fault("500"))
        if kind == "empty":
            return Reply("", (), "stop")
        return None


def cut(reply: Reply) -> Reply:
    """The reply stopped halfway through, as at the max-output limit."""
    tokens = _tokens.encode(reply.text)
    return Reply(_tokens.decode(tokens[: len(tokens) // 2]), (), "length")
