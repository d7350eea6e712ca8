"""Model-layer fixtures: no network, no provider keys from the environment (except in live tests)."""

from __future__ import annotations

import socket

import pytest

from harness.models.emulator import Emulator, EmulatorTransport

KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


class _Clock:
    """A settable clock for the cache simulators' TTLs."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(autouse=True)
def no_network(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every socket connection fails, except loopback for tests that ask for the `loopback` fixture."""
    if request.node.get_closest_marker("live"):
        return
    allow_loopback = "loopback" in request.fixturenames
    real_connect = socket.socket.connect

    def guarded_connect(self: socket.socket, address: object) -> None:
        host = address[0] if isinstance(address, tuple) else address
        if allow_loopback and host in ("127.0.0.1", "::1", "localhost"):
            return real_connect(self, address)
        raise OSError(f"network blocked in tests: connect to {address!r}")

    real_getaddrinfo = socket.getaddrinfo

    def guarded_getaddrinfo(host: object, *args: object, **kwargs: object):  # no DNS queries either
        if allow_loopback and host in ("127.0.0.1", "::1", "localhost"):
            return real_getaddrinfo(host, *args, **kwargs)
        raise socket.gaierror(f"network blocked in tests: resolve {host!r}")

    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", lambda self, address: guarded_connect(self, address))
    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def loopback() -> None:
    """Marks a test as allowed to connect to 127.0.0.1 (and nothing else)."""


@pytest.fixture
def clock() -> _Clock:
    return _Clock()


@pytest.fixture
def emulator(clock: _Clock) -> Emulator:
    return Emulator(clock=clock)


@pytest.fixture
def transport(emulator: Emulator) -> EmulatorTransport:
    return EmulatorTransport(emulator)
