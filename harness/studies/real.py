"""Scores on real ground (issue 15, item 3): at each real compaction point of the `real` pool, the real summary
(`--policy recorded`) beside the builtin summarizer at the same points and budget (`--at-recorded-points`), the
reference controls at those points (empty, keyword bag, head-first, head-last), the floor and the full history;
by kind, with the probes each one loses.

Each arm is one ordinary run (its own folder under the report's, `run.json` as `run` writes it), so any arm can
be opened, gated or compared on its own; the report only reads the finished runs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.cases.schema import Case
from harness.compaction.controls import CONTROLS
from harness.errors import HarnessError
from harness.results.folder import read_run
from harness.metrics import mcnemar_exact
from harness.results.headline import outcome
from harness.run.config import RunConfig
from harness.studies.compare import RunObserver, RunOptions, run_configurations
from harness.studies.margins import margin

GRADES = ("retained", "answered")
EXACT_KINDS = ("recall", "update")  # probes whose answer is one exact value: an id, a path, a number, a name
REAL, BUILTIN, RUNTIME = "real summary", "builtin", "runtime "


@dataclass(frozen=True)
class Arm:
    """One configuration of the report: a name for the reader, a folder name, the run configuration."""

    name: str
    slug: str
    config: RunConfig


def arms(summarizer: str = "builtin", answerer: str = "builtin", runtimes: tuple[str, ...] = ()) -> tuple[Arm, ...]:
    """The real summaries, the summarizer under test at the same points and budget, and each control at those
    points (sized as the summarizer's summary for the same request, as `run --controls` sizes them); and each
    real runtime, compacting by its own trigger where the recorded session did (`--window recorded`), its own
    summarization prompt answered by the same summarizer."""
    at_points = RunConfig(model=summarizer, answerer=answerer, at_recorded_points=True)
    recorded = RunConfig(policy="recorded", model=summarizer, answerer=answerer)
    driven = [Arm(f"{RUNTIME}{name}", f"runtime-{name}", replace(recorded, runtime=name, runtime_window_recorded=True))
              for name in runtimes]
    return (Arm(REAL, "recorded", recorded), Arm(BUILTIN if summarizer == "builtin" else summarizer, "at-points", at_points),
            *driven, *(Arm(control, f"control-{control}", replace(at_points, control=control)) for control in CONTROLS))


def run_arms(cases: list[Case], out: Path, chosen: tuple[Arm, ...], observer: RunObserver,
             resume: bool = False) -> dict[str, dict[str, Any]]:
    """Run every arm over the cases into out/<slug>/; returns each arm's run document by arm name."""
    if not cases:
        raise HarnessError("no cases to report on: the selection is empty")
    runs = {}
    for arm in chosen:
        options = RunOptions(out=out / arm.slug, label=f"real-{arm.slug}", resume=resume)
        finished = run_configurations(cases, [arm.config], options, observer)
        runs[arm.name] = finished.runs[0].run
    return runs


def read_arms(out: Path, chosen: tuple[Arm, ...]) -> dict[str, dict[str, Any]]:
    """The arms' finished runs from an earlier `real-report` folder."""
    return {arm.name: read_run(out / arm.slug) for arm in chosen}


# ---------------------------------------------------------------------------------------------
# the study over finished runs


def probe_rows(run: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(case, point, probe id) -> the probe's record in the run, for the cases that finished."""
    rows = {}
    for record in run["cases"].values():
        if record.get("status") != "ok":
            continue
        for probe in record["probes"]:
            rows[(record["case"], probe["at"], probe["id"])] = probe
    return rows


def _passes(probe: dict[str, Any] | None, condition: str, grade: str) -> bool:
    return bool(probe and outcome(probe, condition, grade))


def over_budget(runs: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Arm -> how many of its summaries were longer than the recorded size they were given (graded cut to it)."""
    counts = {name: ((run.get("aggregates") or {}).get("summary") or {}).get("over_budget", 0)
              for name, run in runs.items()}
    return {name: n for name, n in counts.items() if n}


def real_study(runs: dict[str, dict[str, Any]], under_test: str = BUILTIN, *,
               allow_over_budget: bool = False) -> dict[str, Any]:
    """Per compaction point, per kind and overall: how many probes each arm passes, under each grade, over the
    probes that pass on the full history (the only ones a summary can be asked to keep), with the floor and
    the full history beside them; per point, the probes the real summary or the builtin loses; and each
    summarizer's margin over the strongest control. Arms whose summaries exceeded the recorded size are not
    compared unless `allow_over_budget` (they were graded cut to it, and the report says how many)."""
    if REAL not in runs:
        raise HarnessError(f"the report needs the '{REAL}' arm (the recorded policy)")
    over = over_budget(runs)
    if over and not allow_over_budget:
        named = ", ".join(f"{name} ({n})" for name, n in over.items())
        raise HarnessError(f"summaries longer than the recorded size in {named}: the arms are not compared at the "
                           f"same size (pass --allow-over-budget to compare them graded cut to it)")
    base = probe_rows(runs[REAL])
    by_arm = {name: probe_rows(run) for name, run in runs.items()}
    names = list(runs)
    points: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
    for key in sorted(base, key=lambda k: (k[0], _point_order(k[1]), k[2])):
        points[key[:2]].append(key)
    study: dict[str, Any] = {"arms": names, "under_test": under_test, "exact_kinds": list(EXACT_KINDS), "grades": {},
                             "over_budget": over, "compactions": compaction_positions(runs)}
    for grade in GRADES:
        study["grades"][grade] = {
            "points": [_group_row(f"{case} {point}", keys, base, by_arm, names, grade)
                       | _losses(keys, base, by_arm, under_test, grade)
                       for (case, point), keys in points.items()],
            "kinds": [_group_row(kind, keys, base, by_arm, names, grade)
                      for kind, keys in sorted(_by_kind(base).items())],
            "exact": _group_row("exact values (" + ", ".join(EXACT_KINDS) + ")",
                                [k for k in base if base[k]["kind"] in EXACT_KINDS], base, by_arm, names, grade),
            "total": _group_row("all points", list(base), base, by_arm, names, grade),
            "margins": _margins(base, by_arm, [n for n in names if n not in CONTROLS], grade),
            "side_by_side": side_by_side(base, by_arm, names, grade),
        }
    return study


def compaction_positions(runs: dict[str, dict[str, Any]]) -> dict[str, dict[str, list[int]]]:
    """Case -> arm -> the case messages its compactions came before: the real summary's and each runtime's (the
    other arms compact at the real summary's points by construction)."""
    out: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for arm, run in runs.items():
        if arm != REAL and not arm.startswith(RUNTIME):
            continue
        for record in run["cases"].values():
            if record.get("status") == "ok":
                out[record["case"]][arm] = [e["send_index"] for e in record.get("events", ())]
    return dict(sorted(out.items()))


def side_by_side(base: dict, by_arm: dict, names: list[str], grade: str) -> list[dict[str, Any]]:
    """Each arm beside the real summary over the probes that test the summary: compacted after a compaction,
    passing on the full history and failing on the floor, in the real run and in the arm's own (a runtime
    compacts where its trigger fires, so its point may differ); passes of each, discordant pairs and the exact
    McNemar p; and where the arm compacted (its first compaction's case message against the recorded one's)."""
    testing = [k for k in base if _passes(base[k], "full", grade) and not _passes(base[k], "floor", grade)
               and outcome(base[k], "compacted", grade) is not None]
    rows = []
    for arm in names:
        if arm == REAL:
            continue
        theirs = by_arm[arm]
        shared = [k for k in testing if k in theirs and outcome(theirs[k], "compacted", grade) is not None
                  and _passes(theirs[k], "full", grade) and not _passes(theirs[k], "floor", grade)]
        real = {k for k in shared if _passes(base[k], "compacted", grade)}
        mine = {k for k in shared if _passes(theirs[k], "compacted", grade)}
        rows.append({"arm": arm, "probes": len(shared), "real": len(real), "arm_passes": len(mine),
                     "only_real": len(real - mine), "only_arm": len(mine - real),
                     "p_value": float(f"{mcnemar_exact(len(real - mine), len(mine - real)):.3g}")})
    return rows


def _margins(base: dict, by_arm: dict, summarizers: list[str], grade: str) -> dict[str, Any]:
    """Each summarizer's margin over the strongest control, over the probes that pass on the full history. A
    runtime keeps a verbatim tail of its own where the controls keep the recorded one, so its margin is over the
    probes that also test the summary in its own run (its floor, its tail without the summary, fails them)."""
    valid = [k for k in base if _passes(base[k], "full", grade)]
    kinds = {f"{k[0]}/{k[1]}:{k[2]}": base[k]["kind"] for k in valid}

    def passes(arm: str, keys: list) -> dict[str, bool]:
        return {f"{k[0]}/{k[1]}:{k[2]}": _passes(by_arm[arm].get(k), "compacted", grade) for k in keys}

    found = {}
    for name in summarizers:
        keys = valid if not name.startswith(RUNTIME) else [
            k for k in valid if _passes(by_arm[name].get(k), "full", grade)
            and not _passes(by_arm[name].get(k), "floor", grade)]
        controls = {control: passes(control, keys) for control in by_arm if control in CONTROLS}
        found[name] = margin(passes(name, keys), controls, kinds)
    return found


def _point_order(point: str) -> int:
    return int(point.partition(":")[2] or 0)


def _by_kind(base: dict[tuple[str, str, str], dict[str, Any]]) -> dict[str, list[tuple[str, str, str]]]:
    kinds: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for key, probe in base.items():
        kinds[probe["kind"]].append(key)
    return kinds


def _group_row(name: str, keys: list[tuple[str, str, str]], base: dict, by_arm: dict, names: list[str],
               grade: str) -> dict[str, Any]:
    """Counts over the group's probes that pass on the full history (of the real-summary run, whose full and
    floor conditions every arm shares: the same history and, with the recorded tail, the same tail)."""
    valid = [k for k in keys if _passes(base[k], "full", grade)]
    return {"name": name, "probes": len(keys), "full": len(valid),
            "floor": sum(_passes(base[k], "floor", grade) for k in valid),
            "arms": {arm: sum(_passes(by_arm[arm].get(k), "compacted", grade) for k in valid) for arm in names}}


def _losses(keys: list[tuple[str, str, str]], base: dict, by_arm: dict, under_test: str,
            grade: str) -> dict[str, Any]:
    """The point's probes (passing on the full history) that the real summary or the one under test fails."""
    valid = [k for k in keys if _passes(base[k], "full", grade)]
    lost = {REAL: [k[2] for k in valid if not _passes(base[k], "compacted", grade)]}
    if under_test in by_arm:
        lost[under_test] = [k[2] for k in valid if not _passes(by_arm[under_test].get(k), "compacted", grade)]
    return {"lost": lost}
