"""The faults part of the reports' runtime section: per case driven with `--summary-fault`, how the runtime met
the faults on its summarization calls (run.json's `runtime.faults`, harness.runtimes.faults): requests per
attempt, identical retries, outcomes, the wait, and the checks bounded_retry, no_identical_loop, surfaced and
no_hang (a dash: not owed, nothing was lost)."""

from __future__ import annotations

from typing import Any

from harness.render.markup import Cell, num, table, verdict

HEADERS = ("case", "fault", "requests per attempt", "identical retries", "outcomes", "s to next turn",
           "bounded_retry", "no_identical_loop", "surfaced", "no_hang", "how it ended")


def fault_rows(run: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for key, record in run["cases"].items():
        drive = record.get("runtime") or {}
        faults = drive.get("faults")
        if not faults:
            continue
        tried = faults["attempts"]
        rows.append([key, faults["summary_fault"], ", ".join(str(a["requests"]) for a in tried) or "none",
                     sum(a["identical_retries"] for a in tried), ", ".join(a["outcome"] for a in tried) or "-",
                     ", ".join("-" if a["seconds"] is None else f"{a['seconds']:g}" for a in tried) or "-",
                     faults["bounded_retry"], faults["no_identical_loop"], faults["surfaced"], faults["no_hang"],
                     drive.get("failure") or drive.get("stopped") or "every prompt done"])
    return rows


def _md(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "pass" if value else "FAIL"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_faults(run: dict[str, Any]) -> list[str]:
    rows = fault_rows(run)
    if not rows:
        return []
    return ["#### Faults on its summarization calls", "", f"| {' | '.join(HEADERS)} |", f"|{' --- |' * len(HEADERS)}",
            *(f"| {' | '.join(_md(v) for v in row)} |" for row in rows), ""]


def _cell(value: Any) -> Cell:
    if value is None or isinstance(value, bool):
        return verdict(value)
    return num(value) if isinstance(value, (int, float)) else Cell(str(value))


def faults_html(run: dict[str, Any]) -> str:
    rows = fault_rows(run)
    if not rows:
        return ""
    return "<h3>Faults on its summarization calls</h3>" + table(HEADERS, [[_cell(v) for v in row] for row in rows])
