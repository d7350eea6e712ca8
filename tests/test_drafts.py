"""Draft probes (issue 18, items 6 and 7): `probe-draft` proposes each candidate again just after the recorded
compaction that first folded its fact; `cases validate` flags a leftover draft; `run` skips drafts unless
--include-drafts; every proposed draft is sound (its items in the planted message, its examples graded right, the
builtin answerer passing it on the full history in a real `run`, its `anchor` beside its fact there), and `--show-dropped` lists the others."""

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


def _drafted(tmp_path, capsys, *extra: str, source: Path = DATA / "claude_code_two_compactions.jsonl") -> tuple[Path, str]:
    out = tmp_path / "cases" / "cc"
    assert main(["cases", "import", str(source), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["cases", "probe-draft", str(out), *extra]) == 0
    return out, capsys.readouterr().out


def test_every_proposed_draft_is_sound_and_passes_on_the_full_history_in_a_run(tmp_path, capsys):
    from harness.cases.draft_check import probe_of
    from harness.matching import Haystack, contains
    from harness.probes import anchor_problems, example_problems
    from harness.session import message_text, read_session

    out, printed = _drafted(tmp_path, capsys)
    drafts = tomllib.loads(printed)["probe"]
    assert {p["kind"] for p in drafts} >= {"artifact", "goal"}
    session = read_session(out / "session.jsonl")
    for draft in drafts:
        probe = probe_of(draft)
        planted = Haystack(message_text(session.messages[probe.planted_at]))
        assert all(any(contains(planted, a) for a in item) for item in probe.all), draft
        assert probe.accept and probe.reject and example_problems(probe) == [], draft
        assert probe.anchor and anchor_problems(probe, session) == [], draft  # its referent beside the fact
        question = Haystack(probe.question)
        assert not all(any(contains(question, a) for a in item) for item in probe.all), draft  # not given away
    with (out / "case.toml").open("a", encoding="utf-8") as handle:
        handle.write(printed)
    assert main(["run", "--cases-dir", str(out.parent), "--include-drafts", "--at-recorded-points",
                 "--out", str(tmp_path / "run"), "--json"]) == 0
    graded = read_run(tmp_path / "run")["cases"]["cc"]["probes"]
    assert sorted(p["id"] for p in graded) == sorted(p["id"] for p in drafts)
    assert all(p["valid"] for p in graded), [p["id"] for p in graded if not p["valid"]]


def test_show_dropped_lists_the_failed_candidates_with_their_reasons(tmp_path, capsys, monkeypatch):
    import harness.models.builtin as builtin
    from harness.models.base import ModelResponse, Usage

    class GoalBlind(builtin.BuiltinClient):
        """The builtin answerer, except that it cannot answer the goal question: that candidate fails its
        full-history check, whatever the builtin answers today."""

        def complete(self, request):
            if "first request" in request.messages[-1].content:
                return ModelResponse(text="I don't know.", usage=Usage(0, 0), latency_s=0.0, model="builtin",
                                     finish_reason="stop")
            return super().complete(request)

    monkeypatch.setattr(builtin, "BuiltinClient", GoalBlind)
    source = Path(__file__).parent / "importers" / "data" / "claude_code.jsonl"
    _, printed = _drafted(tmp_path, capsys, source=source)
    _, shown = _drafted(tmp_path / "again", capsys, "--show-dropped", source=source)
    kept, everything = tomllib.loads(printed)["probe"], tomllib.loads(shown)["probe"]
    dropped = everything[len(kept):]
    assert everything[:len(kept)] == kept and dropped, "this session has candidates that fail a check"
    assert f"# {len(dropped)} more candidates failed" in printed and "--show-dropped lists them" in printed
    assert shown.count("\n# dropped: ") == len(dropped) and all(p["draft"] is True for p in dropped)


def test_the_checks_name_what_is_wrong(tmp_path):
    from harness.cases.draft_check import draft_problem
    from harness.models.builtin import BuiltinClient
    from harness.session import Message, Session

    session = Session(system=None, messages=(
        Message("user", "Upgrade the gateway to Envoy 1.31 and keep the timeout at 45 seconds."),
        Message("assistant", "Done: Envoy 1.31 is in, timeout 45 seconds."),
    ))
    sound = {"id": "v", "kind": "recall", "question": "Which Envoy version did the user ask for?", "all": ["1.31"],
             "anchor": ["envoy"], "planted_at": 0, "accept": ["Envoy 1.31"], "reject": ["Envoy 1.30"]}
    client = BuiltinClient()
    assert draft_problem(session, sound, client) is None
    assert "is not in message 1" in draft_problem(session, {**sound, "all": ["Upgrade"], "planted_at": 1}, client)
    assert "accept example 'Envoy 1.30' fails" in draft_problem(session, {**sound, "accept": ["Envoy 1.30"]}, client)
    assert "no accept or no reject" in draft_problem(session, {**sound, "reject": []}, client)
    assert "no anchor" in draft_problem(session, {**sound, "anchor": []}, client)
    assert "stands within 40 words of none" in draft_problem(session, {**sound, "anchor": ["router"]}, client)
    wrong = {**sound, "question": "What timeout did the user set?", "all": ["Upgrade"],
             "accept": ["Upgrade"], "reject": ["45"]}
    assert draft_problem(session, wrong, client).startswith("fails on the full history: the builtin answered")
    assert "not before its point" in draft_problem(session, {**sound, "at": "compaction:1"}, client)
