"""A finished run as an Inspect AI evaluation log (`.eval`), written through inspect_ai's own log API, so it opens
in `inspect view` and in the tools that read Inspect logs. inspect-ai is an optional dependency (the `inspect`
extra); it is imported only here, only when a log is asked for.

One sample per probe at its point: its input the compacted context at that point (the case's system prompt,
what the compaction kept ahead of the summary, the summary, then the case's messages from the tail's start, as
the case records them), its target the expected facts, one score per condition and grade that ran (1 passed,
0 not; `compacted/answered`, `full/retained`, ...), metadata naming case, pool, kind, point and configuration.
The log's results carry the run's headline (summary-testing probes, compacted, on the run's grade) and the pass
rate of every condition and grade over the valid probes, exactly as run.json has them."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from harness.errors import HarnessError, InputError
from harness.session import Message, Session

if TYPE_CHECKING:
    from harness.cases.schema import Case

CONDITIONS = ("compacted", "full", "floor")
GRADES = ("answered", "retained")
HEADLINE = "headline"  # the scorer holding the run's headline


def _inspect():
    try:
        import inspect_ai.log as log
        import inspect_ai.model as model
        import inspect_ai.scorer as scorer
        import inspect_ai.tool as tool
    except ImportError:
        raise HarnessError("--inspect-log needs inspect-ai: pip install 'compaction-harness[inspect]'") from None
    return log, model, scorer, tool


def check_writable(directory: Path) -> None:
    """Before the run: the log folder exists (or is made) and takes a file; otherwise one line, exit 2."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".probe-"):
            pass
    except OSError as exc:
        raise InputError(str(directory), None, "--inspect-log", f"cannot write an Inspect log there: "
                                                                 f"{exc.strerror or exc}") from None


