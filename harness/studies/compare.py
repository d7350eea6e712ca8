"""Configurations side by side: each run's headline (the compacted rate over summary-testing probes), pass
rates over all valid probes with intervals, retention, compactions, summary size, cost, latency, judged means,
and pairwise significance on the probes that test the summary in both runs; and running several
configurations over the same cases, one run folder each, to compare them."""

from __future__ import annotations

from collections import defaultdict
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Callable, Protocol

from harness.cases.schema import Case
from harness.errors import HarnessError
from harness.metrics import mcnemar_exact
from harness.results.folder import RunFolder
from harness.results.headline import headline
from harness.run import workers
from harness.run.preflight import preflight
from harness.run.config import RunConfig
from harness.run.matrix import default_run_id, matrix, parse_shard, results_path, run_cases
from harness.studies import releases
from harness.studies.gate import outcomes, paired_headline, summary_testing
from harness.studies.margins import SEPARATES, margin


def label_of(run: dict[str, Any]) -> str:
    config = run["configuration"]
    system = f"runtime {config['runtime']}" if config.get("runtime") else config["policy"]
    if config.get("runtime") and not config.get("runtime_compaction", True):
        system += " (compaction off)"
    name = run.get("label") or f"{system} / {config['model']} / {config['summarizer_spec']}" + (
        f" / instruction {config['instruction_name']}" if config.get("instruction_name") else "")
    return name + ("" if config.get("cache", True) else " (cache off)")


def comparison(runs: list[dict[str, Any]]) -> dict[str, Any]:
    if len(runs) < 2:
        raise HarnessError("compare needs two or more runs")
    grades = {run["aggregates"]["grade"] for run in runs}
    grade = "answered" if "answered" in grades and len(grades) == 1 else "retained"
    columns = []
    for run in runs:
        agg = run["aggregates"]
        columns.append({
            "run": run["run_id"], "label": label_of(run), "configuration": run["configuration"],
            "pass_rate": agg["overall"][grade]["compacted"],
            "full": agg["overall"][grade]["full"], "floor": agg["overall"][grade]["floor"],
            "normalised_retention": agg["overall"][grade]["normalised_retention"],
            "by_kind": {k: v["compacted"] for k, v in agg["by_kind"].items()} if agg["grade"] == grade else {},
            "by_pool": {k: v["compacted"] for k, v in agg["by_pool"].items()} if agg["grade"] == grade else {},
            "compactions": sum(agg["compactions"].values()),
            "summary_tokens": agg["summary"]["mean_tokens"],
            "cost": agg.get("cost", {}),
            "latency": agg.get("latency", {}),
            "headline": run_headline(run, grade),
            "judged": agg.get("judged"),
        })
    pairs = [{**pairwise(runs[i], runs[j], grade),
              **({"void": reason} if (reason := same_model(runs[i]["configuration"], runs[j]["configuration"]))
                 else {})}
             for i, j in combinations(range(len(runs)), 2)]
    controls = control_study(runs)
    found = release_changes(runs, pairs)
    return {"grade": grade, "runs": columns, "pairs": pairs, **({"controls": controls} if controls else {}),
            **({"releases": found} if found else {})}


