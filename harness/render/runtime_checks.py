"""The runtime section of report.md and report.html: what only a running runtime shows (harness.runtimes.checks,
faults and canary), per compaction and per case, from run.json's `runtime` record of each case. A run without a
runtime has no such section."""

from __future__ import annotations

from typing import Any

from harness.render.markup import Cell, num, paragraph, section, table, verdict

COMPACTION_HEADERS = ("case", "compaction", "position", "mid-turn", "well_formed", "under_trigger", "resumed",
                      "user_kept", "canary in request", "canary kept out of summary")
FAULT_HEADERS = ("case", "fault", "attempts (requests each)", "identical retries", "outcomes", "seconds to next turn",
                 "bounded_retry", "no_identical_loop", "surfaced", "no_hang", "runtime stopped")
NOTE = ("Checked without a model on each compaction the runtime made (docs/runtimes.md): a check that does not "
        "apply is a dash. Canary columns appear with --canary, the fault table with --summary-fault.")


def _runtimes(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {key: record["runtime"] for key, record in run["cases"].items() if record.get("runtime")}


def _not(value: bool | None) -> bool | None:
    return None if value is None else not value


def _yes(value: bool | None) -> str | None:
    """A fact, not a check: yes or no (None: not recorded)."""
    return None if value is None else ("yes" if value else "no")


def compaction_rows(run: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for key, runtime in _runtimes(run).items():
        for c in runtime.get("compactions") or ():
            rows.append([key, c["number"], c["position"], _yes(c["mid_turn"]), c.get("well_formed"),
                         c.get("under_trigger"), c.get("resumed"), c.get("user_kept"), _yes(c.get("canary_in_request")),
                         _not(c.get("canary_in_summary"))])
    return rows


def fault_rows(run: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for key, runtime in _runtimes(run).items():
        faults = runtime.get("faults")
        if not faults:
            continue
        tried = faults["attempts"]
        rows.append([key, faults["summary_fault"], ", ".join(str(a["requests"]) for a in tried) or "none",
                     sum(a["identical_retries"] for a in tried), ", ".join(a["outcome"] for a in tried) or "-",
                     ", ".join("-" if a["seconds"] is None else f"{a['seconds']:g}" for a in tried) or "-",
                     faults["bounded_retry"], faults["no_identical_loop"], faults["surfaced"], faults["no_hang"],
                     runtime.get("failure") or "no"])
    return rows


def _md(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "pass" if value else "fail"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(headers: tuple[str, ...], rows: list[list[Any]]) -> list[str]:
    return [f"| {' | '.join(headers)} |", f"|{' --- |' * len(headers)}",
            *(f"| {' | '.join(_md(v) for v in row)} |" for row in rows), ""]


def markdown_runtime(run: dict[str, Any]) -> list[str]:
    if not _runtimes(run):
        return []
    lines = ["### What only a running runtime shows", "", NOTE, ""]
    compactions, faults = compaction_rows(run), fault_rows(run)
    lines += _md_table(COMPACTION_HEADERS, compactions) if compactions else ["No compaction was made.", ""]
    return lines + (["#### Faults on its summarization calls", "", *_md_table(FAULT_HEADERS, faults)] if faults else [])


def _cell(value: Any) -> Cell:
    if value is None or isinstance(value, bool):
        return verdict(value)
    return num(value) if isinstance(value, (int, float)) else Cell(str(value))


def runtime_section(run: dict[str, Any]) -> str:
    if not _runtimes(run):
        return ""
    compactions, faults = compaction_rows(run), fault_rows(run)
    parts = [paragraph(NOTE),
             table(COMPACTION_HEADERS, [[_cell(v) for v in row] for row in compactions]) if compactions
             else paragraph("No compaction was made.")]
    if faults:
        parts += ["<h3>Faults on its summarization calls</h3>", table(FAULT_HEADERS, [[_cell(v) for v in row]
                                                                                     for row in faults])]
    return section("runtime", "What only a running runtime shows", *parts)
