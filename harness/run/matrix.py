"""The run: cases x configurations through the compaction path, probes graded under each control.

One failing case is reported and the others finish; each finished case is written at once; `resume`
skips the cases a folder already holds.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness.cases.schema import Case
from harness.compaction import Compactor, Replay, SummaryCall
from harness.errors import HarnessError
from harness.metrics import age_bucket, check_summary
from harness.models.base import ModelClient, check_spec, open_client
from harness.policy import PolicyConfig, make_policy
from harness.probes import CONDITIONS, Text, conditions, grade
from harness.results.folder import SCHEMA_VERSION, RunFolder, git_commit, harness_version, now, rebuild_run
from harness.compaction.summarizer import SECTIONS, ModelSummarizer, SummaryInput, SummaryResult


@dataclass(frozen=True)
class RunConfig:
    """One configuration of the matrix. `summarizer="same"` is the session's own model (`model`)."""

    policy: str = "default"
    model: str = "builtin"
    summarizer: str = "same"
    answerer: str | None = None  # default: the model continuing the session (`model`)
    judge: str | None = None
    cache: bool = True
    settings: tuple[tuple[str, Any], ...] = ()
    record_mode: str = "none"
    cassettes: str = "goldens/cassettes"
    at_recorded_points: bool = False  # compact exactly where the session's own compaction lines are (issue 9)
    recorded_tail: str = "recorded"  # at recorded points: keep the recorded tail, or "policy": the policy's own
    summary_tokens: int | None = None  # at recorded points: the budget (default: the recorded summary's size)
    prices: str | None = None  # a price file over the shipped table (--prices)
    sections: tuple[str, ...] = SECTIONS  # the sections the summary instruction asks for

    @property
    def summarizer_spec(self) -> str:
        return self.model if self.summarizer == "same" else self.summarizer

    @property
    def answerer_spec(self) -> str:
        return self.answerer or self.model

    def validate(self) -> None:
        for spec in {self.model, self.summarizer_spec, self.answerer_spec, self.judge} - {None}:
            check_spec(spec)
        if self.judge and self.judge in (self.model, self.summarizer_spec):
            raise HarnessError(f"the judge {self.judge} is a model under test; pick another judge model")
        if self.recorded_tail not in ("recorded", "policy"):
            raise HarnessError(f"--at-recorded-points={self.recorded_tail}: choose recorded-tail or policy-tail")

    @property
    def at_points(self) -> bool:
        """Another policy compacting at the recorded points (the `recorded` policy is there already)."""
        return self.at_recorded_points and self.policy != "recorded"

    def describe(self) -> dict[str, Any]:
        return {"policy": self.policy, "model": self.model, "summarizer": self.summarizer,
                "summarizer_spec": self.summarizer_spec, "answerer": self.answerer_spec, "judge": self.judge,
                "cache": self.cache, "settings": dict(self.settings),
                **({} if self.sections == SECTIONS else {"sections": list(self.sections)}),
                **({"at_recorded_points": self.recorded_tail, "summary_tokens": self.summary_tokens}
                   if self.at_points else {})}

    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.describe(), sort_keys=True).encode()).hexdigest()[:10]


# ---------------------------------------------------------------------------------------------
# one case


@dataclass
class Clients:
    """One client per model spec within a case, so a cassette file has one writer. A repeat of a case
    (`--repeat`) is a separate sample with its own cassette (`<case>.r1`), replayed as recorded."""

    config: RunConfig
    case_id: str
    opened: dict[str, ModelClient] = field(default_factory=dict)

    def get(self, spec: str) -> ModelClient:
        if spec not in self.opened:
            parsed = check_spec(spec)
            cassette = None
            if parsed.provider != "builtin":
                from harness.models.cassette import cassette_path

                cassette = cassette_path(self.config.cassettes, self.case_id, spec)
            self.opened[spec] = open_client(spec, cassette_path=cassette, record_mode=self.config.record_mode,
                                            case_id=self.case_id)
        return self.opened[spec]

    def close(self) -> None:
        for client in self.opened.values():
            client.close()