def write(run: dict[str, Any], folder: Path, cases: Iterable[Case], directory: Path) -> Path:
    """The run (its run.json document, its folder for the contexts kept in its case files) as
    `<directory>/<run_id>.eval`, written whole or not at all (a temporary file, then renamed)."""
    log_api, _, _, _ = _inspect()
    sessions = {case.id: case.session for case in cases}
    samples = [sample for key, record in run["cases"].items()
               for sample in _samples(run, key, record, _contexts(folder, key), sessions)]
    log = log_api.EvalLog(status="success", eval=_spec(run, len(samples)), results=_results(run, len(samples)),
                          stats=log_api.EvalStats(started_at=run["created"], completed_at=run.get("finished") or
                                                  run["created"]), samples=samples)
    target = directory / f"{run['run_id']}.eval"
    partial = directory / f".{target.name}.partial.eval"
    try:
        log_api.write_eval_log(log, str(partial))
        os.replace(partial, target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise InputError(str(target), None, "--inspect-log", f"cannot write the Inspect log: "
                                                              f"{exc.strerror or exc}") from None
    return target


def _spec(run: dict[str, Any], samples: int):
    log_api, model, _, _ = _inspect()
    configuration = run["configuration"]
    return log_api.EvalSpec(
        run_id=run["run_id"], created=run["created"], task=f"compaction-harness/{_label(run)}",
        model=f"compaction-harness/{configuration.get('summarizer_spec') or configuration.get('model')}",
        dataset=log_api.EvalDataset(name="compaction-harness cases", samples=samples),
        config=log_api.EvalConfig(), model_generate_config=model.GenerateConfig(),
        packages={"compaction-harness": run.get("harness_version") or ""},
        metadata={"configuration": configuration, "git_commit": run.get("git_commit"),
                  "schema_version": run.get("schema_version")})


def _label(run: dict[str, Any]) -> str:
    """The configuration's name as the run folder has it (default-builtin, runtime-pi-builtin-same, ...)."""
    return run.get("label") or run["run_id"].split("-", 2)[-1]


def score_name(condition: str, grade: str) -> str:
    return f"{condition}/{grade}"


def _results(run: dict[str, Any], samples: int):
    log_api, _, _, _ = _inspect()
    aggregates = run["aggregates"]
    grade = aggregates["grade"]
    scores = []
    headline = ((aggregates.get("headline") or {}).get(grade) or {}).get("tests_summary") or {}
    if headline:
        scores.append(log_api.EvalScore(name=HEADLINE, scorer=HEADLINE, scored_samples=headline.get("total"),
                                        metrics=_metrics(headline, log_api), params={"grade": grade},
                                        metadata={"what": "compacted pass rate over the summary-testing probes"}))
    for grade_name in GRADES:
        overall = (aggregates.get("overall") or {}).get(grade_name) or {}
        for condition in CONDITIONS:
            if overall.get(condition):
                scores.append(log_api.EvalScore(name=score_name(condition, grade_name), scorer=grade_name,
                                                scored_samples=overall[condition].get("total"),
                                                metrics=_metrics(overall[condition], log_api),
                                                metadata={"what": "pass rate over the valid probes"}))
    return log_api.EvalResults(total_samples=samples, completed_samples=samples, scores=scores,
                               headline=log_api.HeadlineMetric(scorer=HEADLINE, metric="rate") if headline else None,
                               metadata={"grade": grade, "valid_probes": aggregates.get("valid_probes"),
                                         "invalid_probes": aggregates.get("invalid_probes"),
                                         "compactions": aggregates.get("compactions")})


def _metrics(rate: dict[str, Any], log_api) -> dict[str, Any]:
    values = {"rate": rate.get("rate"), "passed": rate.get("passed"), "total": rate.get("total")}
    wilson = rate.get("wilson95") or (None, None)
    values.update({"wilson95_low": wilson[0], "wilson95_high": wilson[1]})
    return {name: log_api.EvalMetric(name=name, value=value) for name, value in values.items() if value is not None}


def _contexts(folder: Path, key: str) -> dict[str, Any]:
    """The compacted context at each probe point of one case, from its case file (run.json keeps none)."""
    path = folder / "cases" / f"{key}.json"
    return (json.loads(path.read_text(encoding="utf-8")).get("contexts") or {}) if path.is_file() else {}


def _samples(run: dict[str, Any], key: str, record: dict[str, Any], contexts: dict[str, Any],
             sessions: dict[str, Session]) -> list:
    log_api, _, scorer, _ = _inspect()
    out = []
    for probe in record.get("probes") or ():
        scores = {score_name(condition, grade): scorer.Score(value=int(bool(result[grade])),
                                                             answer=result.get("answer"),
                                                             explanation=_explain(result))
                  for condition, result in (probe.get("conditions") or {}).items() for grade in GRADES
                  if isinstance(result.get(grade), bool)}
        session = sessions.get(record.get("case") or key)
        out.append(log_api.EvalSample(
            id=f"{key}/{probe['id']}@{probe['at']}", epoch=int(record.get("repeat") or 0) + 1,
            input=_context(session, contexts.get(str(probe["at"]))) or probe.get("question") or probe["id"],
            target=list(probe.get("expected") or ()), scores=scores,
            metadata={"case": record.get("case") or key, "pool": record.get("pool"), "probe": probe["id"],
                      "kind": probe.get("kind"), "point": probe["at"], "question": probe.get("question"),
                      "configuration": _label(run), "valid": probe.get("valid"),
                      "invalid_reason": probe.get("invalid_reason"),
                      "floor_survives": probe.get("floor_survives"),
                      "compactions_before": probe.get("compactions_before")}))
    return out


def _explain(result: dict[str, Any]) -> str | None:
    parts = [f"{name}: {', '.join(map(str, result[name]))}" for name in ("missing", "forbidden") if result.get(name)]
    return "; ".join(parts) or None


def _context(session: Session | None, context: dict[str, Any] | None) -> list:
    """The compacted context at a point as Inspect chat messages; [] without the case or its context record."""
    if session is None or context is None:
        return []
    _, model, _, _ = _inspect()
    messages = [model.ChatMessageSystem(content=session.system)] if session.system else []
    messages += [_message(session.messages[i]) for i in context.get("kept") or () if i < len(session.messages)]
    messages += [_message(Message(role or "user", text)) for _, role, text in context.get("kept_text") or ()]
    if context.get("summary"):
        messages.append(model.ChatMessageUser(content=context["summary"]))
    messages += [_message(m) for m in session.messages[context["live_start"]:context["end"]]]
    return messages


def _message(message: Message):
    _, model, _, tool = _inspect()
    if message.role == "assistant":
        calls = [tool.ToolCall(id=c.id, function=c.name, arguments=dict(c.arguments)) for c in message.tool_calls]
        return model.ChatMessageAssistant(content=message.content, tool_calls=calls or None)
    if message.role == "tool":
        return model.ChatMessageTool(content=message.content, tool_call_id=message.tool_call_id, function=message.name)
    if message.role == "system":
        return model.ChatMessageSystem(content=message.content)
    return model.ChatMessageUser(content=message.content)
