"""A runtime that stops is named on the terminal, in report.md and report.html with its reason and the next step
(issue 45), in place of the window advice that fits only a case too small to compact. The run document here is a
real run of a case that never compacts, with the stop a runtime's drive records (harness.runtimes.record) put in
it: the rendering alone is under test, without a runtime installed."""

from __future__ import annotations

import io
import json

from rich.console import Console

from harness.cli import main
from harness.render.html import report_html
from harness.render.run import write_markdown
from harness.render.terminal import render_summary
from test_runner import make_case

STOP = ('codex ended prompt 7 without asking for step 29: exited 1 on prompt 7: {"type":"turn.failed","error":'
        '{"message":"We are currently experiencing high demand"}}')


def never_compacting_run(tmp_path, capsys) -> dict:
    make_case(tmp_path / "cases", "roomy", window=1_000_000)
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    return json.loads((tmp_path / "out" / "run.json").read_text())


def with_stop(run: dict, fault: str | None) -> dict:
    drive = {"runtime": "codex", "version": "0.171.0", "seconds": 31.0, "steps": 69, "steps_used": 28,
             "requests": {"turn": 28, "compaction": 30, "side": 0}, "compactions_per_turn": 0.0, "compactions": [],
             "failure": None, "stopped": STOP, "stopped_position": 58,
             **({"faults": {"summary_fault": fault, "attempts": []}} if fault else {})}
    run["cases"]["roomy"]["runtime"] = drive
    return run


def terminal(run: dict) -> str:
    console = Console(file=io.StringIO(), width=2000)
    render_summary(run, console)
    return console.file.getvalue()


def test_without_a_runtime_the_window_advice_stands(tmp_path, capsys):
    assert "lower the window (--window N)" in terminal(never_compacting_run(tmp_path, capsys))


def test_a_stopped_runtime_is_named_with_its_reason_and_next_step_not_the_window(tmp_path, capsys):
    run = with_stop(never_compacting_run(tmp_path, capsys), None)
    shown = terminal(run)
    assert "lower the window" not in shown and "the runtime stopped in roomy" in shown
    assert "runtime codex 0.171.0 stopped on roomy after 28 of 69 steps: codex ended prompt 7" in shown
    assert "Next: runtime-logs/roomy/requests.jsonl in the run folder holds its last requests" in shown
    assert "the probes past the stop are graded failed" in shown
    write_markdown(run, tmp_path / "report.md")
    report = (tmp_path / "report.md").read_text()
    assert "lower the window" not in report and "stopped on roomy after 28 of 69 steps" in report
    assert "stopped on roomy after 28 of 69 steps" in report_html(run)


def test_a_stop_under_an_injected_fault_points_at_the_fault_grades(tmp_path, capsys):
    shown = terminal(with_stop(never_compacting_run(tmp_path, capsys), "500"))
    assert "stopped on roomy after 28 of 69 steps, under --summary-fault 500:" in shown
    assert "grades how it met the fault" in shown


def test_a_long_reason_is_cut_on_the_terminal(tmp_path, capsys):
    run = with_stop(never_compacting_run(tmp_path, capsys), None)
    run["cases"]["roomy"]["runtime"]["stopped"] = STOP + " | stderr " * 200
    line = next(line for line in terminal(run).splitlines() if line.startswith("runtime codex"))
    assert "…. Next:" in line and len(line) < 700
