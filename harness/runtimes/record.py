"""A driven case as run.json keeps it (`outcome.runtime`): the runtime and its version, how the replay went,
and per compaction when it fired, what the runtime asked (its prompt and how it serialised the history),
what it kept and the checks (checks.py). The summary itself is the case's summary record, as for any run."""

from __future__ import annotations

from typing import Any

from harness.models.base import ModelRequest
from harness.runtimes.canary import canary_checks
from harness.runtimes.capture import RuntimeCompaction
from harness.runtimes.checks import check, request_tokens
from harness.runtimes.driver import Drive
from harness.runtimes.faults import fault_json
from harness.runtimes.price import Pricing, priced
from harness.scripted import departures
from harness.cases.schema import Case
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


PROMPT_CHARS = 6000  # of the summarization prompt kept per case for comparing releases (studies/releases.py)


def compaction_prompt(request: ModelRequest) -> dict[str, str]:
    """The summarization prompt as a release comparison diffs it: the system text's head and the last user
    message's end (where every shipped runtime's instruction sits, after any serialised history)."""
    users = [m for m in request.messages if m.role == "user"]
    last = users[-1].content if users else ""
    return {"system": (request.system or "")[:PROMPT_CHARS], "instruction": last[-PROMPT_CHARS:]}


def compaction_json(found: RuntimeCompaction, session: Session, window: int,
                    canary: str | None = None) -> dict[str, Any]:
    return {"number": found.number, "position": found.position, "mid_turn": found.mid_turn,
            "steps_before": found.used_before, "calls": len(found.requests), "covers": found.covers,
            "request_seqs": [r.seq for r in found.requests],  # in the request log
            # None: a compaction without a model call (Inspect's edit and trim: edits.py)
            "kept_ahead": len(found.kept), "request": _prompt(found.requests[0].request) if found.requests else None,
            "summary_chars": len(found.summary), **check(found, session, window),
            **(canary_checks(found, canary) if canary else {})}


def sent_outputs(drive: Drive) -> dict[str, str]:
    """Each tool output as the runtime first sent it back (its own cuts and wrappers included), by call id. A
    summarization request counts for the recorded calls only: one may carry the history under ids of its own
    (Gemini CLI's does), and an output may reach only it (Claude Code compacting right after a call)."""
    recorded = {call.id for call in drive.script.calls}
    sent: dict[str, str] = {}
    for seen in drive.seen:
        for message in seen.request.messages:
            if message.role == "tool" and message.tool_call_id and (seen.kind == "turn" or
                                                                    message.tool_call_id in recorded):
                sent.setdefault(message.tool_call_id, message.content)
    return sent


def cuts(drive: Drive, case: Case) -> dict[str, Any]:
    """What the runtime's own tool-output cuts lose before any compaction: outputs it did not pass on whole, and
    the probes whose fact sits in such an output and in none of what it passed on (a substring check, no model)."""
    sent = sent_outputs(drive)
    messages = case.session.messages
    cut = {i for i, m in enumerate(messages) if m.role == "tool" and m.tool_call_id in sent
           and m.content.strip() not in sent[m.tool_call_id]}
    lost = []
    for probe in case.probes:
        index = probe.planted_at
        if index not in cut:
            continue
        recorded, passed = messages[index].content.lower(), sent[messages[index].tool_call_id].lower()
        if any(any(a.lower() in recorded for a in item) and not any(a.lower() in passed for a in item)
               for item in probe.all):
            lost.append(probe.id)
    return {"outputs_cut": len(cut), "probes_lost_to_cuts": lost}


def not_reproduced(drive: Drive, case: Case) -> list[dict[str, Any]]:
    """What the replay sent otherwise than it happened (the script's departures) and the outputs the runtime
    itself passed on cut, in case order."""
    sent = sent_outputs(drive)
    found = list(drive.script.departures)
    for index, message in enumerate(case.session.messages):
        passed = sent.get(message.tool_call_id or "") if message.role == "tool" else None
        if passed is not None and message.content.strip() not in passed:
            found.append(departures.cut(index, str(message.tool_call_id), len(passed), len(message.content)))
    return [d.to_json() for d in sorted(found, key=lambda d: d.position)]


def drive_json(drive: Drive, case: Case, window: int, pricing: Pricing | None = None) -> dict[str, Any]:
    """`pricing`: each compaction priced on the cost study's terms (price.py), per compaction and summed."""
    session = case.session
    compactions = [compaction_json(c, session, window, drive.canary) for c in drive.compactions]
    price = None
    if pricing is not None:
        rows, price = priced(drive.compactions, drive.seen, pricing)
        for entry, row in zip(compactions, rows):
            entry["price"] = row
    kinds = {k: sum(1 for s in drive.seen if s.kind == k) for k in ("turn", "compaction", "side")}
    asked = [c for c in drive.compactions if c.requests]  # Inspect's edit and trim compact without a call
    turns = max(1, len(drive.script.prompts))
    return {"runtime": drive.runtime, "version": drive.version, "seconds": round(drive.seconds, 2),
            "steps": drive.outcome.steps, "steps_used": drive.outcome.used, "requests": kinds,
            "compactions_per_turn": round(len(drive.compactions) / turns, 3),
            "failure": drive.failure, "stopped": drive.stopped, "stopped_position": drive.stopped_position,
            "stderr_tail": list(drive.stderr_tail), "errors": list(drive.errors),
            "refused_past_window": drive.refused, "sandbox": drive.sandbox,
            **({"left_out": list(drive.left_out)} if drive.left_out else {}),
            **cuts(drive, case), "not_reproduced": not_reproduced(drive, case),
            **({"faults": fault_json(drive)} if drive.fault else {}),
            **({"canary": True} if drive.canary else {}),
            "compactions": compactions, **({"price": price} if price is not None else {}),
            **({"compaction_prompt": compaction_prompt(asked[0].requests[0].request)} if asked else {})}
