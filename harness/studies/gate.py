"""Regression gating against a baseline: exit 0 pass, 1 regression, 2 usage or input error, 3 the run's
configuration differs from the baseline's (ConfigurationChanged: a new baseline is due, or --allow-config-change).

Deterministic runs (the builtin model, or cassettes replayed with record mode `none`) fail on any probe
that passed in the baseline and fails now, and on any aggregate under its threshold. Live runs fail only
when a drop of the headline (the compacted rate over probes that test the summary in both runs) is
statistically significant (exact McNemar on the paired probes, and a case-clustered bootstrap interval
that excludes no change) and larger than the minimum effect.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.metrics import Rate, bootstrap_difference, cluster_bootstrap_difference, mcnemar_exact
from harness.models import check_spec
from harness.results.folder import SCHEMA_VERSION, read_json, write_json
from harness.results.headline import group_of
from harness.results.shape import check_baseline
from harness.results.versions import current
from harness.studies import releases
from harness.studies.failed_requests import failed_requests

BASELINE_KIND = "compaction-harness-baseline"
CONFIGURATION_CHANGED_EXIT = 3


class ConfigurationChanged(HarnessError):
    """The run was made with another configuration than the baseline: not a regression, not a broken input."""

    exit_code = CONFIGURATION_CHANGED_EXIT


def is_deterministic(configuration: dict[str, Any]) -> bool:
    """A replay, or every text written by the builtin model (`@emulator` specs too): the same run grades the
    same, so any probe lost is a regression; otherwise the run is live and gated on significance."""
    specs = {configuration.get("model"), configuration.get("summarizer_spec"), configuration.get("answerer"),
             configuration.get("judge")} - {None}
    return all(check_spec(s).deterministic for s in specs) or configuration.get("record_mode") == "none"


def outcomes(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per probe (`case/probe`): validity, kind, and pass/fail of the compacted context per grade.
    Repeats of a case (`--repeat`) collapse to a majority vote, so a live run pairs with its baseline."""
    votes: dict[str, dict[str, Any]] = {}
    for case_key, case in sorted(run["cases"].items()):
        if case.get("status") != "ok":
            continue
        for probe in case["probes"]:
            compacted = probe.get("conditions", {}).get("compacted", {})
            entry = votes.setdefault(f"{case['case']}/{probe['id']}", {
                "kind": probe["kind"], "pool": case["pool"], "valid": [], "answered": [], "retained": []})
            entry["valid"].append(probe["valid"])
            for grade in ("answered", "retained"):
                if compacted.get(grade) is not None:
                    entry[grade].append(compacted[grade])
    return {key: {**entry, "valid": _majority(entry["valid"]), "answered": _majority(entry["answered"]),
                  "retained": _majority(entry["retained"])} for key, entry in votes.items()}


def _majority(values: list[bool]) -> bool | None:
    return None if not values else sum(values) * 2 >= len(values)


def summary_testing(run: dict[str, Any], grade: str) -> set[str]:
    """The probes (`case/probe`) that test the summary under `grade`: a compaction before the point, pass on
    full, fail on the floor (EVALUATION.md). Repeats vote, as in `outcomes`."""
    votes: dict[str, list[bool]] = defaultdict(list)
    for case in run["cases"].values():
        if case.get("status") != "ok":
            continue
        for probe in case["probes"]:
            votes[f"{case['case']}/{probe['id']}"].append(group_of(probe, grade) == "tests_summary")
    return {key for key, values in votes.items() if _majority(values)}


def paired_headline(pairs: list[tuple[str, bool, bool]]) -> dict[str, Any]:
    """Two runs' compacted outcomes (a, b) on the same summary-testing probes (`case/probe`, a, b): each run's
    rate, exact McNemar on the discordant pairs, and b - a with a per-probe and a case-clustered bootstrap
    interval (probes within a case are not independent)."""
    a = [float(x) for _, x, _ in pairs]
    b = [float(y) for _, _, y in pairs]
    only_a = sum(1 for x, y in zip(a, b) if x and not y)
    only_b = sum(1 for x, y in zip(a, b) if y and not x)
    by_case: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for key, x, y in pairs:
        by_case[key.rpartition("/")[0]].append((float(x), float(y)))
    difference, low, high = bootstrap_difference(a, b) if pairs else (0.0, 0.0, 0.0)
    clustered = cluster_bootstrap_difference(list(by_case.values()))
    return {"pairs": len(pairs), "cases": len(by_case), "a": Rate(int(sum(a)), len(a)).to_json(),
            "b": Rate(int(sum(b)), len(b)).to_json(), "only_a": only_a, "only_b": only_b,
            "p_value": round(mcnemar_exact(only_a, only_b), 6), "difference": round(difference, 4),
            "ci95": [round(low, 4), round(high, 4)],
            "cluster95": None if clustered is None else [round(clustered[1], 4), round(clustered[2], 4)]}


