"""The price of a run before its first request: requests and tokens per role and condition, dollars from
the price table with the prompt cache on and off, and the wall time at the chosen concurrency. Every figure
is `modelled`.

How: each case is replayed through the policy with the placeholder summarizer writing at its budget (no
model), which gives the compactions and their request sizes; each probe's contexts are then sized as the run
would build them (the ceiling within the answerer's window, contexts over it not sent). Cache on: a
context's first request writes its prefix (Anthropic bills the write at its write rate; OpenAI writes for
free) and the others read it, the question after it uncached; a summarizer call meets a cold cache (the
agent's own requests are not replayed). Outputs are billed at their budgets, an upper bound.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from harness.cases.schema import Case
from harness.compaction import Compactor
from harness.compaction.summarizer import PlaceholderSummarizer
from harness.models.base import Usage
from harness.probes import ANSWER_INSTRUCTION, ANSWER_TOKENS, CONDITIONS, JUDGE_TOKENS, conditions, judge_request
from harness.run.ceiling import CeilingBuilder
from harness.run.config import RunPlan
from harness.run.spend import dollars
from harness.tokens import counter

# A latency model for the wall time (assumed figures, unverified: a hosted model's typical time to first
# token, prefill and decode speeds); the builtin model takes no model time.
FIRST_TOKEN_S = 0.8
PREFILL_TOKENS_PER_S = 20_000
OUTPUT_TOKENS_PER_S = 60
MIN_CACHEABLE = 1024  # both providers' documented minimum for most models (PROVIDERS.md)
OPENAI_STEP = 128


@dataclass
class Line:
    """One role under one condition: requests and tokens, cache on (read / written) and dollars both ways."""

    role: str
    condition: str
    spec: str
    requests: int = 0
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    usd_cache_on: float | None = 0.0
    usd_cache_off: float | None = 0.0
    model_time_s: float = 0.0

    def add(self, count: int, prompt: int, read: int, written: int, output: int, plan: RunPlan) -> None:
        self.requests += count
        self.input_tokens += count * prompt
        self.cache_read_tokens += count * read
        self.cache_write_tokens += count * written
        self.output_tokens += count * output
        on = dollars(self.spec, Usage(prompt, read, written, output), plan)
        off = dollars(self.spec, Usage(prompt, 0, 0, output), plan)
        self.usd_cache_on = None if on is None or self.usd_cache_on is None else self.usd_cache_on + count * on
        self.usd_cache_off = None if off is None or self.usd_cache_off is None else self.usd_cache_off + count * off
        if self.spec != "builtin":
            self.model_time_s += count * (FIRST_TOKEN_S + (prompt - read) / PREFILL_TOKENS_PER_S
                                          + output / OUTPUT_TOKENS_PER_S)

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        for key in ("usd_cache_on", "usd_cache_off"):
            data[key] = None if data[key] is None else round(data[key], 4)
        data["model_time_s"] = round(self.model_time_s, 1)
        return data


@dataclass
class Estimate:
    """A configuration's estimate: its lines, and the model time of each case (for the wall time)."""

    label: str
    cache: bool
    lines: dict[tuple[str, str], Line] = field(default_factory=dict)
    case_time_s: list[float] = field(default_factory=list)
    not_sent: int = 0

    def line(self, role: str, condition: str, spec: str) -> Line:
        return self.lines.setdefault((role, condition), Line(role, condition, spec))

    def usd(self, cache: bool) -> float | None:
        values = [line.usd_cache_on if cache else line.usd_cache_off for line in self.lines.values()]
        return None if None in values else round(sum(v for v in values if v is not None), 4)

    def wall_time_s(self, concurrency: int, rpm: int | None = None, tpm: int | None = None) -> float:
        """Cases longest first on `concurrency` workers, each case's requests one after another; a
        requests- or tokens-per-minute cap is a floor under it."""
        workers = [0.0] * max(1, concurrency)
        for seconds in sorted(self.case_time_s, reverse=True):
            heapq.heapreplace(workers, workers[0] + seconds)
        floors = [max(workers)]
        requests = sum(line.requests for line in self.lines.values())
        tokens = sum(line.input_tokens + line.output_tokens for line in self.lines.values())
        if rpm:
            floors.append(60.0 * requests / rpm)
        if tpm:
            floors.append(60.0 * tokens / tpm)
        return round(max(floors), 1)

    def to_json(self, concurrency: int, rpm: int | None = None, tpm: int | None = None) -> dict[str, Any]:
        return {"configuration": self.label, "cache": self.cache, "source": "modelled",
                "lines": [line.to_json() for line in self.lines.values()],
                "requests": sum(line.requests for line in self.lines.values()),
                "usd_cache_on": self.usd(True), "usd_cache_off": self.usd(False),
                "usd": self.usd(self.cache), "not_sent": self.not_sent, "concurrency": concurrency,
                "wall_time_s": self.wall_time_s(concurrency, rpm, tpm)}


def estimate_run(cases: list[Case], plan: RunPlan, label: str, repeat: int = 1) -> Estimate:
    estimate = Estimate(label, plan.config.cache)
    for case in cases:
        before = sum(line.model_time_s for line in estimate.lines.values())
        for _ in range(repeat):
            _estimate_case(case, plan, estimate)
        estimate.case_time_s.append(sum(line.model_time_s for line in estimate.lines.values()) - before)
    return estimate