@dataclass
class Folding:
    """Wraps the summarizer to keep what each compaction was given and wrote (for summary checks)."""

    inner: ModelSummarizer
    calls: list[tuple[SummaryInput, SummaryResult]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    def summarize(self, request: SummaryInput) -> SummaryResult:
        result = self.inner.summarize(request)
        self.calls.append((request, result))
        return result


def policy_config(case: Case, config: RunConfig) -> PolicyConfig:
    values = {"context_window": case.context_window, "max_output_tokens": case.max_output_tokens,
              **case.settings, **dict(config.settings)}
    try:
        return PolicyConfig(**values)
    except TypeError as exc:
        raise HarnessError(f"unknown policy setting: {exc}") from None


def evaluate_case(case: Case, config: RunConfig, repeat: int = 0) -> dict[str, Any]:
    started = time.perf_counter()
    clients = Clients(config, case.id if not repeat else f"{case.id}.r{repeat}")
    try:
        summarizer = ModelSummarizer(clients.get(config.summarizer_spec), check_spec(config.summarizer_spec).model,
                                     cache=config.cache, sections=config.sections)
        policy = make_policy(config.policy, policy_config(case, config))
        if config.at_points:
            from harness.policy.recorded import at_recorded_points

            policy = at_recorded_points(policy, config.recorded_tail, config.summary_tokens)
        points = set(case.points) | {"end"}
        replay = Compactor(case.session, policy, summarizer, points=points).run()
        replayed = time.perf_counter()
        answerer = clients.get(config.answerer_spec)
        judge = clients.get(config.judge) if config.judge else None
        probes = grade_probes(case, replay, answerer, check_spec(config.answerer_spec).model,
                              judge, check_spec(config.judge).model if config.judge else "")
        graded = time.perf_counter()
    finally:
        clients.close()
    calls = [(call.request, call.result) for call in replay.summaries]
    return {
        "case": case.id, "pool": case.pool, "repeat": repeat, "status": "ok",
        "messages": len(case.session.messages),
        "events": [_event_json(e) for e in replay.events],
        "risk_counts": replay.risk_counts(),
        "summaries": [_summary_json(case, call, config) for call in replay.summaries]
                     + _recorded_summaries_json(case, replay),
        "probes": probes,
        "usage": _usage_totals(calls),
        "cost": summary_cost(calls, config),
        "timings": {"replay_s": round(replayed - started, 4), "grading_s": round(graded - replayed, 4),
                    "compactions": [_timing_json(e) for e in replay.events]},
        "contexts": {point: _snapshot_json(s) for point, s in sorted(replay.snapshots.items())},
    }


def grade_probes(case: Case, replay: Replay, answerer: ModelClient, answerer_model: str,
                 judge: ModelClient | None, judge_model: str) -> list[dict[str, Any]]:
    results = []
    texts: dict[tuple[str, str], Text] = {}
    for probe in case.probes:
        snapshot = replay.snapshots.get(probe.at)
        if snapshot is None:
            results.append({"id": probe.id, "kind": probe.kind, "at": probe.at, "valid": False,
                            "invalid_reason": f"probe point {probe.at} never reached"})
            continue
        grades = {}
        for name, condition in conditions(case.session, snapshot).items():
            key = (probe.at, name)
            if key not in texts:
                texts[key] = Text(condition.text())
            grades[name] = grade(condition, probe, answerer, answerer_model, judge, judge_model, texts[key])
        full = grades["full"]
        valid = full.answered if full.answered is not None else full.retained
        survived = sum(1 for e in replay.events[:snapshot.compactions] if e.tail_start > probe.planted_at)
        results.append({
            "id": probe.id, "kind": probe.kind, "at": probe.at, "planted_at": probe.planted_at,
            "fact_age": snapshot.end - probe.planted_at, "age_bucket": age_bucket(snapshot.end - probe.planted_at),
            "compactions_survived": survived, "valid": bool(valid),
            **({} if valid else {"invalid_reason": "fails on the full history"}),
            "floor_survives": bool(grades["floor"].answered if grades["floor"].answered is not None
                                   else grades["floor"].retained),
            "conditions": {name: grades[name].to_json() for name in CONDITIONS},
        })
    return results


def _event_json(event) -> dict[str, Any]:
    data = asdict(event)
    for key in ("wall_time_s", "harness_time_s", "model_time_s"):
        data.pop(key)
    return data


def _timing_json(event) -> dict[str, Any]:
    return {"number": event.number, "wall_time_s": round(event.wall_time_s, 6),
            "harness_time_s": round(event.harness_time_s, 6), "model_time_s": round(event.model_time_s, 6),
            "latency_source": event.latency_source}


def _snapshot_json(snapshot) -> dict[str, Any]:
    return {"end": snapshot.end, "live_start": snapshot.live_start, "kept": list(snapshot.kept),
            "compactions": snapshot.compactions, "est_tokens": snapshot.est_tokens,
            "true_tokens": snapshot.true_tokens, "summary": snapshot.summary}


def _summary_json(case: Case, call: SummaryCall, config: RunConfig) -> dict[str, Any]:
    """A summary measured against its own compaction; a rejected one (no compaction) is marked so."""
    request, result = call.request, call.result
    superseded = [value for probe in case.probes if probe.kind == "update" and probe.planted_at < call.tail_start
                  for value in probe.none]
    check = check_summary(call.event.number if call.event else None, result.text, request.head,
                          request.previous_summary, call.request_tokens, call.summary_tokens, config.sections,
                          superseded)
    return {**check.to_json(), "model": result.model, "finish_reason": result.finish_reason,
            "truncated": bool(result.extra.get("truncated")), "latency_source": result.latency_source,
            **({"rejected": True} if call.rejected else {})}


def _recorded_summaries_json(case: Case, replay: Replay) -> list[dict[str, Any]]:
    """The summary-level checks of the session's own summaries (the `recorded` policy), as for ours; the
    section check is left out (the sections are our prompt's, not the agent's)."""
    from harness.policy.recorded import recorded_points
    from harness.tokens import count_message, counter

    recorded = [e for e in replay.events if e.source == "recorded"]
    if not recorded:
        return []
    points, tokens = recorded_points(case.session), counter("o200k")
    out, previous = [], None
    for event, point in zip(recorded, points):
        head = case.session.messages[event.head_start:event.tail_start]
        superseded = [v for probe in case.probes if probe.kind == "update" and probe.planted_at < event.tail_start
                      for v in probe.none]
        head_tokens = sum(count_message(tokens, m) for m in head)
        check = check_summary(event.number, point.summary, head, previous, head_tokens, event.summary_tokens, (),
                              superseded)
        out.append({**check.to_json(), "model": f"recorded:{point.origin}", "finish_reason": "recorded",
                    "truncated": False, "latency_source": "recorded"})
        previous = point.summary
    return out


def summary_cost(calls, config: RunConfig) -> dict[str, Any]:
    """Dollars of the summarizer calls (only they are charged to compaction), labelled by usage source:
    live (billed), recorded (a cassette), modelled (the emulator's cache simulation)."""
    from harness.models.pricing import cost, load_prices

    spec = check_spec(config.summarizer_spec)
    sources = sorted({result.latency_source for _, result in calls})
    if spec.base_url and not spec.emulated:
        return {"usd": None, "source": "/".join(sources), "note": "no price for a custom server"}
    prices = load_prices(config.prices)
    usd = sum(cost(result.usage, str(spec), prices) for _, result in calls if result.usage is not None)
    return {"usd": round(usd, 6), "per_compaction": round(usd / len(calls), 6) if calls else None,
            "source": "/".join(sources) or None}


def _usage_totals(calls) -> dict[str, int]:
    total = {"input_tokens": 0, "cached_input_tokens": 0, "cache_write_tokens": 0, "output_tokens": 0, "calls": 0}
    for _, result in calls:
        if result.usage is not None:
            for key in total.keys() - {"calls"}:
                total[key] += getattr(result.usage, key)
        total["calls"] += 1
    return total


# ---------------------------------------------------------------------------------------------
# the matrix


def header(config: RunConfig, run_id: str, label: str | None) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "run_id": run_id, "label": label, "created": now(),
            "harness_version": harness_version(), "git_commit": git_commit(),
            "configuration": {**config.describe(), "record_mode": config.record_mode,
                              "cassettes": config.cassettes if config.record_mode else None}}


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    index, sep, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = 0
    if not sep or not 1 <= i <= n:
        raise HarnessError(f"--shard {text!r}: expected I/N with 1 <= I <= N, e.g. 2/3")
    return i, n


