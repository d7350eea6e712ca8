"""Codex 0.171.0 as its OpenAI users run it (opt-in, `pytest -m runtime`: a second two-minute Codex drive is
left out of CI, whose suite drives the local path): the builtin OpenAI provider at the harness's server compacts
remotely, a compaction_trigger item on the normal /responses stream answered with one sealed compaction item,
which comes back in its next input and is graded as the summary it carries."""

from __future__ import annotations

import json

import pytest

from harness.models.emulator.sealing import unseal
from runtime_helpers import CASE, drive_whole

pytestmark = pytest.mark.runtime


def test_codex_remote_compacts_through_the_provider_and_goes_on(tmp_path):
    _, done = drive_whole("codex-remote", CASE, tmp_path)
    assert done.compactions, "at the case's 32K window Codex compacts this case"
    logged = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    asked = [r for r in logged if r["kind"] == "compaction"]
    assert asked and all(r["path"].endswith("/responses") for r in asked)  # the normal stream, not /compact
    assert all(r["body"]["input"][-1] == {"type": "compaction_trigger"} for r in asked)
    for found in done.compactions:
        after = found.after.request if found.after is not None else None
        assert after is not None and found.summary.strip()
        assert any(m.content == found.summary for m in after.messages)  # the unsealed item, as the model reads it
    items = [item for r in logged if r["kind"] == "turn" for item in r["body"]["input"]
             if item.get("type") == "compaction"]
    assert items and all(unseal(item["encrypted_content"]).strip() for item in items)
    assert all("Goal" not in item["encrypted_content"] for item in items)  # it only ever held the sealed form
