"""A request that fails for good loses only what needed it (issue 17.6), through the real OpenAI SDK over the
emulator with injected faults: a persistent 500 on the second summarizer call keeps the probes before that
compaction and records the failure on the later ones; a failed answer (also the oracle ceiling's) or judge
request costs one condition's answer grade; run.json counts them, the reports show them, `--resume` asks
again and `gate` does not pass quietly; a cassette miss stays the whole case's error."""

from __future__ import annotations

import json

import pytest

from harness.cases import discover
from harness.cli import main
from harness.models.emulator import Emulator, EmulatorTransport, Fault
from harness.render.html import report_html
from harness.render.run import write_markdown
from harness.results.folder import RunFolder
from harness.run.config import RunConfig
from harness.run.matrix import run_cases
from test_runner import make_case

EMULATED = "openai:gpt-5@emulator"
SESSION = [{"role": "system", "content": "You are a coding agent."},
           {"role": "user", "content": "Use pnpm, not npm. The port is 9090."}]
for _i in range(6):  # six turns with a long tool output each: two compactions in a 2,000-token window
    SESSION += [{"role": "assistant", "content": f"Reading part {_i}.",
                 "tool_calls": [{"id": f"c{_i}", "name": "read_file", "arguments": {"path": f"src/part{_i}.ts"}}]},
                {"role": "tool", "tool_call_id": f"c{_i}",
                 "content": f"export const PART{_i} = {_i};\n" + "// filler line\n" * 150},
                {"role": "assistant", "content": f"Part {_i} read."},
                {"role": "user", "content": f"Next, part {_i + 1}."}]
PROBES = """
[[probe]]
id = "early"
kind = "constraint"
question = "What did the user say to use instead of npm?"
all = ["pnpm"]
planted_at = 1
at = "compaction:1"

[[probe]]
id = "late"
kind = "constraint"
question = "What did the user say to use instead of npm?"
all = ["pnpm"]
planted_at = 1
"""


class FailingRequests(Emulator):
    """The emulator answering 500 to the POSTs numbered in `failing` (1-based), every other one as usual."""

    def __init__(self, failing: set[int] | range) -> None:
        super().__init__()
        self.failing, self.posts = failing, 0

    def handle(self, method, path, body, headers=None):
        if method == "POST":
            self.posts += 1
            if self.posts in self.failing:
                self.faults.appendleft(Fault("500"))
        return super().handle(method, path, body, headers)


@pytest.fixture
def cases(tmp_path):
    make_case(tmp_path / "cases", "multi", session=SESSION, probes=PROBES)
    return tmp_path / "cases"


def emulate(monkeypatch, emulator: Emulator) -> None:
    monkeypatch.setattr("harness.models.emulator.EmulatorTransport", lambda: EmulatorTransport(emulator))


def run_with(tmp_path, cases, out: str, **config) -> dict:
    options = {"record_mode": "new", "cassettes": str(tmp_path / f"cassettes-{out}"), "retries": 1, **config}
    return run_cases(discover(cases), RunConfig(**options), RunFolder(tmp_path / out), run_id="r")


def test_a_failed_summarizer_call_keeps_the_earlier_probes_and_records_the_failure_on_the_later(
        tmp_path, cases, monkeypatch):
    emulator = FailingRequests(range(2, 100))  # the second summarizer call, and each of its retries
    emulate(monkeypatch, emulator)
    run = run_with(tmp_path, cases, "out", summarizer=EMULATED)
    case = run["cases"]["multi"]
    probes = {p["id"]: p for p in case["probes"]}
    assert emulator.posts == 3  # one success, then the failing call and its one retry: nothing after it
    assert case["status"] == "ok" and len(case["events"]) == 1
    assert probes["early"]["valid"] and probes["early"]["conditions"]["compacted"]["retained"] is True
    failure = {"request": "summarizer", "compaction": 2,
               "error": "openai:gpt-5@emulator: HTTP 500: Internal server error (injected)"}
    assert probes["late"]["failure"] == failure and "conditions" not in probes["late"]
    assert case["failure"] == failure
    aggregates = run["aggregates"]
    assert aggregates["failed_requests"] == {"probes": 1, "ungraded": 1,
                                             "cases": {"multi": [{"probe": "late", "at": "end", **failure}]}}
    assert aggregates["invalid_probes"] == [] and aggregates["valid_probes"] == 1  # counted as failed, not invalid
    assert aggregates["headline"]["retained"]["groups"]["invalid"] == 0
    write_markdown(run, tmp_path / "report.md")
    report = (tmp_path / "report.md").read_text()
    assert "### Failed requests" in report and "multi/late at end: compaction 2's summarizer request failed" in report
    assert "1 lost to failed requests (not graded)" in report and "the rest are invalid" not in report
    assert "failed request: multi/late at end: compaction 2&#x27;s summarizer" in report_html(run)


