"""Failed requests in a case: what one costs, and no more (issue 17): a probe whose point lay after a failed
summarizer request is recorded as lost to it; a failed answer or judge request costs only that condition's
answer grade (`retained` needs no request and is kept)."""

from __future__ import annotations

from harness.cases.schema import Probe
from harness.failure import RequestFailed, RequestFailure
from harness.models.base import ModelClient, ModelRequest, ModelResponse
from harness.probes import Condition, ContextText, grade
from harness.redact import redact
from harness.results.schema import ConditionGrade, ProbeRecord


class Named(ModelClient):
    """A client whose failed requests say what they were for (`answer`, `judge`), for the probe's record."""

    def __init__(self, client: ModelClient, request: str) -> None:
        self.client, self.request = client, request
        self.spec, self.name = client.spec, client.name

    def complete(self, request: ModelRequest) -> ModelResponse:
        try:
            return self.client.complete(request)
        except RequestFailed as exc:
            raise RequestFailed(str(exc), exc.request or self.request) from None

    def close(self) -> None:
        self.client.close()


def condition_grade(asked: Condition, probe: Probe, answerer: ModelClient, answerer_model: str,
                    judge: ModelClient | None, judge_model: str, text: ContextText, *, cache_key: str | None = None,
                    not_sent: str | None = None) -> ConditionGrade:
    """The condition's grade; when its answer or judge request failed for good, the `retained` grade alone
    with the failure (the answer grade is missing, never a fail)."""
    try:
        return ConditionGrade.from_grade(grade(asked, probe, answerer, answerer_model, judge, judge_model, text,
                                               cache_key=cache_key, not_sent=not_sent))
    except RequestFailed as exc:
        kept = grade(asked, probe, None, answerer_model, None, "", text)
        return ConditionGrade.from_grade(kept, RequestFailure(exc.request or "answer", redact(str(exc))))


def lost_probe(probe: Probe, failure: RequestFailure, expected: tuple[str, ...]) -> ProbeRecord:
    """A probe whose point the replay never reached because a summarizer request failed before it: not
    graded, and neither valid nor invalid (the aggregates count it among failed requests)."""
    return ProbeRecord(probe.id, probe.kind, probe.at, False, planted_at=probe.planted_at, question=probe.question,
                       expected=expected, failure=failure)
