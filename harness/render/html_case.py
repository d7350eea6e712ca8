"""One case of report.html: the session's timeline (tokens per send, the window and reserve lines, each
compaction's drop and head/tail split), its compactions, the summary text at each probe point, and its probes
with question, expected facts, each condition's answer and grade, lost probes first."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from harness.probes import CONDITIONS
from harness.render.lost import is_lost
from harness.render.markup import Cell, num, paragraph, section, table, verdict
from harness.render.timeline import timeline_svg


def case_file(folder: Path | None, key: str) -> dict[str, Any]:
    """The case file (contexts and timeline live there, not in run.json); empty when absent."""
    path = folder / "cases" / f"{key}.json" if folder is not None else None
    return json.loads(path.read_text(encoding="utf-8")) if path is not None and path.exists() else {}


def case_section(key: str, record: dict[str, Any], grade: str, folder: Path | None) -> str:
    title = f"{key} ({record.get('pool', '-')})"
    if record.get("status") != "ok":
        return section(f"case-{key}", title, paragraph(f"error: {record.get('error')}", "fail"), cls="case")
    details = case_file(folder, key)
    events = record.get("events", [])
    facts = (f"{record['messages']} messages, {len(events)} compactions, "
             f"{sum(1 for p in record['probes'] if is_lost(p, grade))} lost probes")
    return section(f"case-{key}", title, paragraph(facts, "muted"), timeline_plot(details.get("timeline"), events),
                   compactions_table(events), summaries(details.get("contexts") or {}),
                   probes_table(record["probes"], grade), cls="case")


def timeline_plot(timeline: dict[str, Any] | None, events: list[dict[str, Any]]) -> str:
    if not timeline or not timeline.get("sends"):
        return paragraph("no timeline (a run written before timelines were kept)", "muted")
    return f'<div class="plot">{timeline_svg(timeline, events)}</div>'


def compactions_table(events: list[dict[str, Any]]) -> str:
    if not events:
        return paragraph("No compaction: the session never reached the policy's trigger under its window.", "muted")
    rows = [[num(e["number"]), num(e["send_index"]), Cell(f"{e['head_start']}..{e['tail_start']}"),
             num(e["turns_kept"]), num(e["steps_kept"]), num(e["tokens_before_true"]), num(e["tokens_after_true"]),
             num(e["summary_tokens"]), num(e.get("summary_budget_tokens") or None), Cell(e["source"])]
            for e in events]
    return "<h3>Compactions</h3>" + table(("#", "send", "head..tail", "turns kept", "steps kept", "before (true)",
                                           "after (true)", "summary tokens", "summary budget", "source"), rows)


def summaries(contexts: dict[str, Any]) -> str:
    """The summary the answerer saw at each probe point (the one in force there)."""
    parts = [f"<details><summary>summary at {escape(point)} (after {c['compactions']} compactions, "
             f"{c['true_tokens']} context tokens)</summary><pre class=\"summary\">{escape(c['summary'])}</pre>"
             f"</details>" for point, c in contexts.items() if c.get("summary")]
    return "<h3>Summaries</h3>" + "\n".join(parts) if parts else ""


def probes_table(probes: list[dict[str, Any]], grade: str) -> str:
    ordered = sorted(probes, key=lambda p: not is_lost(p, grade))  # lost first, otherwise in case order
    rows, attributes = [], []
    for probe in ordered:
        conditions = probe.get("conditions") or {}
        row: list[str | Cell] = [Cell(probe["id"]), Cell(probe["kind"]), Cell(probe["at"]),
                                 Cell(probe.get("question") or "-"), Cell("; ".join(probe.get("expected") or ()) or "-")]
        for name in CONDITIONS:
            found = conditions.get(name, {})
            row += [verdict(found.get(grade)), Cell(found.get("answer") or "-", "answer")]
        rows.append(row)
        attributes.append(' class="lost"' if is_lost(probe, grade) else "")
    headers = ("probe", "kind", "at", "question", "expected",
               *(h for c in CONDITIONS for h in (f"{c} ({grade})", f"{c} answer")))
    return "<h3>Probes</h3>" + table(headers, rows, row_attributes=attributes)
