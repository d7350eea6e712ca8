"""Every real Claude Code session in ../shared/real-sessions imports faithfully (issue 21).

The expected figures were counted from the raw JSON, not from the importer: `tool_use` blocks in the file,
`tool_use` ids with no `tool_result` anywhere (split by hand into the one abandoned leaf, fa line 14, whose
session resumed from line 13, and the two calls cut by an auto compaction, 4a line 792 and bd line 570), and
`system` entries with subtype `compact_boundary` with their `compactMetadata` (as SOURCES.md lists them)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest

from harness.importers import import_transcript

REAL = Path(__file__).parents[2].parent / "shared" / "real-sessions"
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason=f"the real sessions are not at {REAL}")

# file: (tool_use blocks in the file, abandoned calls, live calls with no result, [(trigger, preTokens), ...])
EXPECTED = {
    "entireio__cli/cd-95adddad32-0.jsonl": (206, 0, 0, [("auto", 156_699), ("auto", 155_241), ("auto", 155_413)]),
    "entireio__cli/f5-dab3d95bc1-0.jsonl": (218, 0, 0, [("auto", 155_577), ("manual", 82_572)]),
    "entireio__cli/43-2b48f6b6e6-0.jsonl": (248, 0, 0, [("auto", 167_471), ("auto", 167_448)]),
    "entireio__cli/8e-a9e4a4e751-0.jsonl": (201, 0, 0, [("auto", 155_031)]),
    "entireio__cli/72-0c20f08988-0.jsonl": (247, 0, 0, [("manual", 144_920)]),
    "Viniciuscarvalho__FitToday/63-e680c3c92a-0.jsonl": (178, 0, 0, [("auto", 167_017), ("auto", 167_024)]),
    "Viniciuscarvalho__FitToday/4a-8c33dc1758-0.jsonl": (123, 0, 1, [("auto", 167_669)]),
    "obsessiondb__chkit/fa-02322a2710-0.jsonl": (147, 1, 0, [("auto", 168_989)]),
    "dspurkayastha__Apollo/bd-84f5776d75-23.jsonl": (120, 0, 1, [("auto", 183_361)]),
    "ujuc__agent-stuff/22-81c24bf2ba-2.jsonl": (108, 0, 0, [("auto", 168_398)]),
}
# the three files whose boundary names a logical parent that was never written (SOURCES.md)
ORPHAN_BOUNDARY = {"4a-8c33dc1758-0.jsonl", "fa-02322a2710-0.jsonl", "bd-84f5776d75-23.jsonl"}


@lru_cache(maxsize=None)
def imported(name: str):
    session, report, _ = import_transcript(REAL / name)
    return session, report


def test_the_folder_holds_the_ten_files():
    assert sorted(str(p.relative_to(REAL)) for p in REAL.glob("*/*.jsonl")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_calls_missing_results_and_compactions_match_the_raw_file(name):
    uses, abandoned, missing, boundaries = EXPECTED[name]
    session, report = imported(name)
    assert report.format == "claude-code"
    assert report.tool_calls == uses - abandoned
    assert report.synthetic_results == missing
    assert report.pairs == uses - abandoned - missing
    assert report.entries["abandoned call"] == abandoned
    assert [(c.meta["trigger"], c.meta["preTokens"]) for c in session.compactions] == boundaries
    assert all(c.origin == "claude-code" for c in session.compactions)
    orphan = [bool(c.meta.get("logical_parent_missing")) for c in session.compactions]
    assert orphan == [Path(name).name in ORPHAN_BOUNDARY] * len(boundaries)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_message_names_a_raw_line_of_its_kind_and_every_line_has_a_fate(name):
    session, report = imported(name)
    raw = (REAL / name).read_text(encoding="utf-8").splitlines()
    assert sum(report.entries.values()) == sum(1 for line in raw if line.strip())
    for message in session.messages:
        entry = json.loads(raw[message.meta["source_line"] - 1])
        if message.role == "tool" and (message.meta or {}).get("synthetic"):
            assert entry["type"] == "assistant"  # the marker names the line of its call
        elif message.role == "tool":
            assert any(b.get("tool_use_id") == message.tool_call_id for b in entry["message"]["content"])
        elif (message.meta or {}).get("queued"):  # a prompt typed while the agent was busy: its enqueue line
            assert entry["type"] == "queue-operation" and entry["content"] == message.content
            assert message.ts == entry["timestamp"]
        else:
            assert entry["type"] == message.role
            assert message.ts == entry["timestamp"]
        if message.role == "assistant":
            assert set(message.usage) == {"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                                          "output_tokens"}
    for block in session.compactions:
        assert json.loads(raw[block.meta["boundary_line"] - 1])["subtype"] == "compact_boundary"
        assert json.loads(raw[block.meta["source_line"] - 1])["isCompactSummary"] is True
