"""Serving replays on loopback until stopped: the emulator with the replays as its responder. What each case
did is returned when the server stops (Ctrl-C, or SIGTERM turned into one by the caller)."""

from __future__ import annotations

from typing import Callable

from harness.models.emulator import Emulator, EmulatorServer
from harness.scripted.model import Outcome
from harness.scripted.replay import Replays


def scripted_emulator(replays: Replays, windows: dict[str, int] | None = None) -> Emulator:
    """An emulator whose every model request the replays answer (in process: wrap it in EmulatorTransport);
    `windows` (model or "*" -> tokens) enforces the runtime's declared window with the provider's own error."""
    return Emulator(responder=replays, windows=windows)


def serve_replays(replays: Replays, port: int, host: str = "127.0.0.1", ready: Callable[[str], None] | None = None,
                  windows: dict[str, int] | None = None) -> dict[str, Outcome]:
    """Serve until interrupted, then close the logs and return each case's outcome."""
    try:
        server = EmulatorServer(port, host, emulator=scripted_emulator(replays, windows))
    except OSError:
        replays.close()
        raise
    try:
        if ready is not None:
            ready(server.url)
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
        replays.close()
    return replays.outcomes()
