"""Issue 9: the `recorded` policy replays a transcript's own compactions; `--at-recorded-points` compacts another
policy at the same points with the same budget. Expectations below are worked out by hand from the transcripts in
tests/data/recorded/ (message indices in the comments of each probe)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases import load_case
from harness.cli import main
from harness.compaction.compactor import Compactor
from harness.policy import PolicyConfig, make_policy
from harness.policy.recorded import AtRecordedPoints, recorded_points
from harness.results.folder import read_run
from harness.run.case import evaluate_case
from harness.run.config import RunConfig
from harness.compaction.summarizer import PlaceholderSummarizer
from harness.tokens import counter

DATA = Path(__file__).parent / "data" / "recorded"
# The two real MIT-licensed trajectories beside the checkout (../shared/samples), not part of it
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"


def probe(id: str, kind: str, facts: list[str], planted_at: int, at: str, anchor: tuple[str, ...] = ()) -> str:
    """A probe whose question names only its id; `anchor` names its referent as the texts word it (binding)."""
    quoted = ", ".join(f'"{f}"' for f in facts)
    anchors = f'anchor = [{", ".join(f"{chr(34)}{a}{chr(34)}" for a in anchor)}]\n' if anchor else ""
    return (f'\n[[probe]]\nid = "{id}"\nkind = "{kind}"\nquestion = "What about {id}?"\nall = [{quoted}]\n'
            f'{anchors}planted_at = {planted_at}\nat = "{at}"\n')


# Codex: messages 0 user (auth/session.py, port 7001), 1-3 read + KeyError token_ttl; compacted (kept: 0);
# 4 user (stage-db-42), 5-7 patch auth/settings.py token_ttl = 3600; compacted (kept: 0, 4); 8-10 tests.
CODEX_PROBES = [
    probe("port", "recall", ["7001"], 0, "compaction:1"),
    probe("error", "error", ["KeyError", "token_ttl"], 2, "compaction:1", ("missing setting", "comes from")),
    probe("host", "recall", ["stage-db-42"], 4, "compaction:2"),
    probe("ttl", "artifact", ["auth/settings.py", "3600"], 7, "compaction:2", ("added", "token_ttl")),
    probe("error-later", "error", ["KeyError"], 2, "compaction:2"),
]
# retained on (compacted, full, floor): the floor is the system prompt plus the kept user messages.
CODEX_EXPECTED = {
    "port": (True, True, True),  # in kept message 0 (and in summary 1): survives without a summary
    "error": (True, True, False),  # only summary 1 has it
    "host": (True, True, True),  # kept message 4
    "ttl": (True, True, False),  # summary 2
    "error-later": (False, True, False),  # summary 2 dropped it: lost at the second compaction
}
# Claude Code: 0 user (api/users.py, page size 50, URL /v1/users), 1-3 read; summary 1; 4 user (after_id),
# 5-8 edit + pytest tests/test_users.py; summary 2; 9-10 changelog. Nothing is kept beside a summary.
CLAUDE_PROBES = [
    probe("page-size", "recall", ["50"], 0, "compaction:1", ("page size",)),
    probe("url", "constraint", ["/v1/users"], 0, "compaction:1"),
    probe("cursor", "constraint", ["after_id"], 4, "compaction:2"),
    probe("test-file", "artifact", ["tests/test_users.py"], 7, "compaction:2", ("test",)),
    probe("page-size-later", "recall", ["50"], 0, "compaction:2", ("page size",)),
]
CLAUDE_EXPECTED = {
    "page-size": (True, True, False),
    "url": (False, True, False),  # summary 1 says "the public URL" without naming it
    "cursor": (False, True, False),
    "test-file": (True, True, False),
    "page-size-later": (False, True, False),  # summary of a summary: the size is gone
}
TRANSCRIPTS = {
    "codex": ("codex_two_compactions.jsonl", CODEX_PROBES, CODEX_EXPECTED, (4, 8), ((0,), (0, 4))),
    "claude-code": ("claude_code_two_compactions.jsonl", CLAUDE_PROBES, CLAUDE_EXPECTED, (4, 9), ((), ())),
}


def imported(tmp_path: Path, name: str, capsys=None) -> Path:
    file, probes, *_ = TRANSCRIPTS[name]
    folder = tmp_path / "cases" / f"{name}-rec"
    assert main(["cases", "import", str(DATA / file), "--out", str(folder)]) == 0
    with (folder / "case.toml").open("a", encoding="utf-8") as handle:
        handle.write("".join(probes))
    if capsys is not None:
        capsys.readouterr()
    return folder


def retained(record: dict) -> dict[str, tuple[bool, bool, bool]]:
    return {p["id"]: tuple(p["conditions"][c]["retained"] for c in ("compacted", "full", "floor"))
            for p in record["probes"]}


@pytest.mark.parametrize("name", sorted(TRANSCRIPTS))
def test_recorded_summaries_graded_at_their_points(tmp_path, name):
    _, _, expected, positions, kept = TRANSCRIPTS[name]
    case = load_case(imported(tmp_path, name))
    record = evaluate_case(case, RunConfig(policy="recorded"))
    assert retained(record) == expected
    events = record["events"]
    assert [e["send_index"] for e in events] == list(positions)
    assert [(e["head_start"], e["tail_start"]) for e in events] == [(0, positions[0]), positions]
    assert all(e["source"] == "recorded" and e["summary_budget_tokens"] == 0 for e in events)
    o200k = counter("o200k")
    assert [e["summary_tokens"] for e in events] == [o200k.count_text(c.content) for c in case.session.compactions]
    contexts = record["contexts"]
    for number, (position, kept_here, compaction) in enumerate(zip(positions, kept, case.session.compactions), 1):
        snapshot = contexts[f"compaction:{number}"]
        assert snapshot["summary"] == compaction.content  # the agent's own text, no harness header
        assert (snapshot["end"], snapshot["live_start"], tuple(snapshot["kept"])) == (position, position, kept_here)
    # the recorded summaries get the summary-level checks too, without our section check
    assert [s["compaction"] for s in record["summaries"]] == [1, 2]
    assert all(s["model"].startswith("recorded:") and s["sections_missing"] == [] for s in record["summaries"])


def test_codex_summary_copy_in_the_replacement_history_is_not_a_kept_message(tmp_path):
    case = load_case(imported(tmp_path, "codex"))
    points = recorded_points(case.session)
    assert [p.kept for p in points] == [(0,), (0, 4)]
    assert [p.summary for p in points] == [c.content for c in case.session.compactions]


@pytest.mark.parametrize("name", sorted(TRANSCRIPTS))
def test_at_recorded_points_compacts_where_and_as_big_as_the_recorded(tmp_path, name):
    case = load_case(imported(tmp_path, name))
    recorded = evaluate_case(case, RunConfig(policy="recorded"))["events"]
    ours = evaluate_case(case, RunConfig(policy="default", summarizer="builtin", at_recorded_points=True))
    where = [(e["send_index"], e["head_start"], e["tail_start"]) for e in ours["events"]]
    assert where == [(e["send_index"], e["head_start"], e["tail_start"]) for e in recorded]
    assert [e["summary_budget_tokens"] for e in ours["events"]] == [e["summary_tokens"] for e in recorded]
    assert all(e["source"] == "summarizer" for e in ours["events"])
    assert [tuple(ours["contexts"][f"compaction:{n}"]["kept"]) for n in (1, 2)] == list(TRANSCRIPTS[name][4])
    assert all(p["valid"] or p["at"] != "end" for p in ours["probes"])
    fixed = evaluate_case(case, RunConfig(policy="default", summarizer="builtin", at_recorded_points=True,
                                          summary_tokens=50))
    assert [e["summary_budget_tokens"] for e in fixed["events"]] == [50, 50]


def test_policy_tail_keeps_the_policys_own_tail_at_the_same_points(tmp_path):
    case = load_case(imported(tmp_path, "codex"))
    # tail cap 1: the default policy keeps only the newest step of the last turn (message 3 at point 4)
    policy = AtRecordedPoints(make_policy("default", PolicyConfig(272_000, tail_cap_tokens=1)), tail="policy")
    replay = Compactor(case.session, policy, PlaceholderSummarizer()).run()
    budgets = [counter("o200k").count_text(c.content) for c in case.session.compactions]
    assert [(e.send_index, e.tail_start, e.summary_budget_tokens) for e in replay.events] == \
           [(4, 3, budgets[0]), (8, 7, budgets[1])]
    assert policy.name == "default@recorded-points"
    assert not policy.prunes  # the hooks pass through: the wrapped default policy prunes nothing


def test_trigger_is_off_at_recorded_points(tmp_path):
    case = load_case(imported(tmp_path, "claude-code"))
    tiny = PolicyConfig(150, max_output_tokens=20, reserve_tokens=90, tail_turns=1, tail_cap_tokens=30,
                        summary_tokens=10)
    triggered = Compactor(case.session, make_policy("default", tiny), PlaceholderSummarizer()).run()
    # over a tiny window the session compacts on its own, elsewhere
    assert triggered.events and [e.send_index for e in triggered.events] != [4, 9]
    forced = Compactor(case.session, AtRecordedPoints(make_policy("default", tiny)), PlaceholderSummarizer()).run()
    assert [e.send_index for e in forced.events] == [4, 9]


def test_cli_recorded_and_ours_side_by_side(tmp_path, capsys):
    folder = imported(tmp_path, "codex", capsys)
    out = tmp_path / "runs"
    assert main(["run", "--cases", str(folder), "--cases-dir", str(tmp_path / "cases"), "--policy", "recorded",
                 "--policy", "default", "--summarizer", "builtin", "--at-recorded-points", "--out", str(out)]) == 0
    capsys.readouterr()
    ours = read_run(out / "default-builtin-builtin")
    assert ours["configuration"]["at_recorded_points"] == "recorded" and ours["configuration"]["summary_tokens"] is None
    assert "at_recorded_points" not in read_run(out / "recorded-builtin-builtin")["configuration"]
    comparison = (out / "comparison.md").read_text()
    assert "Per compaction point" in comparison and "#### codex-rec, compaction 2" in comparison
    assert "| recorded-builtin-builtin: recorded (the agent's own) | 8 | 4..8 (recorded) |" in comparison
    assert "error-later" in comparison
    report = (out / "recorded-builtin-builtin" / "report.md").read_text()
    assert "codex-rec, compaction 1" in report
    assert main(["compare", str(out / "recorded-builtin-builtin"), str(out / "default-builtin-builtin"),
                 "--markdown", str(tmp_path / "c.md")]) == 0
    assert "Per compaction point" in capsys.readouterr().out
    assert "at recorded points (recorded tail)" in (tmp_path / "c.md").read_text()


def test_policy_tail_and_budget_flags(tmp_path, capsys):
    folder = imported(tmp_path, "codex", capsys)
    out = tmp_path / "o"
    assert main(["run", "--cases", str(folder), "--cases-dir", str(tmp_path / "cases"), "--policy", "codex",
                 "--at-recorded-points=policy-tail", "--summary-tokens", "40", "--out", str(out)]) == 0
    run = read_run(out)
    assert run["configuration"]["at_recorded_points"] == "policy" and run["configuration"]["summary_tokens"] == 40
    assert [e["summary_budget_tokens"] for e in run["cases"]["codex-rec"]["events"]] == [40, 40]


def test_no_compaction_records_is_a_case_error(tmp_path, capsys):
    folder = tmp_path / "cases" / "plain"
    assert main(["cases", "import", str(Path(__file__).parent / "importers" / "data" / "openai.json"),
                 "--out", str(folder), "--window", "100000"]) == 0
    capsys.readouterr()
    out = tmp_path / "o"
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--policy", "recorded", "--out", str(out)]) == 1
    error = read_run(out)["cases"]["plain"]["error"]
    assert "no compaction records" in error


@pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"the real samples are not at {SAMPLES} (../shared is not part "
                                                  "of this checkout)")
def test_the_real_samples_have_no_compaction_records(tmp_path, capsys):
    samples = sorted(SAMPLES.glob("*.traj*"))
    assert len(samples) == 2, f"{SAMPLES} should hold the mini-swe-agent and SWE-agent trajectories"
    for sample in samples:
        folder = tmp_path / sample.name.split(".")[0].replace("_", "-")
        assert main(["cases", "import", str(sample), "--out", str(folder), "--window", "128000"]) == 0
        assert "compaction records: 0" in capsys.readouterr().out


def test_a_runtime_that_never_compacted_replays_uncompacted():
    """A real runtime's control (or a case it never had to compact) has no compaction records: the `recorded`
    policy it is replayed with then folds nothing, where an imported transcript without records is an error."""
    from dataclasses import replace

    from harness.errors import HarnessError
    from harness.session import Message, Session

    session = Session((Message("user", "hello"), Message("assistant", "hi")))
    config = PolicyConfig(context_window=100_000)
    with pytest.raises(HarnessError, match="no compaction records"):
        Compactor(session, make_policy("recorded", config), PlaceholderSummarizer()).run()
    replay = Compactor(session, replace(make_policy("recorded", config), none_is_fine=True),
                       PlaceholderSummarizer(), points={"end"}).run()
    assert replay.events == [] and replay.snapshots["end"].summary is None and replay.snapshots["end"].end == 2
