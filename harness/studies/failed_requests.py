"""The grades a run could not measure because a request failed for good (issue 17), as gate names them: read
from run.json's `aggregates.failed_requests`, which the run derived once from its cases. Gate fails on them and
writes no baseline from them, so a provider's bad hour never reads as a pass."""

from __future__ import annotations

from typing import Any

from harness.failure import RequestFailure


def failed_requests(run: dict[str, Any]) -> dict[str, str]:
    """`case/probe` (or `case`, when the failed request cost no probe) -> what failed, one line; an older
    run.json without the group has none."""
    found = (run.get("aggregates", {}).get("failed_requests") or {}).get("cases", {})
    out: dict[str, str] = {}
    for case_key, entries in found.items():
        name = run["cases"].get(case_key, {}).get("case", case_key)
        for entry in entries:
            if entry.get("probe") is None:
                out.setdefault(name, RequestFailure.from_json(entry).describe())
                continue
            condition = f", {entry['condition']}" if entry.get("condition") else ""
            out.setdefault(f"{name}/{entry['probe']}",
                           f"{RequestFailure.from_json(entry).describe()} (at {entry['at']}{condition})")
    return dict(sorted(out.items()))