def case_ids(run: dict[str, Any]) -> list[str]:
    """The cases the run evaluated (an errored case has no outcome to gate or stand in a baseline)."""
    return sorted({case["case"] for case in run["cases"].values() if case.get("status") == "ok"})


def make_baseline(run: dict[str, Any]) -> dict[str, Any]:
    aggregates = run["aggregates"]
    grade = aggregates["grade"]
    return {
        "kind": BASELINE_KIND, "schema_version": SCHEMA_VERSION, "run_id": run["run_id"],
        "configuration": run["configuration"], "grade": grade,
        "cases": case_ids(run),
        "aggregates": {"compacted": aggregates["overall"][grade]["compacted"],
                       "by_kind": {k: v["compacted"] for k, v in aggregates["by_kind"].items()},
                       "headline": (aggregates.get("headline") or {}).get(grade, {}).get("tests_summary"),
                       "judged": aggregates.get("judged")},
        "probes": outcomes(run),
        "tests_summary": sorted(summary_testing(run, grade)),
        **({"runtime": found} if (found := releases.profile(run)) else {}),
    }


# how the models were reached and where the instruction file lay, not what was evaluated (its digest is)
IO_KEYS = frozenset({"record_mode", "cassettes", "instruction_file"})


def configuration_changes(baseline: dict[str, Any], run: dict[str, Any]) -> list[str]:
    """Each configuration field where the run differs from the baseline, as `field: baseline X, run Y`
    (a field an older document lacks reads as unset)."""
    def value(config: dict[str, Any], key: str) -> Any:
        found = config.get(key)
        return None if found in (None, {}, []) else found

    keys = sorted((set(baseline) | set(run)) - IO_KEYS)
    return [f"{key}: baseline {_shown(value(baseline, key))}, run {_shown(value(run, key))}"
            for key in keys if value(baseline, key) != value(run, key)]


def _shown(value: Any) -> str:
    return "unset" if value is None else json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) \
        else str(value)


def errored_cases(run: dict[str, Any]) -> dict[str, str]:
    """The run's cases (by case-file key) that ended in an error, with their error."""
    return {key: case.get("error") or "(no message)" for key, case in sorted(run["cases"].items())
            if case.get("status") != "ok"}


def unreached_points(run: dict[str, Any]) -> list[str]:
    """`case/probe (at POINT)` for every probe whose point the replay never reached: it was never graded (a
    probe lost to a failed summarizer request is a failed request instead)."""
    return [f"{case['case']}/{probe['id']} (at {probe['at']})" for case in run["cases"].values()
            if case.get("status") == "ok" for probe in case["probes"]
            if probe.get("conditions") is None and "failure" not in probe]


def check_complete(run: dict[str, Any], what: str, override: str) -> None:
    """A run with errored cases or failed requests cannot stand for the library: say which and how. Unreached
    probe points are no gap in the run: where the policy never compacts, a point after a compaction is never
    reached, and the baseline records them as such (the same policy reaches the same points)."""
    errors, failed = errored_cases(run), failed_requests(run)
    problems = []
    if errors:
        key, message = next(iter(errors.items()))
        problems.append(f"{len(errors)} of {len(run['cases'])} cases ended in an error (first: {key}: {message})")
    if failed:
        key, message = next(iter(failed.items()))
        problems.append(f"{len(failed)} probe(s) or case(s) were not measured: a request failed for good (first: "
                        f"{key}: {message}); run --resume asks again")
    if problems:
        raise HarnessError(f"{what}: {'; '.join(problems)}; fix the run{override}")


