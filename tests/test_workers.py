"""Cases in worker processes (harness.run.workers): the same results as in this process, for offline models
only, and a Ctrl-C that leaves no worker behind."""

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from harness.cases import discover
from harness.cli import main
from harness.results.folder import RunFolder
from harness.results.folder import strip_volatile as _stable  # without what differs between identical runs
from harness.run import workers
from harness.run.config import RunConfig, plan_run
from harness.run.matrix import run_cases
from test_runner import make_case

ROOT = Path(__file__).parents[1]


def _case_files(folder: Path) -> dict[str, object]:
    return {p.name: _stable(json.loads(p.read_text())) for p in sorted((folder / "cases").glob("*.json"))}


def test_two_cases_in_processes_give_what_they_give_in_process(tmp_path):
    for name in ("b-late", "a-early"):
        make_case(tmp_path / "cases", name)
    cases = discover(tmp_path / "cases")
    here = run_cases(cases, RunConfig(), RunFolder(tmp_path / "here"), run_id="r", jobs=1)
    apart = run_cases(cases, RunConfig(), RunFolder(tmp_path / "apart"), run_id="r", jobs=2)
    assert here["cases"]["a-early"]["events"], "the tiny window must force a compaction"
    assert _stable(apart) == _stable(here)
    assert json.dumps(_stable(apart)) == json.dumps(_stable(here))  # the same order too
    assert _stable(json.loads((tmp_path / "apart" / "run.json").read_text())) == _stable(here)
    assert _case_files(tmp_path / "apart") == _case_files(tmp_path / "here")


def test_the_cli_reports_the_same_from_processes(tmp_path, capsys):
    for name in ("one", "two"):
        make_case(tmp_path / "cases", name)
    for jobs, out in (("1", "here"), ("2", "apart")):
        assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--jobs", jobs, "--out", str(tmp_path / out)]) == 0
    capsys.readouterr()
    here, apart = ((tmp_path / out / "report.md").read_text().splitlines()[1:] for out in ("here", "apart"))
    latency = [i for i, line in enumerate(here) if line.startswith("| builtin | on |")]  # measured times
    assert [line for i, line in enumerate(apart) if i not in latency] == \
        [line for i, line in enumerate(here) if i not in latency]
    assert _case_files(tmp_path / "apart") == _case_files(tmp_path / "here")


def test_processes_only_for_models_that_run_here(monkeypatch):
    monkeypatch.setattr(workers, "available_cores", lambda: 8)
    builtin = plan_run(RunConfig())
    assert workers.process_count(builtin, 29, None) == 8  # one per core by default
    assert workers.process_count(builtin, 3, None) == 3  # never more than the cases
    assert workers.process_count(builtin, 29, 2) == 2
    assert workers.process_count(builtin, 29, 1) == 0  # --jobs 1: in this process
    assert workers.process_count(builtin, 1, None) == 0  # one case: no worker to start
    replay = plan_run(RunConfig(model="openai:gpt-4o@emulator", record_mode="none"))
    assert workers.offline(replay) and workers.process_count(replay, 29, None) == 8
    recording = plan_run(RunConfig(model="openai:gpt-4o@emulator", record_mode="new"))
    assert not workers.offline(recording) and workers.process_count(recording, 29, None) == 0
    assert not workers.runs_here(RunConfig(model="openai:gpt-5", record_mode="once"))  # a live provider
    assert not workers.runs_here(RunConfig(runtime="pi"))  # a runtime's drive
    assert not workers.runs_here(RunConfig(model="nonsense"))  # preflight names it; no worker meanwhile


def test_a_worker_that_died_fails_its_case_as_an_error_would(tmp_path):
    case = discover(make_case(tmp_path / "cases", "a").parent)[0]
    future: Future = Future()
    future.set_exception(BrokenProcessPool("a child process terminated abruptly"))
    record = workers.result(future, case, 0)
    assert record.status == "error" and not record.complete
    assert "case.toml: the worker process running the case stopped" in record.error


def _group_size(group: int) -> int:
    """Processes in a process group (Linux /proc)."""
    count = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        count += int(fields[2]) == group  # state, ppid, pgrp
    return count


def _process_group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counts processes through /proc")
@pytest.mark.parametrize("when", [4, 2])
def test_ctrl_c_stops_the_workers_too(tmp_path, when):
    """Two long library cases in two workers: Ctrl-C ends the run (130) within a few seconds and no worker or
    fork server outlives it, whether it comes once they run (4 processes in the run's group) or while they
    start (2: the run and its fork server)."""
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", "--cases", "long-editor-sync", "--cases", "auto-test-triage", "--jobs", "2",
         "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _group_size(process.pid) < when and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0 if when == 4 else 0.0)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        took = time.monotonic() - sent
        for _ in range(50):  # the fork server ends when it sees the run's end
            if not _process_group_alive(process.pid):
                break
            time.sleep(0.1)
        assert not _process_group_alive(process.pid), "a worker outlived the run"
    finally:
        if _process_group_alive(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
    stderr = process.stderr.read().decode()
    assert process.returncode == 130, stderr[-500:]
    assert "Traceback" not in stderr, stderr[-2000:]
    print(f"stopped {took:.2f} s after SIGINT")
    assert took < 5.0, f"took {took:.2f} s after SIGINT"


def test_aggregates_do_not_depend_on_the_order_cases_finish_in(tmp_path):
    """Workers finish in any order; run.json's aggregates (the resampled intervals too) are those of the case-file
    order. Cases of different sizes and pass rates, folded in three orders."""
    from harness.results.aggregate import Aggregator
    from harness.results.schema import CaseRecord

    make_case(tmp_path / "cases", "a")
    run = run_cases(discover(tmp_path / "cases"), RunConfig(), RunFolder(tmp_path / "out"), run_id="r")
    document = json.loads((tmp_path / "out" / "cases" / "a.json").read_text())
    testing = next(p for p in document["probes"] if p["valid"] and not p["floor_survives"])
    assert run["aggregates"]["headline"]["answered"]["tests_summary"]["total"] == 1  # `testing` is that probe
    records = []
    for i in range(6):
        probes = []
        for j in range(i + 1):
            passed = (i * j + i) % 3 != 0
            compacted = {**testing["conditions"]["compacted"], "retained": passed, "answered": passed}
            probes.append({**testing, "id": f"p{j}", "conditions": {**testing["conditions"], "compacted": compacted}})
        records.append(CaseRecord.from_json({**document, "case": f"c{i}", "probes": probes}))
    orders = [records, records[::-1], records[3:] + records[:3]]
    results = [json.dumps(Aggregator(order).result(final=True), sort_keys=True) for order in orders]
    assert results[0] == results[1] == results[2]
    assert json.loads(results[0])["headline"]["answered"]["tests_summary"]["total"] == 21
