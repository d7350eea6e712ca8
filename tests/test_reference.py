"""Record against the emulators, replay offline: the same run. And the committed reference run replays."""

import json
from pathlib import Path

import pytest

from harness.cases import discover, load_case
from harness.studies.gate import outcomes
from harness.results.folder import RunFolder, strip_volatile
from harness.run.config import RunConfig
from harness.run.matrix import run_cases

from test_runner import make_case

ROOT = Path(__file__).parents[1]
# What legitimately differs between a recording and its replay: the labels saying where figures came from.
SOURCE_LABELS = {"record_mode", "latency_source", "source"}


def comparable(data):
    if isinstance(data, dict):
        return {k: comparable(v) for k, v in data.items() if k not in SOURCE_LABELS}
    if isinstance(data, list):
        return [comparable(v) for v in data]
    return data


@pytest.mark.parametrize("spec", ["openai:gpt-5@emulator", "anthropic:claude-sonnet-4-6@emulator"])
def test_a_recorded_run_replays_identically_with_sockets_blocked(tmp_path, spec):
    for name in ("a", "b"):
        make_case(tmp_path / "cases", name)
    cases = discover(tmp_path / "cases")
    cassettes = str(tmp_path / "cassettes")
    recorded = run_cases(cases, RunConfig(summarizer=spec, answerer="builtin", record_mode="all", cassettes=cassettes),
                         RunFolder(tmp_path / "recorded"), run_id="r")
    assert recorded["aggregates"]["usage"]["calls"] >= 2
    replayed = run_cases(cases, RunConfig(summarizer=spec, answerer="builtin", record_mode="none",
                                          cassettes=cassettes), RunFolder(tmp_path / "replayed"), run_id="r")
    assert comparable(strip_volatile(replayed)) == comparable(strip_volatile(recorded))
    assert replayed["aggregates"]["cost"]["source"] == "recorded"
    assert recorded["aggregates"]["cost"]["source"] == "modelled"
    events = replayed["cases"]["a"]["events"]
    assert events and all(e["latency_source"] == "recorded" for e in events)


@pytest.mark.parametrize("provider,spec", [("openai", "openai:gpt-5@emulator"),
                                           ("anthropic", "anthropic:claude-sonnet-4-6@emulator")])
def test_the_committed_reference_run_replays_to_its_baseline(tmp_path, provider, spec):
    """One shipped case from the committed cassettes (the whole library is .ci/run's gate)."""
    baseline = json.loads((ROOT / "goldens" / "baselines" / f"reference-{provider}-emulator.json").read_text())
    case = load_case(ROOT / "cases" / "edge-32k-window")
    config = RunConfig(summarizer=spec, answerer="builtin", record_mode="none",
                       cassettes=str(ROOT / "goldens" / "cassettes"))
    run = run_cases([case], config, RunFolder(tmp_path / "replay"), run_id="r")
    assert run["cases"][case.id]["status"] == "ok", run["aggregates"]["errors"]
    assert run["cases"][case.id]["events"], "the 32K case compacts"
    expected = {k: v for k, v in baseline["probes"].items() if k.startswith(f"{case.id}/")}
    assert outcomes(run) == expected
