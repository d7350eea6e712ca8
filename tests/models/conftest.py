"""Model-layer fixtures: a settable clock, the emulator and its transport."""

from __future__ import annotations

import pytest

from harness.models.emulator import Emulator, EmulatorTransport

class _Clock:
    """A settable clock for the cache simulators' TTLs."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> _Clock:
    return _Clock()


@pytest.fixture
def emulator(clock: _Clock) -> Emulator:
    return Emulator(clock=clock)


@pytest.fixture
def transport(emulator: Emulator) -> EmulatorTransport:
    return EmulatorTransport(emulator)