def release_changes(runs: list[dict[str, Any]], pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each pair of runs that drove two releases of one runtime: what changed (studies/releases.py), the probes
    the later-named run lost and gained being the pair's flips."""
    found = []
    for (i, j), pair in zip(combinations(range(len(runs)), 2), pairs):
        a, b = (runs[k]["configuration"].get("runtime") for k in (i, j))
        if a and b and a != b and a.partition("@")[0] == b.partition("@")[0]:
            found.append(releases.changes(releases.profile(runs[i]), releases.profile(runs[j]),
                                          pair["passes_only_in_a"], pair["passes_only_in_b"]))
    return found




def control_study(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """When the runs hold a configuration under test and its reference controls (the same configuration with
    `control` set), each control's compacted passes over the probes that test the summary in the run under
    test, as a share of the summarizer's, with exact McNemar: for the whole library, per kind and per case, and
    where the instrument cannot separate the two (p >= SEPARATES). None when there is no such set."""
    plain = [r for r in runs if not r["configuration"].get("control")]
    if len(plain) != 1:
        return None
    base = plain[0]
    key = {k: v for k, v in base["configuration"].items() if k not in ("record_mode", "cassettes")}
    controls = [r for r in runs if r["configuration"].get("control") and
                {k: v for k, v in r["configuration"].items() if k not in ("record_mode", "cassettes", "control")} == key]
    if not controls:
        return None
    grades = [g for g in ("answered", "retained") if base["aggregates"].get("headline", {}).get(g)]
    ours = outcomes(base)
    study: dict[str, Any] = {"under_test": label_of(base), "separates_below": SEPARATES, "grades": {}}
    study["margins"] = {}
    for grade in grades:
        testing = sorted(summary_testing(base, grade))
        theirs = {r["configuration"]["control"]: outcomes(r) for r in controls}
        study["grades"][grade] = {name: _control_credit(ours, found, testing, grade) for name, found in theirs.items()}
        graded = [k for k in testing if ours[k][grade] is not None]
        study["margins"][grade] = margin(
            {k: bool(ours[k][grade]) for k in graded},
            {name: {k: bool(found[k][grade]) for k in graded if k in found and found[k][grade] is not None}
             for name, found in theirs.items()},
            {k: ours[k]["kind"] for k in graded})
    return study


def _control_credit(ours: dict[str, Any], theirs: dict[str, Any], testing: list[str], grade: str) -> dict[str, Any]:
    shared = [k for k in testing if k in theirs and ours[k][grade] is not None and theirs[k][grade] is not None]

    def credit(keys: list[str]) -> dict[str, Any]:
        a = sum(bool(ours[k][grade]) for k in keys)
        b = sum(bool(theirs[k][grade]) for k in keys)
        only_a = sum(1 for k in keys if ours[k][grade] and not theirs[k][grade])
        only_b = sum(1 for k in keys if theirs[k][grade] and not ours[k][grade])
        p = mcnemar_exact(only_a, only_b)
        return {"probes": len(keys), "summarizer": a, "control": b, "share": round(b / a, 4) if a else None,
                "p_value": float(f"{p:.3g}"), "separated": p < SEPARATES}

    groups: dict[str, dict[str, list[str]]] = {"kind": defaultdict(list), "case": defaultdict(list)}
    for k in shared:
        groups["kind"][ours[k]["kind"]].append(k)
        groups["case"][k.rpartition("/")[0]].append(k)
    return {"overall": credit(shared),
            "by_kind": {name: credit(keys) for name, keys in sorted(groups["kind"].items())},
            "by_case": {name: credit(keys) for name, keys in sorted(groups["case"].items())}}


SPEC_KEYS = ("model", "summarizer_spec", "answerer", "judge")


def text_source(spec: str | None) -> str | None:
    """What produced a spec's text: every `@emulator` spec is the builtin model behind a wire format; any
    other spec is its model at its endpoint."""
    if spec is None:
        return None
    name, _, endpoint = spec.strip().partition("@")
    if spec.strip() == "builtin" or endpoint == "emulator":
        return "builtin"
    return f"{name}@{endpoint}" if endpoint else name


def same_model(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """Why a quality comparison of two configurations is void, or None: they differ only in model specs that
    resolve to the same underlying model, so any quality difference is wire-format conversion, not the models."""
    def resolved(config: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in config.items() if k not in (*SPEC_KEYS, "summarizer", "record_mode", "cassettes")}
        return {**kept, **{k: text_source(config.get(k)) for k in SPEC_KEYS}}

    differing = [k for k in SPEC_KEYS if a.get(k) != b.get(k)]
    if not differing or resolved(a) != resolved(b):
        return None
    named = ", ".join(f"{a.get(k)} and {b.get(k)}" for k in differing)
    return (f"{named} are the same underlying model ({text_source(a.get(differing[0]))}); the quality comparison is "
            f"void, and any difference in it comes from wire-format conversion alone")


def run_headline(run: dict[str, Any], grade: str) -> dict[str, Any]:
    """The run's headline under `grade`: from its aggregates, or from its cases for a run written before
    aggregates carried one (or one whose lead grade differs from the comparison's)."""
    found = (run["aggregates"].get("headline") or {}).get(grade)
    if found is None or found["tests_summary"].get("cluster95") is None:
        rows = [(case, probe) for case in run["cases"].values() if case.get("status") == "ok"
                for probe in case.get("probes", [])]
        found = headline(rows, grade)
    return {"tests_summary": found["tests_summary"], "by_kind": found["by_kind"], "groups": found["groups"],
            "unreached_by_pool": found.get("unreached_by_pool") or {}}


def pairwise(a: dict[str, Any], b: dict[str, Any], grade: str) -> dict[str, Any]:
    """Exact McNemar on the discordant probes that test the summary in both runs, and the difference with a
    per-probe and a case-clustered bootstrap interval."""
    left, right = outcomes(a), outcomes(b)
    testing = summary_testing(a, grade) & summary_testing(b, grade)
    shared = [k for k in sorted(set(left) & set(right) & testing)
              if left[k]["valid"] and right[k]["valid"] and left[k][grade] is not None and right[k][grade] is not None]
    found = paired_headline([(k, bool(left[k][grade]), bool(right[k][grade])) for k in shared])
    return {"a": label_of(a), "b": label_of(b), "shared_probes": found["pairs"], "cases": found["cases"],
            "only_a": found["only_a"], "only_b": found["only_b"], "difference": found["difference"],
            "ci95": found["ci95"], "cluster95": found["cluster95"], "p_value": found["p_value"],
            # the discordant probes themselves, so a reader sees which probes flipped, not only how many
            "passes_only_in_a": [k for k in shared if left[k][grade] and not right[k][grade]],
            "passes_only_in_b": [k for k in shared if right[k][grade] and not left[k][grade]]}


# ---------------------------------------------------------------------------------------------
# running several configurations


@dataclass(frozen=True)
class RunOptions:
    """Where and how each configuration runs."""

    out: Path | None = None  # one configuration: its folder; several: the parent of one folder each
    label: str | None = None
    resume: bool = False
    overwrite: bool = False  # replace the run a folder holds (its own outputs removed first)
    repeat: int = 1
    concurrency: int = 1
    shard: str | None = None  # I/N
    jobs: int | None = None  # worker processes for offline models (None: one per core; 1: none), run.workers


@dataclass(frozen=True)
class FinishedRun:
    folder: RunFolder
    run: dict[str, Any]


@dataclass(frozen=True)
class ConfigurationRuns:
    """Every configuration's finished run and, when there are several, their comparison."""

    runs: tuple[FinishedRun, ...]
    comparison: dict[str, Any] | None
    folder: Path  # where the comparison belongs

    @property
    def failed(self) -> bool:
        """A case ended in an error, or a request failed for good, in some run."""
        return any(finished.run["aggregates"]["errors"]
                   or (finished.run["aggregates"].get("failed_requests") or {}).get("cases")
                   for finished in self.runs)


class RunObserver(Protocol):
    """What a caller sees of the runs: progress per run, then each finished run."""

    def running(self, label: str | None, total: int) -> AbstractContextManager[Callable[[dict[str, Any]], None]]:
        """Entered around one run of `total` case evaluations; yields the callback for each finished case."""

    def finished(self, finished: FinishedRun) -> None:
        """One configuration's run is complete and written."""


def run_label(config: RunConfig, label: str | None, several: bool) -> str | None:
    """One configuration keeps the given label; several get one each, named after what differs."""
    if not several:
        return label
    name = f"{label + '-' if label else ''}{config.system}-{config.model}-{config.summarizer}"
    if config.control:
        name += f"-control-{config.control}"
    if config.instruction_name:
        name += f"-instruction-{config.instruction_name}"
    return name.replace(":", "_").replace("/", "_").replace("@", "_")


def run_configurations(cases: list[Case], configs: list[RunConfig], options: RunOptions,
                       observer: RunObserver) -> ConfigurationRuns:
    """Every configuration over its share of the cases, one run folder each; compared when several."""
    shard = parse_shard(options.shard)
    workers.start_early(configs, options.jobs)
    plans = dict(zip(configs, preflight(cases, configs, options.repeat)))  # all checked before any model call
    several = len(configs) > 1
    base = options.out
    finished_runs = []
    for config, chosen in matrix(cases, configs, shard).items():
        label = run_label(config, options.label, several)
        run_id = default_run_id(config, label)
        folder = RunFolder(base / label if several and base else results_path(str(base) if base else None, run_id))
        if options.overwrite:
            folder.clear()
        with observer.running(label, len(chosen) * options.repeat) as on_case:
            run = run_cases(chosen, plans[config], folder, run_id=run_id, label=label, resume=options.resume,
                            repeat=options.repeat, concurrency=options.concurrency, shard=options.shard,
                            on_case=on_case, jobs=options.jobs)
        finished = FinishedRun(folder, run)
        observer.finished(finished)
        finished_runs.append(finished)
    result = comparison([f.run for f in finished_runs]) if several else None
    return ConfigurationRuns(tuple(finished_runs), result, base or Path("results"))
