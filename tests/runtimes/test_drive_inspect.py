"""Inspect AI 0.3.285's react agent (opt-in: `compaction-harness runtimes install inspect-summary`, then
`pytest -m runtime`; about four minutes here): four of its strategies driven on a real case in one run, each
compaction captured, checked and graded beside the others; edit and trim make no model call, and native's goes to
the provider's /responses/compact (the emulator answers it): those are found from the requests that follow."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from runtime_helpers import require

pytestmark = pytest.mark.runtime


def test_summary_edit_and_trim_compactions_are_captured_and_graded(tmp_path):
    require("inspect-summary")
    assert main(["run", "--runtime", "inspect-summary", "--runtime", "inspect-edit", "--runtime", "inspect-trim",
                 "--runtime", "inspect-native", "--cases", "edge-32k-window", "--out", str(tmp_path)]) == 0
    drives = {}
    for name in ("summary", "edit", "trim", "native"):
        folder = next(tmp_path.glob(f"runtime-inspect-{name}-*"))
        drive = json.loads((folder / "run.json").read_text())["cases"]["edge-32k-window"]["runtime"]
        assert drive["steps_used"] == drive["steps"] == 69, name  # every recorded step, no drift
        drives[name] = drive
        assert "Runtime compactions" in (folder / "report.md").read_text()
    summary, edit, trim, native = (drives[n]["compactions"] for n in ("summary", "edit", "trim", "native"))
    assert summary and all(c["calls"] == 1 and c["summary_chars"] > 0 for c in summary)
    prompt = summary[0]["request"]["last_user"].lstrip()
    assert prompt.startswith("You are a helpful AI assistant tasked with summarizing")
    for found in (edit, trim, native):  # no call of the scripted model: what changed is what the next request carried
        assert found and all(c["calls"] == 0 and c["request"] is None and c["summary_chars"] == 0 for c in found)
    assert all(c["covers"] == 0 for c in edit)  # edit keeps every message, its old tool results cleared
    assert all(c["covers"] > 0 and c["kept_ahead"] == 1 for c in trim)  # trim keeps the first prompt and a share
    assert all(c["kept_ahead"] >= 2 for c in native)  # the user messages and the provider's compaction item
    assert drives["native"]["requests"]["side"] == 1  # its one reasoning-summaries probe, answered aside