def read_baseline(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    data = read_json(path, "the baseline", "no baseline here (write one with --update-baseline)")
    if not isinstance(data, dict) or data.get("kind") != BASELINE_KIND:
        raise HarnessError(f"{path}: not a compaction-harness baseline")
    data = current(data, str(path), "re-create it with --update-baseline")
    for key in ("probes", "cases", "grade"):
        if key not in data:
            raise HarnessError(f"{path}: baseline has no {key!r}")
    return check_baseline(data, str(path))


@dataclass(frozen=True)
class Thresholds:
    min_pass_rate: float | None = None
    max_drop: float | None = None
    per_kind_min: dict[str, float] = field(default_factory=dict)
    min_effect: float = 0.05
    alpha: float = 0.05


@dataclass
class Verdict:
    deterministic: bool
    grade: str
    regressions: list[str]
    improvements: list[str]
    failures: list[str]  # aggregate thresholds and significant drops, one line each
    rows: dict[str, dict[str, Any]]  # probe -> {"baseline", "now", "kind", "valid"}
    stats: dict[str, Any]  # over every paired valid probe: what lost probes and thresholds are checked on
    headline: dict[str, Any] = field(default_factory=dict)  # paired_headline: a = baseline, b = now
    testing_in: str = "both"  # where the summary-testing probes come from: both runs, or (old baseline) now
    judged: dict[str, Any] | None = None  # {"baseline", "now"}: judged means, when a judge ran
    config_changes: list[str] = field(default_factory=list)  # gated across with --allow-config-change
    failed_requests: dict[str, str] = field(default_factory=dict)  # not measured: never a quiet pass
    over_budget: int = 0  # summaries of the run longer than their budget (graded cut to it)
    release: dict[str, Any] | None = None  # a runtime's release change (studies/releases.py), gated across

    @property
    def exit_code(self) -> int:
        return 1 if self.regressions and self.deterministic or self.failures or self.failed_requests else 0

    def to_json(self) -> dict[str, Any]:
        """The verdict as one JSON document (`gate --json`)."""
        return {"status": "fail" if self.exit_code else "pass", "exit_code": self.exit_code,
                "deterministic": self.deterministic, "grade": self.grade, "headline": self.headline,
                "testing_in": self.testing_in, "paired": self.stats, "regressions": self.regressions,
                "improvements": self.improvements, "failures": self.failures, "judged": self.judged,
                "config_changes": self.config_changes, "failed_requests": self.failed_requests,
                "over_budget": self.over_budget, "release": self.release, "probes": self.rows}


def gate(run: dict[str, Any], baseline: dict[str, Any], thresholds: Thresholds, *,
         allow_config_change: bool = False) -> Verdict:
    errors = errored_cases(run)
    if errors:
        key, message = next(iter(errors.items()))
        others = f" ({len(errors) - 1} more: {', '.join(list(errors)[1:4])})" if len(errors) > 1 else ""
        raise HarnessError(f"case {key} ended in an error, so its probes cannot be gated{others}: {message}")
    changes = configuration_changes(baseline.get("configuration") or {}, run["configuration"])
    if changes and not allow_config_change:
        raise ConfigurationChanged(
            f"configuration change, not a regression (exit {CONFIGURATION_CHANGED_EXIT}): the run's configuration "
            f"differs from the baseline's ({'; '.join(changes)}): gate a run of the baseline's configuration, "
            f"write a new baseline with --update-baseline, or compare across with --allow-config-change")
    grade = baseline["grade"]
    now = outcomes(run)
    before = baseline["probes"]
    if case_ids(run) != baseline["cases"] or set(now) != set(before):
        missing = sorted(set(before) - set(now))[:3]
        extra = sorted(set(now) - set(before))[:3]
        raise HarnessError(f"the baseline was made from other cases or probes (missing now: {missing or '-'}, "
                           f"new: {extra or '-'}): gate the same cases or update the baseline")
    deterministic = is_deterministic(run["configuration"])
    failed = failed_requests(run)
    rows, regressions, improvements = {}, [], []
    paired = []
    for key in sorted(now):
        b, n = before[key].get(grade), now[key].get(grade)
        valid = before[key]["valid"] and now[key]["valid"] and key not in failed  # unmeasured: never paired
        rows[key] = {"baseline": b, "now": n, "kind": now[key]["kind"], "valid": valid}
        if not valid or b is None or n is None:
            continue
        paired.append((bool(b), bool(n), now[key]["kind"]))
        if b and not n:
            regressions.append(key)
        elif n and not b:
            improvements.append(key)
    stats = _paired_stats(paired)
    failures = _threshold_failures(paired, thresholds, stats)
    testing, testing_in = _testing_pairs(run, baseline, rows)
    lead = paired_headline(testing)
    if not deterministic and _significant_drop(lead, thresholds):
        failures.append(f"headline dropped by {-lead['difference']:.3f} over {lead['pairs']} summary-testing probes "
                        f"(McNemar p={lead['p_value']:.4f}, case-clustered 95% [{lead['cluster95'][0]:.3f}, "
                        f"{lead['cluster95'][1]:.3f}], per-probe bootstrap [{lead['ci95'][0]:.3f}, "
                        f"{lead['ci95'][1]:.3f}]) > min effect {thresholds.min_effect}")
    judged = {"baseline": baseline.get("aggregates", {}).get("judged"), "now": run["aggregates"].get("judged")}
    over = (run["aggregates"].get("summary") or {}).get("over_budget", 0)
    release = releases.changes(baseline.get("runtime"), releases.profile(run), regressions, improvements)
    return Verdict(deterministic, grade, regressions, improvements, failures, rows, stats, lead, testing_in,
                   judged if any(judged.values()) else None, changes, failed, over,
                   release if release and changes else None)


def _testing_pairs(run: dict[str, Any], baseline: dict[str, Any],
                   rows: dict[str, dict[str, Any]]) -> tuple[list[tuple[str, bool, bool]], str]:
    """The paired probes that test the summary in both runs; a baseline written before the groups existed
    has no list, and the run's own groups stand in."""
    testing = summary_testing(run, baseline["grade"])
    recorded = baseline.get("tests_summary")
    if recorded is not None:
        testing &= set(recorded)
    pairs = [(key, bool(row["baseline"]), bool(row["now"])) for key, row in rows.items()
             if key in testing and row["valid"] and row["baseline"] is not None and row["now"] is not None]
    return pairs, "both" if recorded is not None else "now"


def _significant_drop(lead: dict[str, Any], thresholds: Thresholds) -> bool:
    """A live drop counts when McNemar rejects, the case-clustered interval lies below zero, and it is larger
    than the minimum effect: probe-level significance alone overstates what a few cases show."""
    return (lead["pairs"] > 0 and lead["p_value"] < thresholds.alpha and lead["cluster95"] is not None
            and lead["cluster95"][1] < 0 and -lead["difference"] > thresholds.min_effect)


def _paired_stats(paired: list[tuple[bool, bool, str]]) -> dict[str, Any]:
    if not paired:
        return {"pairs": 0, "baseline_rate": None, "now_rate": None, "difference": 0.0, "p_value": 1.0,
                "ci_low": 0.0, "ci_high": 0.0}
    a = [float(b) for b, _, _ in paired]
    b = [float(n) for _, n, _ in paired]
    only_baseline = sum(1 for x, y, _ in paired if x and not y)
    only_now = sum(1 for x, y, _ in paired if y and not x)
    difference, low, high = bootstrap_difference(a, b)
    return {"pairs": len(paired), "baseline_rate": sum(a) / len(a), "now_rate": sum(b) / len(b),
            "difference": difference, "p_value": mcnemar_exact(only_baseline, only_now),
            "ci_low": low, "ci_high": high, "lost": only_baseline, "gained": only_now}


def _threshold_failures(paired, thresholds: Thresholds, stats: dict[str, Any]) -> list[str]:
    failures = []
    if thresholds.min_pass_rate is not None and stats["now_rate"] is not None \
            and stats["now_rate"] < thresholds.min_pass_rate:
        failures.append(f"pass rate {stats['now_rate']:.3f} < --min-pass-rate {thresholds.min_pass_rate}")
    if thresholds.max_drop is not None and -stats["difference"] > thresholds.max_drop:
        failures.append(f"pass rate dropped by {-stats['difference']:.3f} > --max-drop {thresholds.max_drop}")
    for kind, minimum in sorted(thresholds.per_kind_min.items()):
        members = [n for _, n, k in paired if k == kind]
        if not members:
            raise HarnessError(f"--min-pass-rate {kind}={minimum}: no valid probe of kind {kind!r}")
        rate = sum(members) / len(members)
        if rate < minimum:
            failures.append(f"{kind} pass rate {rate:.3f} < {minimum}")
    return failures


def update_baseline(run: dict[str, Any], path: str | Path, *, allow_partial: bool = False) -> dict[str, Any]:
    if not allow_partial:
        check_complete(run, "refusing to write a baseline from a partial run", " or pass --allow-partial")
    baseline = make_baseline(run)
    write_json(Path(path), baseline)
    return baseline