def _estimate_case(case: Case, plan: RunPlan, estimate: Estimate) -> None:
    config = plan.config
    policy_config = plan.policy_config(case)
    from harness.policy import make_policy

    replay = Compactor(case.session, make_policy(config.policy, policy_config), PlaceholderSummarizer(),
                       points=set(case.points) | {"end"}, true=case.true_tokens).run()
    summarizer = estimate.line("summarizer", "compaction", config.summarizer_spec)
    for call in replay.summaries:
        cold = _cold_write(config.summarizer_spec, call.request_tokens) if config.cache else 0
        summarizer.add(1, call.request_tokens, 0, cold, call.request.budget_tokens, plan)
    _estimate_answers(case, replay, plan, estimate)


def _estimate_answers(case: Case, replay: Any, plan: RunPlan, estimate: Estimate) -> None:
    tokens = counter("o200k")
    sizes = case.true_tokens
    window = plan.answerer_window(case)
    builder = CeilingBuilder(case.session, sizes, window)
    # context key -> (condition, tokens, per request: (question tokens, judge prompt tokens))
    contexts: dict[tuple[str, ...], tuple[str, int, list[tuple[int, int]]]] = {}
    ceilings: dict[str, Any] = {}
    for probe in case.probes:
        snapshot = replay.snapshots.get(probe.at)
        if snapshot is None:
            continue
        question = tokens.count_text(ANSWER_INSTRUCTION.format(question=probe.question))
        judged = _judge_tokens(probe, tokens) if plan.config.judge else 0
        named = conditions(case.session, snapshot)
        if probe.at not in ceilings:
            ceilings[probe.at] = builder.for_point([p for p in case.probes if p.at == probe.at], snapshot.end)
        ceiling, own = ceilings[probe.at], ()
        if ceiling.kind == "oracle" and not ceiling.shows(probe):  # as the run does: the probe's own oracle
            ceiling, own = builder.oracle([probe], snapshot.end), (probe.id,)
        for name in CONDITIONS:
            if name == "full" and ceiling.kind == "oracle":
                key, label, size = (probe.at, "oracle", *own), "oracle", ceiling.tokens
            else:
                key, label = (probe.at, name), name
                size = contexts[key][1] if key in contexts else named[name].prompt_tokens(sizes)
            contexts.setdefault(key, (label, size, []))[2].append((question, judged))
    for label, size, asked in contexts.values():
        if not window.fits(size):
            estimate.not_sent += len(asked)
            continue
        _add_context(estimate.line("answerer", label, plan.config.answerer_spec), size, [q for q, _ in asked], plan)
        if plan.config.judge:  # every answer is judged once (a malformed reply's retry is not counted)
            judge = estimate.line("judge", label, plan.config.judge)
            for _, prompt in asked:
                judge.add(1, prompt, 0, 0, JUDGE_TOKENS, plan)


def _add_context(line: Line, size: int, questions: list[int], plan: RunPlan) -> None:
    """A context's first request writes its prefix, the others read it (cache on); the question is new."""
    cached = _cacheable(line.spec, size) if plan.config.cache else 0
    anthropic = line.spec.startswith("anthropic:")
    for position, question in enumerate(questions):
        prompt = size + question
        if position == 0:
            line.add(1, prompt, 0, cached if anthropic else 0, ANSWER_TOKENS, plan)
        else:
            line.add(1, prompt, cached, 0, ANSWER_TOKENS, plan)


def _cacheable(spec: str, size: int) -> int:
    if size < MIN_CACHEABLE or spec == "builtin":
        return 0
    return size - size % OPENAI_STEP if spec.startswith("openai:") else size


def _cold_write(spec: str, size: int) -> int:
    """A summarizer prefix nobody warmed: Anthropic writes it at the breakpoints (billed as a write)."""
    return _cacheable(spec, size) if spec.startswith("anthropic:") else 0


def _judge_tokens(probe: Any, tokens: Any) -> int:
    request = judge_request(probe, "", "judge")
    return tokens.count_text((request.system or "") + request.messages[0].content) + ANSWER_TOKENS


def reaches_network(plan: RunPlan) -> bool:
    """Whether a run may send requests to a provider (a live run): a model that is neither the builtin nor
    the emulator, in a record mode that may record."""
    if plan.config.record_mode == "none":
        return False
    return any(spec.provider != "builtin" and not spec.emulated for _, spec in plan.specs)


def over_budget(estimates: list[Estimate], max_usd: float) -> str | None:
    """Why the run would exceed --max-usd (the estimate at each run's own cache setting), or None. A model
    with no price counts as unknown, which no budget covers."""
    total = 0.0
    for estimate in estimates:
        usd = estimate.usd(estimate.cache)
        if usd is None:
            return (f"--max-usd {max_usd:g}: {estimate.label} uses a model with no price, so the run's cost is "
                    f"unknown; add its row with --prices FILE")
        total += usd
    if total <= max_usd:
        return None
    return (f"--max-usd {max_usd:g}: the run is estimated at ${total:.2f} (modelled, cache as configured); "
            f"nothing was sent. Raise --max-usd, choose fewer cases with --cases, or a cheaper model")
