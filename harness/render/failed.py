"""Failed requests as a reader sees them: one line per grade a request that failed for good cost (run.json's
`failed_requests`), so a partial case never reads as a finished one."""

from __future__ import annotations

from typing import Any, Mapping

from harness.failure import RequestFailure


def failed_request_lines(aggregates: Mapping[str, Any]) -> list[str]:
    """`case/probe (condition): what failed`; an older run.json without the group has none."""
    found = aggregates.get("failed_requests") or {}
    lines = []
    for case, entries in found.get("cases", {}).items():
        for entry in entries:
            where = case if entry.get("probe") is None else f"{case}/{entry['probe']}"
            if entry.get("at"):
                where += f" at {entry['at']}"
            if entry.get("condition"):
                where += f" ({entry['condition']})"
            lines.append(f"{where}: {RequestFailure.from_json(entry).describe()} (not graded)")
    return lines


def failed_request_count(aggregates: Mapping[str, Any]) -> str | None:
    """The one-line count beside the case count, or None when nothing failed."""
    found = aggregates.get("failed_requests") or {}
    if not found.get("cases"):
        return None
    probes = found.get("probes", 0)
    return (f"{probes} probe{'' if probes == 1 else 's'} lost to failed requests in {len(found['cases'])} "
            f"case{'' if len(found['cases']) == 1 else 's'} (not graded, and the run exits 1; run --resume asks again)")
