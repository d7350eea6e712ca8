""""What the replay could not reproduce" in the reports: per case driven through a runtime, each kind of departure
(harness.scripted.departures) with how many there were, at which case messages, and what was sent instead."""

from __future__ import annotations

from typing import Any

from harness.render.markup import Cell, num, paragraph, table

HEADERS = ("what", "count", "case messages", "sent instead (the first)")
SHOWN = 12  # positions listed per kind; the rest are counted


def grouped(drive: dict[str, Any]) -> list[tuple[str, int, str, str]]:
    """(kind, count, positions, the first one's detail) per kind, in order of first appearance."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for item in drive.get("not_reproduced") or ():
        kinds.setdefault(item["kind"], []).append(item)
    rows = []
    for kind, items in kinds.items():
        positions = sorted({i["position"] for i in items})
        shown = ", ".join(map(str, positions[:SHOWN])) + (f", ... (+{len(positions) - SHOWN})"
                                                          if len(positions) > SHOWN else "")
        rows.append((kind, len(items), shown, items[0]["detail"]))
    return rows


def markdown_replay(case: str, drive: dict[str, Any]) -> list[str]:
    if "not_reproduced" not in drive:  # a run written before the list existed
        return []
    rows = grouped(drive)
    if not rows:
        return [f"What the replay could not reproduce in {case}: nothing.", ""]
    lines = [f"What the replay could not reproduce in {case}:", "", "| " + " | ".join(HEADERS) + " |",
             "|" + " --- |" * len(HEADERS)]
    lines += [f"| {kind} | {count} | {shown} | {detail.replace('|', '/')} |" for kind, count, shown, detail in rows]
    return lines + [""]


def replay_html(case: str, drive: dict[str, Any]) -> str:
    if "not_reproduced" not in drive:
        return ""
    rows = grouped(drive)
    if not rows:
        return paragraph(f"What the replay could not reproduce in {case}: nothing.")
    cells = [[Cell(kind), num(count), Cell(shown), Cell(detail)] for kind, count, shown, detail in rows]
    return paragraph(f"What the replay could not reproduce in {case}:") + table(HEADERS, cells)


__all__ = ["grouped", "markdown_replay", "replay_html"]
