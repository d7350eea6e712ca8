"""The price before the run: `run --estimate` per role and condition, `--max-usd` stopping before the first
request, and the whole cost by role after the run."""

from __future__ import annotations

import json

from harness.cases import discover
from harness.cli import main
from harness.results.folder import RunFolder
from harness.run.config import RunConfig, plan_run
from harness.run.estimate import estimate_run, over_budget, reaches_network
from harness.run.matrix import run_cases

from test_runner import make_case

MODEL = "anthropic:claude-haiku-4-5@emulator"


def test_estimate_prints_requests_tokens_and_dollars_per_role_and_sends_nothing(tmp_path, capsys):
    cases = tmp_path / "cases"
    make_case(cases, "small")
    out = tmp_path / "out"
    code = main(["run", "--cases-dir", str(cases), "--model", MODEL, "--judge", "openai:gpt-5-mini@emulator",
                 "--estimate", "--json", "--out", str(out), "--concurrency", "2"])
    assert code == 0 and not out.exists()  # nothing ran
    estimate = json.loads(capsys.readouterr().out)
    roles = {(line["role"], line["condition"]) for line in estimate["lines"]}
    assert {("summarizer", "compaction"), ("answerer", "compacted"), ("answerer", "floor")} <= roles
    assert any(role == "judge" for role, _ in roles)
    assert estimate["source"] == "modelled" and estimate["concurrency"] == 2
    assert 0 < estimate["usd_cache_on"] < estimate["usd_cache_off"]  # the probes on one context share its cache
    assert estimate["wall_time_s"] > 0


def test_the_estimate_counts_the_answer_requests_the_run_makes(tmp_path):
    make_case(tmp_path / "cases", "small")
    cases = discover(tmp_path / "cases")
    config = RunConfig(answerer="openai:gpt-4o@emulator", record_mode="all", cassettes=str(tmp_path / "cassettes"))
    plan = plan_run(config)
    estimated = estimate_run(cases, plan, "x").to_json(1)
    run = run_cases(cases, plan, RunFolder(tmp_path / "out"), run_id="r")
    answered = sum(line["requests"] for line in estimated["lines"] if line["role"] == "answerer")
    assert answered == run["aggregates"]["cost_by_role"]["answerer"]["calls"]
    assert not reaches_network(plan)  # the emulator is not a live run


def test_max_usd_stops_an_over_budget_run_before_the_first_request(tmp_path, capsys):
    cases = tmp_path / "cases"
    make_case(cases, "small")
    out = tmp_path / "out"
    code = main(["run", "--cases-dir", str(cases), "--model", MODEL, "--max-usd", "0.0001", "--out", str(out)])
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "--max-usd 0.0001" in err and "nothing was sent" in err and "Traceback" not in err


def test_a_model_with_no_price_is_never_within_a_budget(tmp_path):
    make_case(tmp_path / "cases", "small")
    plan = plan_run(RunConfig(answerer="openai:local@http://127.0.0.1:9/v1"))
    estimate = estimate_run(discover(tmp_path / "cases"), plan, "local")
    assert "no price" in over_budget([estimate], 100.0)


def test_the_run_reports_its_cost_by_role_with_the_answerers_cache_share(tmp_path, capsys):
    cases = tmp_path / "cases"
    make_case(cases, "small")
    out = tmp_path / "out"
    assert main(["run", "--cases-dir", str(cases), "--answerer", MODEL, "--record-mode", "all", "--cassettes",
                 str(tmp_path / "cassettes"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "cost by role:" in printed and "answerer" in printed and "modelled" in printed
    report = (out / "report.md").read_text()
    assert "### Cost by role" in report and "| answerer | " + MODEL in report
    roles = json.loads((out / "run.json").read_text())["aggregates"]["cost_by_role"]
    assert roles["summarizer"]["source"] == "builtin" and roles["answerer"]["source"] == "modelled"
    assert roles["answerer"]["usd"] > 0 and roles["answerer"]["cache_read_share"] is not None


def test_an_estimate_needs_no_key_and_the_run_still_does(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    cases = tmp_path / "cases"
    make_case(cases, "small")
    args = ["run", "--cases-dir", str(cases), "--answerer", "anthropic:claude-sonnet-4-6", "--out", str(tmp_path / "o")]
    assert main([*args, "--estimate", "--json"]) == 0  # priced offline, before anyone has a key
    assert json.loads(capsys.readouterr().out)["usd_cache_on"] > 0
    assert main(args) == 2 and "ANTHROPIC_API_KEY is not set" in capsys.readouterr().err
