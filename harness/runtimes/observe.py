"""What a runtime did, as the server saw it: every request in order, classified, with the reply it got and how
many script steps had been used around it. The scripted model answers; this wrapper only watches, so what is
captured is exactly what the runtime sent and received."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field

from harness.models.base import ModelRequest
from harness.models.emulator.faults import EmulatorError, EmulatorTimeout
from harness.models.emulator.reply import Exchange, Reply
from harness.scripted.model import ScriptedModel


@dataclass(frozen=True)
class Observed:
    seq: int
    kind: str  # "turn" | "compaction" | "side"
    request: ModelRequest
    headers: dict[str, str]
    used_before: int  # script steps used when the request arrived
    reply: str | None  # the reply's text (None: the request was refused, e.g. a drift)
    error: str | None = None
    fault: str | None = None  # the fault injected instead of its reply (harness.scripted.faults)
    digest: str = ""  # of a summarization request's body as sent: identical retries share it ("" for the others)
    at: float = 0.0  # when it arrived (time.monotonic)
    wire: str = ""  # the exchange's wire (openai, responses, anthropic, gemini)
    payload: dict | None = field(default=None, repr=False, compare=False)  # the body as sent (the server keeps it too)


class Observer:
    """The emulator's responder: the scripted model, watched."""

    def __init__(self, model: ScriptedModel):
        self.model = model
        self.seen: list[Observed] = []
        self._lock = threading.Lock()

    def __call__(self, request: ModelRequest, exchange: Exchange) -> Reply:
        kind = self.model.signatures.classify(request, exchange.headers)
        before, at = self.model.used, time.monotonic()
        try:
            reply = self.model(request, exchange)
        except EmulatorError as exc:
            self._keep(kind, request, exchange, (before, at), None, exc.message)
            raise
        except EmulatorTimeout:  # an injected timeout: the connection is closed with nothing sent
            self._keep(kind, request, exchange, (before, at), None, "no reply (injected timeout)")
            raise
        self._keep(kind, request, exchange, (before, at), reply.text, None)
        return reply

    def _keep(self, kind: str, request: ModelRequest, exchange: Exchange, when: tuple[int, float],
              reply: str | None, error: str | None) -> None:
        fault = self.model.injected(request)
        # of summarization requests only (their retries are what faults.py counts); keys sorted: a retry may
        # send a map's keys in another order (Codex does)
        digest = hashlib.sha256(json.dumps(exchange.payload, sort_keys=True).encode()).hexdigest()[:16] \
            if kind == "compaction" else ""
        with self._lock:
            self.seen.append(Observed(len(self.seen) + 1, kind, request, dict(exchange.headers), when[0], reply,
                                      error, fault, digest, when[1], exchange.wire, exchange.payload))
