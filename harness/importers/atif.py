"""ATIF (Agent Trajectory Interchange Format, Harbor's RFC 0001, v1.x) in and out, validated with the format's own
Pydantic models (the `atif` package), so a trajectory Harbor or any other ATIF writer made becomes a case, and a
case's session becomes a trajectory.

Steps map onto session lines: a `system` step first is the system prompt; a `user` step a user message; an
`agent` step an assistant message with its `tool_calls`, and its observation's results (by `source_call_id`) the
tool results after it. Whatever the session holds that ATIF has no field for (a message's id, ts, usage and
meta, a result's is_error and name, the session's tools) rides in the `extra` fields under `compaction_harness`,
and each compaction record is a `system` step whose `extra.compaction_harness.compaction` holds its covers,
origin and meta: so every case round-trips unchanged. Secret-shaped strings are redacted on the way in, as by
every importer. Foreign trajectories: a later system step is kept as a
user message (tagged), an observation result that answers no call as a user message (tagged), a call with no
result gets the synthetic `[no result recorded]`, non-text content parts are counted and left out; all counted
in the import report. A `continued_trajectory_ref` (a continuation file, e.g. after summarization, relative to
the file naming it) is read and appended; its `is_copied_context` steps are what the agent carried across: those
repeating earlier messages mark where the kept tail starts, the others are the summary, and a continuation whose
copied context holds a summary becomes a compaction record (origin `atif-continuation`) at the boundary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.importers.redact import Redactor
from harness.importers.report import NO_RESULT, ImportReport
from harness.session import Session, parse_session, session_records

EXTRA = "compaction_harness"
SCHEMA_VERSION = "ATIF-v1.8"
SUPPORTED = tuple(f"ATIF-v1.{minor}" for minor in range(9))  # what the atif 1.8 models read
MAX_CONTINUATIONS = 100
MESSAGE_KEYS = ("id", "ts", "usage", "meta")
RESULT_KEYS = ("is_error", "name", *MESSAGE_KEYS)


def trajectory_model(data: Any, path: str):
    """The document as the atif package's Trajectory; a wrong version or shape is one line naming the file."""
    from atif import Trajectory
    from pydantic import ValidationError

    if not isinstance(data, dict):
        raise InputError(path, None, None, "not an ATIF trajectory (a JSON object with schema_version and steps)")
    version = data.get("schema_version")
    if version not in SUPPORTED:
        raise InputError(path, None, "schema_version", f"{version!r} is not an ATIF version this importer reads "
                                                       f"({SUPPORTED[0]} to {SUPPORTED[-1]})")
    if not data.get("steps"):
        raise InputError(path, None, "steps", "the trajectory has no steps")
    try:
        return Trajectory.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or None
        raise InputError(path, None, where, f"not valid ATIF: {error['msg']}") from None


# -- out ---------------------------------------------------------------------------------------


def export_atif(session: Session, *, agent: str = "compaction-harness", version: str = "", model: str | None = None,
                session_id: str | None = None, window: int | None = None) -> dict[str, Any]:
    """The session as an ATIF trajectory document, validated by the atif models before it is returned."""
    steps: list[dict[str, Any]] = []
    tools = None
    for record in session_records(session):
        role = record["role"]
        if role == "tool":
            steps[-1].setdefault("observation", {"results": []})["results"].append(_result(record))
            continue
        step: dict[str, Any] = {"step_id": len(steps) + 1, "message": record["content"]}
        kept = {k: record[k] for k in MESSAGE_KEYS if k in record}
        if role == "system":
            step["source"] = "system"
            tools = record.get("tools")
        elif role == "compaction":
            step["source"] = "system"
            kept = {"compaction": {k: record[k] for k in ("covers", "origin", "meta") if k in record}}
        else:
            step["source"] = "agent" if role == "assistant" else "user"
            if record.get("tool_calls"):
                step["tool_calls"] = [{"tool_call_id": c["id"], "function_name": c["name"],
                                       "arguments": c["arguments"]} for c in record["tool_calls"]]
        if kept:
            step["extra"] = {EXTRA: kept}
        steps.append(step)
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "session_id": session_id,
                                "agent": {"name": agent, "version": version, "model_name": model,
                                          "tool_definitions": tools}, "steps": steps,
                                "extra": {EXTRA: {"context_window": window}} if window else None}
    return trajectory_model(document, session.path).to_json_dict()


def _result(record: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"source_call_id": record["tool_call_id"], "content": record["content"]}
    kept = {k: record[k] for k in RESULT_KEYS if k in record}
    if kept:
        result["extra"] = {EXTRA: kept}
    return result


# -- in ----------------------------------------------------------------------------------------


