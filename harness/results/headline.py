"""The headline of a run: the compacted pass rate over the probes that test the summary (EVALUATION.md), with
a Wilson and a case-clustered bootstrap interval, and every other probe in its own group beside it; how often
`retained` agrees with `answered`; judged means. Pure functions over case records."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from harness.metrics import Rate, cluster_bootstrap, normalised_retention
from harness.probes import CONDITIONS, GROUPS, probe_group

Row = tuple[dict[str, Any], dict[str, Any]]  # (case record, probe record)
# Beside the probe groups: points the replay never reached (never graded; the policy did not get there), apart
# from probes that are invalid (graded, failed on the ceiling) so "invalid" says only that.
HEADLINE_GROUPS = (*GROUPS[:-1], "unreached", "invalid")


def outcome(probe: dict[str, Any], condition: str, grade: str) -> bool | None:
    return probe.get("conditions", {}).get(condition, {}).get(grade)


def unreached(probe: dict[str, Any]) -> bool:
    """The replay never reached the probe's point: never graded (a probe lost to a failed request has a failure)."""
    return probe.get("conditions") is None and "failure" not in probe


def group_of(probe: dict[str, Any], grade: str) -> str:
    """The probe's group under one grade: unreached, or invalid when no ceiling passed it."""
    if unreached(probe):
        return "unreached"
    full = outcome(probe, "full", grade) if probe.get("conditions") else None
    if full is None:
        return "invalid"
    return probe_group(bool(full), probe.get("compactions_before", 0), bool(outcome(probe, "floor", grade)))


def inapplicable(rows: list[Row], grade: str) -> bool:
    """The grade was not measured on any compacted context that holds a compaction (`retained` on opaque
    provider items): it cannot head the run. A run with no compaction keeps its grades."""
    compacted = [p for _, p in rows if p.get("compactions_before") and outcome(p, "full", grade) is not None]
    return bool(compacted) and all(outcome(p, "compacted", grade) is None for p in compacted)


def _interval(rows: list[Row], grade: str) -> list[float] | None:
    by_case: dict[str, list[float]] = defaultdict(list)
    for record, probe in rows:
        by_case[record["case"]].append(1.0 if outcome(probe, "compacted", grade) else 0.0)
    found = cluster_bootstrap(list(by_case.values()))
    return None if found is None else [round(found[0], 4), round(found[1], 4)]


def testing_rate(rows: list[Row], grade: str, cluster: bool = True) -> dict[str, Any]:
    """Compacted pass rate over summary-testing probes (full passes and floor fails there by definition, so
    the rate is also the normalised retention on this set). The case-clustered interval resamples; a run
    computes it once, when it finishes, not after every case."""
    passed = sum(1 for _, p in rows if outcome(p, "compacted", grade))
    return {**Rate(passed, len(rows)).to_json(), "cluster95": _interval(rows, grade) if cluster else None,
            "cases": len({r["case"] for r, _ in rows})}


def invalid_reasons(rows: Iterable[Row], grade: str) -> dict[str, str]:
    out = {}
    for record, probe in rows:
        if group_of(probe, grade) == "invalid":
            out[f"{record['case']}/{probe['id']}"] = probe.get("invalid_reason") or "fails on the full history"
    return dict(sorted(out.items()))


def headline(rows: list[Row], grade: str, cluster: bool = True) -> dict[str, Any]:
    groups: dict[str, list[Row]] = {g: [] for g in HEADLINE_GROUPS}
    for row in rows:
        groups[group_of(row[1], grade)].append(row)
    testing = groups["tests_summary"]
    by_kind: dict[str, list[Row]] = defaultdict(list)
    for row in testing:
        by_kind[row[1]["kind"]].append(row)
    return {
        "grade": grade,
        "tests_summary": testing_rate(testing, grade, cluster),
        "by_kind": {kind: testing_rate(members, grade, cluster) for kind, members in sorted(by_kind.items())},
        "groups": {g: len(members) for g, members in groups.items()},
        "floor_answers": _rates(groups["floor_answers"], grade),
        "no_compaction": _rates(groups["no_compaction"], grade),
        "invalid": invalid_reasons(rows, grade),
        "unreached_by_pool": _by_pool(groups["unreached"]),
    }


def _by_pool(rows: list[Row]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for record, _ in rows:
        counts[record.get("pool") or "-"] += 1
    return dict(sorted(counts.items()))


def _rates(rows: list[Row], grade: str) -> dict[str, Any]:
    out = {c: Rate(sum(1 for _, p in rows if outcome(p, c, grade)), len(rows)).to_json() for c in CONDITIONS}
    values = [out[c]["rate"] for c in CONDITIONS]
    out["normalised_retention"] = (None if None in values else normalised_retention(*values))
    return out


def agreement(rows: list[Row]) -> dict[str, Any] | None:
    """How often the no-model proxy (`retained`) agrees with `answered` on the compacted context, over the
    probes that test the summary under `answered`; None when either grade did not run."""
    testing = [(r, p) for r, p in rows if group_of(p, "answered") == "tests_summary"
               and outcome(p, "compacted", "retained") is not None]
    if not testing:
        return None
    disagree = [{"probe": f"{r['case']}/{p['id']}", "kind": p["kind"],
                 "answered": bool(outcome(p, "compacted", "answered")),
                 "retained": bool(outcome(p, "compacted", "retained"))}
                for r, p in testing
                if bool(outcome(p, "compacted", "answered")) != bool(outcome(p, "compacted", "retained"))]
    return {**Rate(len(testing) - len(disagree), len(testing)).to_json(), "disagreements": disagree}


def judged(rows: list[Row]) -> dict[str, Any] | None:
    """Mean judge score (0-5) per condition over valid probes and over summary-testing ones; judge errors
    are counted, never scored."""
    scored = [(r, p) for r, p in rows if any("judged" in p.get("conditions", {}).get(c, {}) or
                                             "judge_error" in p.get("conditions", {}).get(c, {}) for c in CONDITIONS)]
    if not scored:
        return None

    def mean(subset: list[Row], condition: str) -> float | None:
        values = [p["conditions"][condition]["judged"] for _, p in subset
                  if "judged" in p["conditions"].get(condition, {})]
        return round(sum(values) / len(values), 3) if values else None

    testing = [row for row in scored if group_of(row[1], "answered") == "tests_summary"]
    valid = [row for row in scored if group_of(row[1], "answered") not in ("invalid", "unreached")]
    return {"valid": {c: mean(valid, c) for c in CONDITIONS},
            "tests_summary": {c: mean(testing, c) for c in CONDITIONS},
            "errors": sum(1 for _, p in scored for c in CONDITIONS if "judge_error" in p["conditions"].get(c, {}))}


def never_compacted(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Cases that never compact test that nothing was compacted: the context stayed whole at every point."""
    return {r["case"]: {"compactions": 0, "context_whole": bool(r.get("context_whole"))}
            for r in records if r.get("status") == "ok" and not r.get("events")}
