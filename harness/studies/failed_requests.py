"""The grades a run could not measure because a request failed for good (issue 17), read from run.json's
cases: gate fails on them and writes no baseline from them, so a provider's bad hour never reads as a pass."""

from __future__ import annotations

from typing import Any

from harness.failure import RequestFailure


def failed_requests(run: dict[str, Any]) -> dict[str, str]:
    """`case/probe` (or `case`, when the failed request cost no probe) -> what failed, one line; the probes of
    an errored case are the errored case's, not listed here."""
    out: dict[str, str] = {}
    for case in run["cases"].values():
        if case.get("status") != "ok":
            continue
        name = case["case"]
        for probe in case.get("probes", ()):
            for condition, failure in _failures(probe):
                where = f" (at {probe['at']}{f', {condition}' if condition else ''})"
                out.setdefault(f"{name}/{probe['id']}", f"{RequestFailure.from_json(failure).describe()}{where}")
        if case.get("failure") and not any(key.startswith(f"{name}/") for key in out):
            out.setdefault(name, RequestFailure.from_json(case["failure"]).describe())
    return dict(sorted(out.items()))


def _failures(probe: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    if "failure" in probe:
        return [(None, probe["failure"])]
    return [(name, grade["failure"]) for name, grade in (probe.get("conditions") or {}).items() if "failure" in grade]