def test_a_failed_answer_costs_only_that_conditions_answer(tmp_path, cases, monkeypatch):
    emulator = FailingRequests({1, 2})  # the first answer request (probe early, condition compacted) and its retry
    emulate(monkeypatch, emulator)
    run = run_with(tmp_path, cases, "out", answerer=EMULATED)
    probes = {p["id"]: p for p in run["cases"]["multi"]["probes"]}
    compacted = probes["early"]["conditions"]["compacted"]
    assert compacted["failure"]["request"] == "answer" and "HTTP 500" in compacted["failure"]["error"]
    assert "answered" not in compacted and compacted["retained"] is True  # retained needs no request
    assert probes["early"]["conditions"]["full"]["answered"] is True  # the other conditions were answered
    assert "failure" not in json.dumps(probes["late"])
    entries = run["aggregates"]["failed_requests"]["cases"]["multi"]
    assert entries == [{"probe": "early", "at": "compaction:1", "condition": "compacted", **compacted["failure"]}]
    answered = run["aggregates"]["headline"]["answered"]
    assert answered["tests_summary"]["total"] == 1  # only `late`: `early` is left out of the answer grades
    assert run["aggregates"]["headline"]["retained"]["tests_summary"]["total"] == 2


def test_run_exits_1_and_resume_asks_the_failed_case_again(tmp_path, cases, monkeypatch, capsys):
    emulator = FailingRequests(range(2, 100))
    emulate(monkeypatch, emulator)
    out = tmp_path / "out"
    command = ["run", "--cases-dir", str(cases), "--summarizer", EMULATED, "--record-mode", "new",
               "--cassettes", str(tmp_path / "cassettes"), "--out", str(out), "--retries", "0"]
    assert main(command) == 1
    printed = capsys.readouterr().out
    assert "1 probe lost to failed requests in 1 case" in printed and "multi/late" in printed
    emulator.failing = set()  # the provider is back
    assert main([*command, "--resume"]) == 0
    run = json.loads((out / "run.json").read_text())
    assert run["aggregates"]["failed_requests"] == {"probes": 0, "ungraded": 0, "cases": {}}
    assert all("failure" not in p for p in run["cases"]["multi"]["probes"])


def test_gate_fails_on_failed_requests_and_refuses_a_baseline_from_them(tmp_path, cases, monkeypatch, capsys):
    emulator = FailingRequests(set())
    emulate(monkeypatch, emulator)
    common = ["run", "--cases-dir", str(cases), "--summarizer", EMULATED, "--record-mode", "new",
              "--cassettes", str(tmp_path / "cassettes"), "--retries", "0"]
    assert main([*common, "--out", str(tmp_path / "good")]) == 0
    baseline = tmp_path / "baseline.json"
    assert main(["gate", str(tmp_path / "good"), "--baseline", str(baseline), "--update-baseline"]) == 0
    emulator.failing, emulator.posts = range(2, 100), 0
    bad = ["run", "--cases-dir", str(cases), "--summarizer", EMULATED, "--record-mode", "new",
           "--cassettes", str(tmp_path / "fresh"), "--retries", "0", "--out", str(tmp_path / "bad")]
    assert main(bad) == 1  # fresh cassettes: the summarizer is asked again, and fails at its second call
    capsys.readouterr()
    junit, markdown = tmp_path / "gate.xml", tmp_path / "gate.md"
    assert main(["gate", str(tmp_path / "bad"), "--baseline", str(baseline), "--junit", str(junit),
                 "--markdown", str(markdown)]) == 1
    printed = capsys.readouterr().out
    assert "failed request: multi/late: compaction 2's summarizer request failed" in printed and "FAIL" in printed
    assert '<error message="compaction 2' in junit.read_text() and "### Failed requests (1" in markdown.read_text()
    assert main(["gate", str(tmp_path / "bad"), "--baseline", str(tmp_path / "new.json"), "--update-baseline"]) == 2
    error = capsys.readouterr().err
    assert "refusing to write a baseline from a partial run: 1 probe(s) or case(s) were not measured" in error
    assert "(first: multi/late: compaction 2's summarizer request failed" in error and "--allow-partial" in error
    assert not (tmp_path / "new.json").exists()
    # main's rule for partial runs holds: --allow-partial writes it, the lost probe standing as not valid
    assert main(["gate", str(tmp_path / "bad"), "--baseline", str(tmp_path / "new.json"), "--update-baseline",
                 "--allow-partial"]) == 0
    assert json.loads((tmp_path / "new.json").read_text())["probes"]["multi/late"]["valid"] is False


