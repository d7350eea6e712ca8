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


def small_tail_pi(pi: Installed, folder: Path) -> Path:
    """The shipped pi adapter keeping 4000 recent tokens (RUNTIMES.md's trial value), so a short cut of the case
    at 32K compacts real history: with pi's default 20000 kept, every message of the case's first turns fits in
    its tail and its summarization request at 32K holds an empty <conversation>."""
    text = Path(pi.adapter.source).read_text()
    text = text.replace('name = "pi"', 'name = "pi-small-tail"', 1)
    text = text.replace('npm = "@mariozechner/pi-coding-agent"\nbin = "pi"', f'bin = "{pi.binary}"', 1)
    text = text.replace('{"compaction": {"enabled": ${compaction_setting}}',
                        '{"compaction": {"enabled": ${compaction_setting}, "keepRecentTokens": 4000}', 1)
    assert 'name = "pi-small-tail"' in text and "keepRecentTokens" in text and str(pi.binary) in text
    path = folder / "pi-small-tail.toml"
    path.write_text(text)
    return path


def drive_whole(name: str, case_dir: Path, log_dir: Path):
    """The installed runtime `name` driven through the case with the builtin summarizer: every step used and
    every recorded tool output sent back. Returns (case, drive)."""
    from harness.cases import load_case
    from harness.models.builtin import BuiltinClient
    from harness.runtimes.driver import drive
    from harness.runtimes.record import sent_outputs

    found = require(name)
    case = load_case(case_dir)
    done = drive(case, found.adapter, found.binary, found.version, BuiltinClient(), log_dir)
    assert done.ok, done.failure
    assert done.outcome.used == done.outcome.steps
    assert set(sent_outputs(done)) == {m.tool_call_id for m in case.session.messages if m.role == "tool"}
    return case, done
