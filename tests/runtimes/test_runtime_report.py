"""A runtime's drive in report.md and report.html (no runtime needed: a drive record as run.json keeps it), and
the stop a runtime's record names, as grading reads it."""

from __future__ import annotations

from harness.render.runtime import markdown_runtime, runtime_section
from harness.run.grading import Stopped

COMPACTION = {"number": 1, "position": 58, "mid_turn": True, "steps_before": 28, "calls": 1, "covers": 58,
              "kept_ahead": 8, "request": {"system": "You are a coding agent <b>", "last_user": "CHECKPOINT",
                                           "messages": 59, "tokens": 27862, "history": "items"},
              "summary_chars": 4878, "after_tokens": 5956, "well_formed": True, "under_trigger": False,
              "resumed": True, "user_kept": None}
DRIVE = {"runtime": "codex", "version": "0.171.0", "seconds": 68.0, "steps": 69, "steps_used": 40,
         "requests": {"turn": 40, "compaction": 1, "side": 0}, "compactions_per_turn": 0.125, "failure": None,
         "stopped": "codex ended prompt 9 without asking for step 41: overflow.", "stopped_position": 80,
         "probes_lost_to_cuts": ["port"], "compactions": [COMPACTION]}


def run_with(drive):
    return {"run_id": "r", "configuration": {"policy": "recorded", "model": "m", "summarizer_spec": "builtin",
                                             "answerer": "builtin", "cache": True},
            "cases": {"edge": {"status": "error", "error": "x", **({"runtime": drive} if drive else {})}},
            "aggregates": {"grade": "answered"}}


def test_markdown_names_each_compaction_its_failed_checks_and_the_stop():
    lines = "\n".join(markdown_runtime(run_with(DRIVE)))
    assert "**edge**: codex 0.171.0: 40 of 69 steps" in lines
    assert ("STOPPED before case message 80: codex ended prompt 9 without asking for step 41: overflow; probes lost "
            "to its own output cuts: port.") in lines
    assert "| 1 | 58 | yes | 28 | 27862 | items | 8 | 58 | 4878 | 5956 | FAILED: under_trigger |" in lines
    assert "Its summarization prompt (last user message): `CHECKPOINT`" in lines


def test_no_runtime_no_section():
    assert markdown_runtime(run_with(None)) == [] and runtime_section(run_with(None)) == ""


def test_html_section_escapes_the_prompt():
    html = runtime_section(run_with(DRIVE))
    assert 'id="runtime"' in html and "&lt;b&gt;" in html and "<b>" not in html
    assert "FAILED: under_trigger" in html


def test_the_stop_grading_reads():
    assert Stopped.of(DRIVE) == Stopped(80, DRIVE["stopped"])
    assert Stopped.of({**DRIVE, "stopped": None}) is None and Stopped.of(None) is None


def test_both_reports_list_what_the_replay_could_not_reproduce_the_window_and_the_cpu():
    departures = [{"position": 54, "kind": "unanswered", "detail": "an interrupt marker no assistant message answers: "
                                                                   "joined to the prompt it precedes (message 55)"},
                  {"position": 194, "kind": "trailing", "detail": "an interrupt marker at the session's end | x"},
                  *({"position": 100 + n, "kind": "queued", "detail": f"queued {n}"} for n in range(14))]
    drive = {**DRIVE, "not_reproduced": departures, "cpu_seconds": {"harness": 2.1, "runtime": 9.8},
             "window": {"mode": "recorded", "rule": "0.9 * window", "recorded_position": 162,
                        "context_at_point": 76019, "window": 84465, "calibration_seconds": 13.9}}
    lines = "\n".join(markdown_runtime(run_with(drive)))
    assert "What the replay could not reproduce in edge:" in lines
    assert "| unanswered | 1 | 54 | an interrupt marker no assistant message answers" in lines
    assert "| trailing | 1 | 194 | an interrupt marker at the session's end / x |" in lines  # a pipe cannot split it
    assert "| queued | 14 | 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, ... (+2) | queued 0 |" in lines
    assert "CPU s: harness 2.1, runtime 9.8" in lines
    assert "window 84,465 (--window recorded: its context before message 162" in lines
    html = runtime_section(run_with(drive))
    assert "What the replay could not reproduce in edge:" in html and "<td>unanswered</td>" in html
    nothing = "\n".join(markdown_runtime(run_with({**DRIVE, "not_reproduced": []})))
    assert "What the replay could not reproduce in edge: nothing." in nothing
    assert "could not reproduce" not in "\n".join(markdown_runtime(run_with(DRIVE)))  # an older run: not claimed