def test_gate_json_names_the_unmeasured_probe_and_never_pairs_it(tmp_path, cases, monkeypatch, capsys):
    emulator = FailingRequests(set())
    emulate(monkeypatch, emulator)
    common = ["run", "--cases-dir", str(cases), "--answerer", EMULATED, "--record-mode", "new", "--retries", "0"]
    assert main([*common, "--cassettes", str(tmp_path / "c1"), "--out", str(tmp_path / "good")]) == 0
    baseline = tmp_path / "baseline.json"
    assert main(["gate", str(tmp_path / "good"), "--baseline", str(baseline), "--update-baseline"]) == 0
    emulator.failing, emulator.posts = {1}, 0  # the first answer: probe early, compacted
    assert main([*common, "--cassettes", str(tmp_path / "c2"), "--out", str(tmp_path / "bad")]) == 1
    capsys.readouterr()
    assert main(["gate", str(tmp_path / "bad"), "--baseline", str(baseline), "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert list(verdict["failed_requests"]) == ["multi/early"]
    assert "the answer request failed" in verdict["failed_requests"]["multi/early"]
    assert verdict["failed_requests"]["multi/early"].endswith("(at compaction:1, compacted)")
    assert verdict["probes"]["multi/early"]["valid"] is False and verdict["paired"]["pairs"] == 1
    assert verdict["regressions"] == [] and verdict["status"] == "fail"


def test_a_failed_judge_request_names_the_judge(tmp_path, cases, monkeypatch):
    emulate(monkeypatch, FailingRequests(range(1, 1000)))  # every judge request fails; the answerer is builtin
    run = run_with(tmp_path, cases, "out", judge=EMULATED, retries=0, answerer_window=1_000_000)  # all sent
    graded = [g for p in run["cases"]["multi"]["probes"] for g in p["conditions"].values()]
    assert graded and all(g["failure"]["request"] == "judge" and "answered" not in g for g in graded)
    assert all("retained" in g for g in graded)


def test_a_failed_oracle_answer_is_unknown_never_invalid(tmp_path, cases, monkeypatch):
    emulate(monkeypatch, FailingRequests({2}))  # probe early: compacted, then its oracle ceiling's answer
    run = run_with(tmp_path, cases, "out", answerer=EMULATED, answerer_window=2500, retries=0)
    early = {p["id"]: p for p in run["cases"]["multi"]["probes"]}["early"]
    assert early["ceiling"] == "oracle" and early["conditions"]["full"]["failure"]["request"] == "answer"
    assert "answered" not in early["conditions"]["full"] and early["conditions"]["compacted"]["answered"] is True
    aggregates = run["aggregates"]
    assert aggregates["failed_requests"]["cases"]["multi"][0]["condition"] == "full"
    assert aggregates["invalid_probes"] == [] and aggregates["headline"]["answered"]["groups"]["invalid"] == 0
    assert aggregates["headline"]["answered"]["tests_summary"]["total"] == 1  # late alone
    assert aggregates["headline"]["retained"]["tests_summary"]["total"] == 2


def test_a_cassette_miss_is_the_cases_error_not_a_failed_request(tmp_path, cases, monkeypatch):
    emulate(monkeypatch, FailingRequests(set()))
    run_with(tmp_path, cases, "recorded", summarizer=EMULATED, cassettes=str(tmp_path / "cassettes"))
    replayed = run_with(tmp_path, cases, "replayed", summarizer=EMULATED, cassettes=str(tmp_path / "cassettes"),
                        record_mode="none", sections=("Goal", "Next steps"))  # every summarizer request changed
    case = replayed["cases"]["multi"]
    assert case["status"] == "error" and case["error"].startswith("cassette ") and "multi" in case["error"]
    assert replayed["aggregates"]["failed_requests"] == {"probes": 0, "ungraded": 0, "cases": {}}


def test_failures_read_back_as_written(tmp_path, cases, monkeypatch):
    from harness.results.schema import CaseRecord

    emulate(monkeypatch, FailingRequests({2, 3, 4}))
    run_with(tmp_path, cases, "out", summarizer=EMULATED)
    document = json.loads((tmp_path / "out" / "cases" / "multi.json").read_text())
    record = CaseRecord.from_json(document)
    assert record.to_json() == document and not record.complete
    assert record.outcome.failure.compaction == 2 and record.outcome.probes[1].failures[0][0] is None


def test_a_probe_invalid_only_because_its_ceiling_answer_failed_is_ungraded_not_invalid(tmp_path, cases, monkeypatch):
    """The aggregate's own rule, alone: a probe whose ceiling answer failed and whose ceiling text does not hold
    the fact either (so it reads invalid) is unknown, counted ungraded, never invalid; the same probe with its
    ceiling answer graded (no failure) is invalid."""
    from dataclasses import replace

    from harness.results.aggregate import Aggregator
    from harness.results.schema import CaseRecord

    emulate(monkeypatch, FailingRequests({2}))
    run_with(tmp_path, cases, "out", answerer=EMULATED, answerer_window=2500, retries=0)
    document = json.loads((tmp_path / "out" / "cases" / "multi.json").read_text())
    early = next(p for p in document["probes"] if p["id"] == "early")
    assert early["conditions"]["full"]["failure"] and early["valid"]  # valid here only by its retained grade
    early["valid"], early["conditions"]["full"]["retained"] = False, False
    record = CaseRecord.from_json(document)
    failed = Aggregator([record]).result()
    assert failed["invalid_probes"] == [] and failed["failed_requests"]["ungraded"] == 1
    probes = tuple(replace(p, conditions=tuple((n, replace(g, failure=None, answered=False) if n == "full" else g)
                                               for n, g in p.conditions)) if p.id == "early" else p
                   for p in record.outcome.probes)
    graded = Aggregator([replace(record, outcome=replace(record.outcome, probes=probes))]).result()
    assert graded["invalid_probes"] == ["multi/early"] and graded["failed_requests"]["ungraded"] == 0
