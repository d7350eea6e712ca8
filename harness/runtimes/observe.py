"""What a runtime did, as the server saw it: every request in order, classified, with the reply it got and how
many script steps had been used around it. The scripted model answers; this wrapper only watches, so what is
captured is exactly what the runtime sent and received."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from harness.models.base import ModelRequest
from harness.models.emulator.faults import EmulatorError
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


class Observer:
    """The emulator's responder: the scripted model, watched."""

    def __init__(self, model: ScriptedModel):
        self.model = model
        self.seen: list[Observed] = []
        self._lock = threading.Lock()

    def __call__(self, request: ModelRequest, exchange: Exchange) -> Reply:
        kind = self.model.signatures.classify(request, exchange.headers)
        before = self.model.used
        try:
            reply = self.model(request, exchange)
        except EmulatorError as exc:
            self._keep(kind, request, exchange, before, None, exc.message)
            raise
        self._keep(kind, request, exchange, before, reply.text, None)
        return reply

    def _keep(self, kind: str, request: ModelRequest, exchange: Exchange, before: int, reply: str | None,
              error: str | None) -> None:
        with self._lock:
            self.seen.append(Observed(len(self.seen) + 1, kind, request, dict(exchange.headers), before, reply,
                                      error))