def import_atif(text: str, path: str, report: ImportReport) -> Session:
    records: list[dict[str, Any]] = []
    trajectory = trajectory_model(_json(text, path), path)
    if trajectory.agent.model_name:
        report.model = trajectory.agent.model_name
    window = ((trajectory.extra or {}).get(EXTRA) or {}).get("context_window")
    if isinstance(window, int) and window > 0:  # written by export_atif: the case's own window
        report.window, report.window_source = window, "the trajectory's extra.compaction_harness"
    reader = _Reader(report, trajectory.agent.tool_definitions)
    reader.add(trajectory.steps, records)
    seen, where = {str(Path(path).resolve())}, Path(path)
    while trajectory.continued_trajectory_ref:
        where = where.parent / trajectory.continued_trajectory_ref
        if str(where.resolve()) in seen or len(seen) > MAX_CONTINUATIONS:
            raise InputError(path, None, "continued_trajectory_ref", f"{where} continues a trajectory already read")
        seen.add(str(where.resolve()))
        trajectory = trajectory_model(_json(_read(where, path), str(where)), str(where))
        reader.continuation(trajectory.steps, records)
    redact = Redactor(report)  # a key in a foreign trajectory never reaches the case (counted on the report)
    lines = [json.dumps(redact.value(r), ensure_ascii=False) for r in records]
    session = parse_session(lines, path)
    report.messages = {role: sum(1 for m in session.messages if m.role == role) for role in ("user", "assistant",
                                                                                              "tool")}
    report.turns, report.compactions = len(session.turns), len(session.compactions)
    report.tool_calls = sum(len(m.tool_calls) for m in session.messages)
    return session


def _json(text: str, path: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, None, f"not JSON: {exc.msg}") from None


def _read(where: Path, naming: str) -> str:
    try:
        return where.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(naming, None, "continued_trajectory_ref", f"cannot read {where}: {exc.strerror or exc}") \
            from None


class _Reader:
    """Steps -> session lines (dicts in session.jsonl's shape), counting what does not map."""

    def __init__(self, report: ImportReport, tools: list[dict[str, Any]] | None):
        self.report, self.tools = report, tools

    def add(self, steps, records: list[dict[str, Any]]) -> None:
        for step in steps:
            ours = (step.extra or {}).get(EXTRA) or {}
            if "compaction" in ours:
                records.append({"role": "compaction", "content": self._text(step.message), **ours["compaction"]})
            elif step.source == "system" and not records:
                records.append({"role": "system", "content": self._text(step.message),
                                **({"tools": self.tools} if self.tools else {})})
            elif step.source == "system":
                records.append({"role": "user", "content": self._text(step.message), "meta": {"source_role": "system"}})
                self.report.tag("later system step kept as a user message")
            elif step.source == "user":
                records.append({"role": "user", "content": self._text(step.message), **self._kept(ours, step)})
            else:
                self._agent(step, ours, records)

    def _agent(self, step, ours: dict[str, Any], records: list[dict[str, Any]]) -> None:
        calls = [{"id": c.tool_call_id, "name": c.function_name, "arguments": c.arguments}
                 for c in step.tool_calls or ()]
        records.append({"role": "assistant", "content": self._text(step.message),
                        **({"tool_calls": calls} if calls else {}), **self._kept(ours, step)})
        if step.reasoning_content:
            self.report.skip("reasoning_content of an agent step")
        results = list(step.observation.results) if step.observation else []
        for call in calls:
            answer = next((r for r in results if r.source_call_id == call["id"]), None)
            if answer is None:
                records.append({"role": "tool", "tool_call_id": call["id"], "content": NO_RESULT,
                                "meta": {"synthetic": True}})
                self.report.synthetic_results += 1
                continue
            results.remove(answer)
            kept = ((answer.extra or {}).get(EXTRA) or {})
            records.append({"role": "tool", "tool_call_id": call["id"], "content": self._text(answer.content),
                            **{k: kept[k] for k in RESULT_KEYS if k in kept}})
        for loose in results:  # a result of no call (a non-tool action, a system event)
            records.append({"role": "user", "content": self._text(loose.content),
                            "meta": {"source_role": "observation"}})
            self.report.tag("observation with no call kept as a user message")

    def continuation(self, steps, records: list[dict[str, Any]]) -> None:
        """A continuation's copied steps: repeats of earlier messages are the kept tail, the rest the summary."""
        copied = [s for s in steps if s.is_copied_context]
        earlier = [(r["role"], r["content"]) for r in records if r["role"] in ("user", "assistant", "tool")]
        summary, covers = [], sum(1 for r in records if r["role"] in ("user", "assistant", "tool"))
        for step in copied:
            key = ("assistant" if step.source == "agent" else step.source, self._text(step.message))
            if key in earlier:
                covers = min(covers, earlier.index(key))
            else:
                summary.append(key[1])
        if copied:
            self.report.skip("copied-context step of a continuation", len(copied))
        if any(s.strip() for s in summary):
            records.append({"role": "compaction", "content": "\n\n".join(summary), "covers": covers,
                            "origin": "atif-continuation"})
        self.add([s for s in steps if not s.is_copied_context], records)

    def _kept(self, ours: dict[str, Any], step) -> dict[str, Any]:
        kept = {k: ours[k] for k in MESSAGE_KEYS if k in ours}
        if "ts" not in kept and step.timestamp:
            kept["ts"] = step.timestamp
        return kept

    def _text(self, content) -> str:
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        parts = [p.text or "" for p in content if p.type == "text"]
        if len(parts) < len(content):
            self.report.skip("non-text content part", len(content) - len(parts))
        return "\n".join(parts)
