"""A driven case as run.json keeps it (`outcome.runtime`): the runtime and its version, how the replay went,
and per compaction when it fired, what the runtime asked (its prompt and how it serialised the history),
what it kept and the checks (checks.py). The summary itself is the case's summary record, as for any run."""

from __future__ import annotations

from typing import Any

from harness.models.base import ModelRequest
from harness.runtimes.capture import RuntimeCompaction
from harness.runtimes.checks import check, request_tokens
from harness.runtimes.driver import Drive
from harness.session import Session

HEAD = 400  # characters of a prompt kept in run.json (the request log has it whole)


def _head(text: str | None) -> str | None:
    if not text:
        return None
    return text if len(text) <= HEAD else text[:HEAD] + " ..."


def _prompt(request: ModelRequest) -> dict[str, Any]:
    users = [m for m in request.messages if m.role == "user"]
    return {"system": _head(request.system), "last_user": _head(users[-1].content if users else None),
            "messages": len(request.messages), "tokens": request_tokens(request),
            # one user message holding the whole history (pi, opencode) or the history as items (codex)
            "history": "serialised" if len(request.messages) <= 2 else "items"}


def compaction_json(found: RuntimeCompaction, session: Session, window: int) -> dict[str, Any]:
    first = found.requests[0]
    return {"number": found.number, "position": found.position, "mid_turn": found.mid_turn,
            "steps_before": first.used_before, "calls": len(found.requests), "covers": found.covers,
            "kept_ahead": len(found.kept), "request": _prompt(first.request),
            "summary_chars": len(found.summary), **check(found, session, window)}


def drive_json(drive: Drive, session: Session, window: int) -> dict[str, Any]:
    kinds = {k: sum(1 for s in drive.seen if s.kind == k) for k in ("turn", "compaction", "side")}
    turns = max(1, len(drive.script.prompts))
    return {"runtime": drive.runtime, "version": drive.version, "seconds": round(drive.seconds, 2),
            "steps": drive.outcome.steps, "steps_used": drive.outcome.used, "requests": kinds,
            "compactions_per_turn": round(len(drive.compactions) / turns, 3),
            "failure": drive.failure, "stderr_tail": list(drive.stderr_tail),
            "compactions": [compaction_json(c, session, window) for c in drive.compactions]}