def in_shard(position: int, shard: tuple[int, int] | None) -> bool:
    """Round-robin over the sorted (configuration, case) matrix: every machine computes the same split."""
    return shard is None or position % shard[1] == shard[0] - 1


def matrix(cases: list[Case], configs: list[RunConfig], shard: tuple[int, int] | None) -> dict[RunConfig, list[Case]]:
    """The cases each configuration runs on this shard."""
    cells = sorted(((config.key(), case.id, config, case) for config in configs for case in cases),
                   key=lambda cell: cell[:2])
    chosen: dict[RunConfig, list[Case]] = {config: [] for config in configs}
    for position, (_, _, config, case) in enumerate(cells):
        if in_shard(position, shard):
            chosen[config].append(case)
    return chosen


def run_cases(cases: list[Case], config: RunConfig, folder: RunFolder, *, run_id: str, label: str | None = None,
              resume: bool = False, repeat: int = 1, concurrency: int = 1, shard: str | None = None,
              on_case: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Evaluate every case (x repeat) and write as each finishes. Returns the finished run document."""
    from harness.results.aggregate import aggregate

    config.validate()
    _check_price(config)
    for spec in {config.model, config.summarizer_spec, config.answerer_spec, config.judge} - {None}:
        _check_key(spec, config)
    folder.create({**header(config, run_id, label), **({"shard": shard} if shard else {})}, resume)
    done = folder.finished_cases() if resume else set()
    todo = [(case, r) for case in cases for r in range(repeat) if (case.id, r) not in done]

    def one(case: Case, r: int) -> dict[str, Any]:
        try:
            record = evaluate_case(case, config, r)
        except HarnessError as exc:
            record = {"case": case.id, "pool": case.pool, "repeat": r, "status": "error", "error": str(exc)}
        except Exception as exc:  # isolate the case; the run goes on and reports it
            record = {"case": case.id, "pool": case.pool, "repeat": r, "status": "error",
                      "error": f"{type(exc).__name__}: {exc}"}
        folder.write_case(record)
        return record

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures = [pool.submit(one, case, r) for case, r in todo]
        try:
            for future in as_completed(futures):
                record = future.result()
                rebuild_run(folder, aggregate)
                if on_case:
                    on_case(record)
        except BaseException:
            # Interrupted: start nothing new; what finished is already on disk for --resume.
            pool.shutdown(wait=True, cancel_futures=True)
            rebuild_run(folder, aggregate)
            raise
    return rebuild_run(folder, aggregate, finished=True)


def _check_price(config: RunConfig) -> None:
    """An unknown summarizer price fails before any work, saying how to add it."""
    from harness.models.pricing import load_prices, resolve

    spec = check_spec(config.summarizer_spec)
    if not spec.base_url or spec.emulated:
        resolve(str(spec), load_prices(config.prices))


def _check_key(spec: str, config: RunConfig) -> None:
    """Fail before any work when a key is needed and missing (opening a client checks it)."""
    parsed = check_spec(spec)
    if parsed.provider == "builtin" or parsed.emulated:
        return
    if config.record_mode == "none":
        return  # replay only: no key needed
    open_client(spec).close()


def default_run_id(config: RunConfig, label: str | None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    parts = [config.policy, config.model] + ([config.summarizer] if config.summarizer != "same" else [])
    name = label or "-".join(parts)
    return f"{stamp}-{re.sub(r'[^A-Za-z0-9._-]+', '_', name)}"


def results_path(out: str | None, run_id: str) -> Path:
    return Path(out) if out else Path("results") / run_id
