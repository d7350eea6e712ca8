"""A rate-limited provider (the emulator sending rate-limit headers and 429s) and a run that paces itself by
those headers: every case finishes, with no more than a handful of 429s."""

from __future__ import annotations

from dataclasses import replace

from harness.cases import discover
from harness.models.emulator import Emulator, EmulatorTransport
from harness.models.emulator.limits import RateLimits
from harness.models.ratelimit import RateLimiter
from harness.results.folder import RunFolder
from harness.run.config import RunConfig, plan_run
from harness.run.matrix import run_cases

from test_runner import make_case

ANSWERER = "openai:gpt-4o@emulator"


def limited_run(tmp_path, name: str, limiter: RateLimiter | None):
    cases = tmp_path / "cases"
    if not cases.exists():
        for case in ("a", "b", "c", "d"):
            make_case(cases, case)
    emulator = Emulator(limits=RateLimits(rpm=8, period_s=1.0))  # 8 requests a second, shared by every case
    config = RunConfig(answerer=ANSWERER, record_mode="all", cassettes=str(tmp_path / name / "cassettes"))
    plan = replace(plan_run(config), transports=((ANSWERER, EmulatorTransport(emulator)),),
                   limiters=((ANSWERER, limiter),) if limiter else ())
    run = run_cases(discover(cases), plan, RunFolder(tmp_path / name / "out"), run_id=name, concurrency=4)
    return run, emulator


def test_a_rate_limited_run_paces_itself_and_loses_no_case(tmp_path):
    limiter = RateLimiter()
    run, emulator = limited_run(tmp_path, "paced", limiter)
    assert run["aggregates"]["cases_ok"] == 4 and not run["aggregates"]["errors"]
    assert len(emulator.requests) == 4 * 9  # three probes under three conditions, per case
    assert emulator.limits.rejected <= 3, emulator.limits.rejected
    assert limiter.waited_s > 0  # it slowed down: 36 requests at 8 a second take more than the first burst


def test_without_the_headers_being_read_the_same_run_meets_more_429s(tmp_path):
    run, emulator = limited_run(tmp_path, "unpaced", None)
    paced, paced_emulator = limited_run(tmp_path, "paced", RateLimiter())
    assert emulator.limits.rejected > paced_emulator.limits.rejected
