"""What a case spent, by role: the summarizer (charged to compaction), the answerer and the judge (the cost
of measuring). Each role's tokens and dollars carry their source: live (billed usage), recorded (a
cassette), modelled (the emulator's cache simulation); the builtin model is free and labelled so."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Iterable

from harness.models.base import ModelClient, ModelRequest, ModelResponse, Usage
from harness.results.schema import RoleCost

class MeteredClient(ModelClient):
    """A client that sums the usage of every response it returns, and where the usage came from."""

    def __init__(self, inner: ModelClient):
        self.inner, self.spec, self.name = inner, inner.spec, inner.name
        self.usage, self.calls, self.sources = Usage(), 0, set()
        self._lock = threading.Lock()

    def complete(self, request: ModelRequest) -> ModelResponse:
        response = self.inner.complete(request)
        with self._lock:
            self.usage = self.usage + response.usage
            self.calls += 1
            self.sources.add(response.latency_source)
        return response


@dataclass
class Meters:
    """The answerer and judge of one case, metered."""

    answerer_client: ModelClient
    judge_client: ModelClient | None = None
    answerer: MeteredClient = field(init=False)
    judge: MeteredClient | None = field(init=False)

    def __post_init__(self) -> None:
        self.answerer = MeteredClient(self.answerer_client)
        self.judge = MeteredClient(self.judge_client) if self.judge_client is not None else None


def role_costs(plan: Any, calls: Iterable[tuple[Any, Any]], meters: Meters) -> tuple[RoleCost, ...]:
    """The three roles' usage and dollars for one case (a role the run does not use is left out)."""
    results = [result for _, result in calls]
    summary_usage = sum((r.usage for r in results if r.usage is not None), Usage())
    out = [_role("summarizer", plan.config.summarizer_spec, summary_usage, len(results),
                 {r.latency_source for r in results}, plan)]
    out.append(_role("answerer", plan.config.answerer_spec, meters.answerer.usage, meters.answerer.calls,
                     meters.answerer.sources, plan))
    if meters.judge is not None and plan.config.judge:
        out.append(_role("judge", plan.config.judge, meters.judge.usage, meters.judge.calls, meters.judge.sources,
                         plan))
    return tuple(out)


def _role(role: str, spec: str, usage: Usage, calls: int, sources: set[str], plan: Any) -> RoleCost:
    source = "builtin" if spec == "builtin" else "/".join(sorted(sources)) or None
    return RoleCost(role, spec, calls, usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens,
                    usage.output_tokens, dollars(spec, usage, plan), source)


def dollars(spec: str, usage: Usage, plan: Any) -> float | None:
    """None for a model with no price (a custom server)."""
    from harness.errors import HarnessError
    from harness.models.pricing import cost, load_prices

    parsed = plan.spec(spec)
    if parsed.base_url and not parsed.emulated:
        return None
    try:
        return round(cost(usage, spec, plan.prices if plan.prices is not None else load_prices(plan.config.prices)), 6)
    except HarnessError:
        return None
