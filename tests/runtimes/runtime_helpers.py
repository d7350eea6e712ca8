"""Shared by the runtime tests: they drive real runtimes installed by `compaction-harness runtimes install NAME`
(.ci/run installs pi and codex); without one, its tests are skipped with the command that installs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.runtimes.install import Installed, installed

CASE = Path(__file__).parents[2] / "cases" / "edge-32k-window"


def require(name: str) -> Installed:
    try:
        return installed(name)
    except HarnessError as exc:
        pytest.skip(str(exc))
