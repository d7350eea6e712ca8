"""Draft probes (issue 18, item 6): `probe-draft` proposes each candidate again just after the recorded
compaction that first folded its fact; `cases validate` flags a leftover draft; `run` skips drafts unless
--include-drafts."""

from __future__ import annotations

import tomllib
from pathlib import Path

from harness.cli import main
from harness.results.folder import read_run

from test_runner import make_case

DATA = Path(__file__).parent / "data" / "recorded"

DRAFT = """
[[probe]]
id = "unreviewed"
kind = "constraint"
question = "What did the user say to use instead of npm?"
all = ["pnpm"]
planted_at = 0
draft = true
"""


def test_probe_draft_proposes_probes_at_recorded_compactions(tmp_path, capsys):
    out = tmp_path / "cc"
    assert main(["cases", "import", str(DATA / "claude_code_two_compactions.jsonl"), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["cases", "probe-draft", str(out)]) == 0
    drafts = tomllib.loads(capsys.readouterr().out)["probe"]
    from harness.session import read_session

    session = read_session(out / "session.jsonl")
    covers = [c.covers for c in sorted(session.compactions, key=lambda c: c.position)]
    at_points = [p for p in drafts if p.get("at", "end").startswith("compaction:")]
    assert at_points, "a session with recorded compactions gets drafts at them"
    for probe in at_points:
        number = int(probe["at"].split(":")[1])
        low = max(covers[:number - 1], default=0)
        assert low <= probe["planted_at"] < covers[number - 1]  # the compaction that first folded the fact
        assert probe["draft"] is True and probe["id"].endswith(f"-at-c{number}")
    assert len({p["id"] for p in drafts}) == len(drafts)


def test_validate_flags_a_draft_and_run_skips_it_unless_asked(tmp_path, capsys):
    cases = tmp_path / "cases"
    make_case(cases, "drafty")
    with (cases / "drafty" / "case.toml").open("a", encoding="utf-8") as handle:
        handle.write(DRAFT)
    assert main(["cases", "validate", "--cases-dir", str(cases)]) == 2
    assert "probe unreviewed: draft = true" in capsys.readouterr().err
    assert main(["run", "--cases-dir", str(cases), "--out", str(tmp_path / "skip"), "--json"]) == 0
    assert "skipping 1 draft probe" in capsys.readouterr().err
    assert "unreviewed" not in {p["id"] for p in read_run(tmp_path / "skip")["cases"]["drafty"]["probes"]}
    assert main(["run", "--cases-dir", str(cases), "--out", str(tmp_path / "all"), "--json", "--include-drafts"]) == 0
    assert "unreviewed" in {p["id"] for p in read_run(tmp_path / "all")["cases"]["drafty"]["probes"]}
