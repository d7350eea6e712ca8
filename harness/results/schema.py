"""The run.json and case-file records: the one place their field names live.

Each record is a frozen dataclass with `to_json` (the exact document written today: same keys, same
order) and `from_json` (reading a document back, e.g. on --resume or merge). Renderers and studies may
still read the JSON form as plain dicts; `to_json` gives only JSON types (lists, not tuples) so that a
document built in memory equals the one read back from disk. The module is a little over 400 lines because
every record of the document lives here, by design: splitting it would scatter the field names again.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Mapping, TypedDict, TypeVar

from harness.failure import RequestFailure

SCHEMA_VERSION = 2  # raised on every format change; results.versions reads the older ones
R = TypeVar("R", bound="_Flat")


def _plain(value: Any) -> Any:
    """JSON types only: tuples become lists (recursively), mappings become fresh dicts."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


class _Flat:
    """A record whose document is its fields in order, each as JSON (tuples as lists)."""

    def to_json(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        """Lists back to tuples; a field missing from an older document takes its default."""
        return cls(**{f.name: tuple(data[f.name]) if isinstance(data[f.name], list) else data[f.name]
                      for f in fields(cls) if f.name in data})  # type: ignore[arg-type]


@dataclass(frozen=True)
class Configuration:
    """What the run was asked to do. `sections` and the recorded-points pair are written only when set,
    as today; `record_mode` and `cassettes` are the I/O part, left out of the configuration key."""

    policy: str
    model: str
    summarizer: str
    summarizer_spec: str
    answerer: str
    judge: str | None
    cache: bool
    settings: tuple[tuple[str, Any], ...] = ()
    sections: tuple[str, ...] | None = None  # None: the default sections
    at_recorded_points: str | None = None  # None: compacting where the policy decides
    summary_tokens: int | None = None
    record_mode: str | None = None
    cassettes: str | None = None
    control: str | None = None  # a reference control replaced the summary (at the summarizer's own size)
    answerer_window: int | None = None  # given explicitly (--answerer-window); None: the model's or the case's
    # A summary instruction other than the shipped one (--instruction): its text's digest identifies the
    # configuration; the file it came from is recorded beside it, like the cassettes, and is no part of it.
    instruction_sha256: str | None = None
    instruction_file: str | None = None
    runtime: str | None = None  # a real runtime drove the case (NAME@VERSION); its compactions are replayed
    runtime_compaction: bool = True  # False: the runtime's control, its compaction switched off
    runtime_settings: tuple[tuple[str, str], ...] = ()  # the run's values for the adapter's [settings]
    # What the reports call that instruction (its file's stem, or --label): shown, no part of the configuration.
    instruction_name: str | None = None

    def describe(self) -> dict[str, Any]:
        """The configuration without its I/O part: what identifies a configuration in the matrix."""
        return {"policy": self.policy, "model": self.model, "summarizer": self.summarizer,
                "summarizer_spec": self.summarizer_spec, "answerer": self.answerer, "judge": self.judge,
                "cache": self.cache, "settings": dict(self.settings),
                **({} if self.sections is None else {"sections": list(self.sections)}),
                **({} if self.at_recorded_points is None else
                   {"at_recorded_points": self.at_recorded_points, "summary_tokens": self.summary_tokens}),
                **({} if self.control is None else {"control": self.control}),
                **({} if self.answerer_window is None else {"answerer_window": self.answerer_window}),
                **({} if self.instruction_sha256 is None else {"instruction_sha256": self.instruction_sha256}),
                **({} if self.runtime is None else
                   {"runtime": self.runtime, "runtime_compaction": self.runtime_compaction,
                    **({"runtime_settings": dict(self.runtime_settings)} if self.runtime_settings else {})})}

    def to_json(self) -> dict[str, Any]:
        return {**self.describe(), "record_mode": self.record_mode, "cassettes": self.cassettes,
                **({} if self.instruction_file is None else {"instruction_file": self.instruction_file}),
                **({} if self.instruction_name is None else {"instruction_name": self.instruction_name})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Configuration:
        sections = data.get("sections")
        return cls(data["policy"], data["model"], data["summarizer"], data["summarizer_spec"], data["answerer"],
                   data.get("judge"), data["cache"], tuple(data.get("settings", {}).items()),
                   None if sections is None else tuple(sections), data.get("at_recorded_points"),
                   data.get("summary_tokens"), data.get("record_mode"), data.get("cassettes"), data.get("control"),
                   data.get("answerer_window"), data.get("instruction_sha256"), data.get("instruction_file"),
                   data.get("runtime"), data.get("runtime_compaction", True),
                   tuple((data.get("runtime_settings") or {}).items()), data.get("instruction_name"))


@dataclass(frozen=True)
class RunHeader:
    """run.json before its cases and aggregates."""

    run_id: str
    label: str | None
    created: str
    harness_version: str
    git_commit: str | None
    configuration: Configuration
    shard: str | None = None
    merged_from: tuple[str, ...] | None = None
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "run_id": self.run_id, "label": self.label,
                "created": self.created, "harness_version": self.harness_version, "git_commit": self.git_commit,
                "configuration": self.configuration.to_json(),
                **({} if self.shard is None else {"shard": self.shard}),
                **({} if self.merged_from is None else {"merged_from": list(self.merged_from)})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunHeader:
        merged = data.get("merged_from")
        return cls(data["run_id"], data.get("label"), data["created"], data["harness_version"],
                   data.get("git_commit"), Configuration.from_json(data["configuration"]), data.get("shard"),
                   None if merged is None else tuple(merged))  # read in the current format (results.versions)


@dataclass(frozen=True)
class EventRecord(_Flat):
    """A compaction event as run.json keeps it: the event without its timings (those are in `timings`)."""

    number: int
    send_index: int
    source: str
    head_start: int
    tail_start: int
    turns_kept: int
    steps_kept: int
    truncated_to_step: bool
    tokens_before_est: int
    tokens_before_true: int
    tokens_after_est: int
    tokens_after_true: int
    summary_tokens: int
    summary_request_tokens: int
    latency_source: str
    summarizer: str
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None
    summary_budget_tokens: int = 0

    @classmethod
    def from_event(cls, event: Any) -> EventRecord:
        """From a CompactionEvent: its fields of these names (the timing fields are TimingRecord's)."""
        return cls(**{f.name: getattr(event, f.name) for f in fields(cls)})


@dataclass(frozen=True)
class TimingRecord(_Flat):
    """Where one compaction's time went, rounded to microseconds."""

    number: int
    wall_time_s: float
    harness_time_s: float
    model_time_s: float
    latency_source: str

    @classmethod
    def from_event(cls, event: Any) -> TimingRecord:
        return cls(event.number, round(event.wall_time_s, 6), round(event.harness_time_s, 6),
                   round(event.model_time_s, 6), event.latency_source)


@dataclass(frozen=True)
class Timings:
    replay_s: float
    grading_s: float
    compactions: tuple[TimingRecord, ...]

    def to_json(self) -> dict[str, Any]:
        return {"replay_s": self.replay_s, "grading_s": self.grading_s,
                "compactions": [t.to_json() for t in self.compactions]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Timings:
        return cls(data["replay_s"], data["grading_s"], tuple(TimingRecord.from_json(t) for t in data["compactions"]))


@dataclass(frozen=True)
class SummaryRecord(_Flat):
    """The checks of one summary (metrics.SummaryCheck) and what wrote it. A summary the policy rejected
    (gemini-cli: it would grow the history) belongs to no compaction and says so (`rejected`, written only then)."""

    compaction: int | None
    head_tokens: int
    summary_tokens: int
    compression_ratio: float | None
    sections_present: tuple[str, ...]
    sections_missing: tuple[str, ...]
    artifact_recall: float | None
    artifact_precision: float | None
    hallucinated_paths: tuple[str, ...]
    stale_facts: tuple[str, ...]
    model: str
    finish_reason: str
    truncated: bool
    latency_source: str
    rejected: bool = False
    not_compacted: bool = False  # a provider compaction call that returned no item (written only then)
    opaque: bool = False  # an opaque provider item: the text checks had nothing to read (written only then)
    # over budget: the summary's true tokens as written, before it was cut to its budget to be graded (written only then)
    over_budget_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        for flag in ("rejected", "not_compacted", "opaque", "over_budget_tokens"):
            if not data[flag]:
                del data[flag]
        return data


@dataclass(frozen=True)
class ConditionGrade:
    """One probe under one condition (probes.Grade as written): empty and missing values are left out."""

    retained: bool | None = None  # None: not applicable (an opaque provider compaction item), left out
    answered: bool | None = None
    answer: str | None = None
    missing: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    judged: int | None = None
    judge_reason: str | None = None
    usage: dict[str, Any] | None = None
    error: str | None = None
    judge_error: str | None = None  # the judge's reply was malformed twice: no score, never a 0
    in_system_prompt: tuple[str, ...] = ()  # expected items found only in the system prompt (not retained)
    failure: RequestFailure | None = None  # the answer or judge request failed: no answer grade, never a fail

    @classmethod
    def from_grade(cls, grade: Any, failure: RequestFailure | None = None) -> ConditionGrade:
        return cls(**{f.name: getattr(grade, f.name) for f in fields(cls) if f.name != "failure"}, failure=failure)

    def to_json(self) -> dict[str, Any]:
        return {f.name: v.to_json() if isinstance(v, RequestFailure) else _plain(v)
                for f in fields(self) if (v := getattr(self, f.name)) not in (None, ())}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ConditionGrade:
        return cls(**{k: RequestFailure.from_json(v) if k == "failure" else tuple(v) if isinstance(v, list) else v
                      for k, v in data.items()})


@dataclass(frozen=True)
class ProbeRecord:
    """One probe of a case. A probe whose point was never reached has only id, kind, at, valid and the
    reason; None fields are left out of the document."""

    id: str
    kind: str
    at: str
    valid: bool
    planted_at: int | None = None
    fact_age: int | None = None
    age_bucket: str | None = None
    compactions_survived: int | None = None
    invalid_reason: str | None = None
    floor_survives: bool | None = None
    conditions: tuple[tuple[str, ConditionGrade], ...] | None = None
    compactions_before: int | None = None  # compactions before the probe point: none, and it tests no summary
    question: str | None = None  # the probe's question and expected facts, so a report can show a lost probe
    expected: tuple[str, ...] | None = None  # each `all` item as text, alternatives joined by " or "
    ceiling: str | None = None  # full | oracle: what the `full` condition held (run.ceiling)
    ceiling_tokens: int | None = None  # the oracle's size, when the full history did not fit the answerer
    # The summarizer request its point needed failed: not graded, and counted as a failed request, not invalid.
    failure: RequestFailure | None = None

    @property
    def failures(self) -> tuple[tuple[str | None, RequestFailure], ...]:
        """(condition, failure) for every grade a failed request cost: the whole probe (None), or conditions."""
        if self.failure is not None:
            return ((None, self.failure),)
        return tuple((name, g.failure) for name, g in self.conditions or () if g.failure is not None)

    def grade(self, condition: str) -> ConditionGrade | None:
        return dict(self.conditions or ()).get(condition)

    def passed(self, condition: str, grade: str) -> bool | None:
        """`grade` ("answered" or "retained") under `condition`, None when not graded so."""
        result = self.grade(condition)
        return None if result is None else getattr(result, grade)

    def to_json(self) -> dict[str, Any]:
        data = {"id": self.id, "kind": self.kind, "at": self.at, "planted_at": self.planted_at,
                "fact_age": self.fact_age, "age_bucket": self.age_bucket,
                "compactions_survived": self.compactions_survived, "compactions_before": self.compactions_before,
                "valid": self.valid,
                "invalid_reason": self.invalid_reason, "floor_survives": self.floor_survives,
                "conditions": None if self.conditions is None else {n: g.to_json() for n, g in self.conditions},
                "question": self.question, "expected": None if self.expected is None else list(self.expected),
                "ceiling": self.ceiling, "ceiling_tokens": self.ceiling_tokens,
                "failure": None if self.failure is None else self.failure.to_json()}
        return {k: v for k, v in data.items() if v is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProbeRecord:
        conditions = data.get("conditions")
        return cls(data["id"], data["kind"], data["at"], data["valid"], data.get("planted_at"), data.get("fact_age"),
                   data.get("age_bucket"), data.get("compactions_survived"), data.get("invalid_reason"),
                   data.get("floor_survives"),
                   None if conditions is None else tuple((n, ConditionGrade.from_json(g)) for n, g in conditions.items()),
                   data.get("compactions_before"), data.get("question"),
                   None if data.get("expected") is None else tuple(data["expected"]),
                   data.get("ceiling"), data.get("ceiling_tokens"),
                   None if data.get("failure") is None else RequestFailure.from_json(data["failure"]))


@dataclass(frozen=True)
class UsageTotals(_Flat):
    """Tokens of a case's summarizer calls, summed over the calls."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0


@dataclass(frozen=True)
class CostRecord:
    """Dollars of the summarizer calls, labelled by usage source. A custom server has no price: then
    `usd` is None and `note` says why (and there is no per-compaction figure)."""

    usd: float | None
    source: str | None
    per_compaction: float | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.note is not None:
            return {"usd": self.usd, "source": self.source, "note": self.note}
        return {"usd": self.usd, "per_compaction": self.per_compaction, "source": self.source}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CostRecord:
        return cls(data.get("usd"), data.get("source"), data.get("per_compaction"), data.get("note"))


@dataclass(frozen=True)
class RoleCost(_Flat):
    """One role's requests in a case (summarizer, answerer, judge): tokens, dollars (None: no price) and the
    source of the usage (live, recorded, modelled; builtin for the free offline model)."""

    role: str
    spec: str
    calls: int
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    usd: float | None
    source: str | None


@dataclass(frozen=True)
class ContextRecord(_Flat):
    """The compacted context at a probe point (case files only, not run.json)."""

    end: int
    live_start: int
    kept: tuple[int, ...]
    compactions: int
    est_tokens: int
    true_tokens: int
    summary: str | None
    # kept items with no message of their own (a recorded Codex compaction): [slot, role, content], apart from
    # the summary; written only when there are some, so other case files keep their exact keys
    kept_text: tuple[tuple[int, str | None, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        if not self.kept_text:
            del data["kept_text"]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ContextRecord:
        record = super().from_json(data)
        return replace(record, kept_text=tuple(tuple(item) for item in record.kept_text))

    @classmethod
    def from_snapshot(cls, snapshot: Any) -> ContextRecord:
        return cls(snapshot.end, snapshot.live_start, tuple(snapshot.kept), snapshot.compactions,
                   snapshot.est_tokens, snapshot.true_tokens, snapshot.summary,
                   tuple(tuple(item) for item in snapshot.kept_text))


@dataclass(frozen=True)
class Timeline:
    """The context's size at every send (index, estimated, true tokens), with the window and reserve the
    policy ran under: what report.html draws."""

    context_window: int
    reserve_tokens: int
    sends: tuple[tuple[int, int, int], ...]

    def to_json(self) -> dict[str, Any]:
        return {"context_window": self.context_window, "reserve_tokens": self.reserve_tokens,
                "sends": [list(s) for s in self.sends]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Timeline:
        return cls(data["context_window"], data["reserve_tokens"], tuple(tuple(s) for s in data["sends"]))


@dataclass(frozen=True)
class CaseOutcome:
    """What a finished case holds beyond its identity."""

    messages: int
    events: tuple[EventRecord, ...]
    risk_counts: tuple[tuple[str, int], ...]
    summaries: tuple[SummaryRecord, ...]
    probes: tuple[ProbeRecord, ...]
    usage: UsageTotals
    cost: CostRecord
    timings: Timings
    contexts: tuple[tuple[str, ContextRecord], ...]
    context_whole: bool = True  # at every probe point: nothing folded, no summary, no message kept apart
    timeline: Timeline | None = None  # tokens per send (case files only, as contexts)
    role_costs: tuple[RoleCost, ...] = ()  # every role's tokens and dollars (cost above: the summarizer's alone)
    failure: RequestFailure | None = None  # the summarizer request that stopped the replay (written only then)
    runtime: Mapping[str, Any] | None = None  # a real runtime's drive (harness.runtimes.record), JSON as written

    def to_json(self, contexts: bool = True) -> dict[str, Any]:
        return {"messages": self.messages, "context_whole": self.context_whole,
                **({} if self.failure is None else {"failure": self.failure.to_json()}),
                **({} if self.runtime is None else {"runtime": dict(self.runtime)}),
                "events": [e.to_json() for e in self.events],
                "risk_counts": dict(self.risk_counts), "summaries": [s.to_json() for s in self.summaries],
                "probes": [p.to_json() for p in self.probes], "usage": self.usage.to_json(),
                "cost": self.cost.to_json(), "role_costs": [c.to_json() for c in self.role_costs],
                "timings": self.timings.to_json(),
                **({"contexts": {point: c.to_json() for point, c in self.contexts}} if contexts else {}),
                **({"timeline": self.timeline.to_json()} if contexts and self.timeline is not None else {})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseOutcome:
        return cls(data["messages"], tuple(EventRecord.from_json(e) for e in data["events"]),
                   tuple(data["risk_counts"].items()), tuple(SummaryRecord.from_json(s) for s in data["summaries"]),
                   tuple(ProbeRecord.from_json(p) for p in data["probes"]), UsageTotals.from_json(data["usage"]),
                   CostRecord.from_json(data["cost"]), Timings.from_json(data["timings"]),
                   tuple((point, ContextRecord.from_json(c)) for point, c in data.get("contexts", {}).items()),
                   data.get("context_whole", True),
                   Timeline.from_json(data["timeline"]) if "timeline" in data else None,
                   tuple(RoleCost.from_json(c) for c in data.get("role_costs", ())),
                   RequestFailure.from_json(data["failure"]) if data.get("failure") else None,
                   data.get("runtime"))


@dataclass(frozen=True)
class CaseRecord:
    """One case of a run (one repeat of it): `cases/<key>.json` with its contexts, run.json without."""

    case: str
    pool: str
    repeat: int
    status: str  # ok | error
    error: str | None = None
    outcome: CaseOutcome | None = None  # set when status is ok

    @classmethod
    def failed(cls, case: str, pool: str, repeat: int, error: str) -> CaseRecord:
        return cls(case, pool, repeat, "error", error)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def complete(self) -> bool:
        """Evaluated with no request failed: what --resume need not run again."""
        return self.ok and self.outcome is not None and self.outcome.failure is None \
            and not any(p.failures for p in self.outcome.probes)

    @property
    def key(self) -> str:
        """The case's key in run.json and the stem of its case file: `<case>` or `<case>.r<repeat>`."""
        return self.case + (f".r{self.repeat}" if self.repeat else "")

    def to_json(self, contexts: bool = True) -> dict[str, Any]:
        return {"case": self.case, "pool": self.pool, "repeat": self.repeat, "status": self.status,
                **({} if self.error is None else {"error": self.error}),
                **({} if self.outcome is None else self.outcome.to_json(contexts))}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseRecord:
        outcome = CaseOutcome.from_json(data) if data.get("status") == "ok" else None
        return cls(data["case"], data["pool"], data.get("repeat", 0), data["status"], data.get("error"), outcome)


class Aggregates(TypedDict, total=False):
    """run.json's `aggregates` (built by results.aggregate): a typed dict, as renderers read it as one."""

    grade: str
    cases: int
    cases_ok: int
    errors: dict[str, str]
    failed_requests: dict[str, Any]  # the grades failed requests cost: counted, never invalid, never a fail
    probes: int
    valid_probes: int
    invalid_probes: list[str]
    floor_survives: int
    overall: dict[str, Any]
    by_kind: dict[str, Any]
    by_pool: dict[str, Any]
    by_age: dict[str, Any]
    by_compactions_survived: dict[str, Any]
    compactions: dict[str, int]
    summary: dict[str, Any]
    usage: dict[str, int]
    cost: dict[str, Any]
    cost_by_role: dict[str, Any]  # per role: calls, tokens, dollars, source, cache_read_share
    ceilings: dict[str, int]  # probes graded against each ceiling (full, oracle) and the requests not sent
    latency: dict[str, Any]
    headline: dict[str, Any]  # per grade: the rate over summary-testing probes and the groups beside it
    agreement: dict[str, Any] | None  # retained against answered on summary-testing probes
    judged: dict[str, Any] | None
    never_compacted: dict[str, Any]
