"""A summarizer's margin over its strongest control (harness.studies.margins) for a reader: one markdown table,
overall and per kind, and the kinds where a control cannot be told from it."""

from __future__ import annotations

from typing import Any


def _interval(row: dict[str, Any]) -> str:
    found = row.get("cluster95")
    return "-" if found is None else f"[{found[0]:+.3f}, {found[1]:+.3f}]"


def _row(name: str, row: dict[str, Any]) -> str:
    verdict = "" if row["separated"] else " (**not separated**)"
    return (f"| {name} | {row['control']} | {row['probes']} | {row['summarizer']} | {row['control_passes']} | "
            f"{row['margin']:+d}{verdict} | {row['only_summarizer']} / {row['only_control']} | "
            f"{row['p_value']:.2g} | {_interval(row)} |")


def overall_line(summarizer: str, found: dict[str, Any]) -> str:
    """One line: the margin over the strongest control on every probe."""
    o = found["overall"]
    return (f"{summarizer}: {o['summarizer']} of {o['probes']} against the strongest control, {o['control']}, "
            f"{o['control_passes']}: margin {o['margin']:+d} ({o['only_summarizer']} probes only the summarizer "
            f"passes, {o['only_control']} only the control), McNemar p={o['p_value']:.2g}, case-clustered 95% "
            f"{_interval(o)}")


def margins_markdown(summarizer: str, found: dict[str, Any]) -> list[str]:
    if not found:
        return []
    lines = [f"#### Margin of {summarizer} over the strongest control", "", overall_line(summarizer, found) + ".", "",
             "| | strongest control | probes | summarizer | control | margin | discordant (summarizer / control) "
             "| McNemar p | case-clustered 95% (difference) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
             _row("all", found["overall"]), *(_row(kind, row) for kind, row in found["by_kind"].items()), ""]
    close = found["unseparated_kinds"]
    if close:
        lines += [f"Kinds where {summarizer} cannot be told from a control (p >= {found['separates_below']}): "
                  + "; ".join(f"{kind} ({', '.join(names)})" for kind, names in close.items()) + ".", ""]
    else:
        lines += [f"{summarizer} is told from every control in every kind.", ""]
    return lines
