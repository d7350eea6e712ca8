"""How a runtime met the faults injected on its summarization calls (harness.scripted.faults), read from what the
server saw, without a model. An attempt is one run of summarization requests with no turn request between them
(a first try and its retries; pi's split turn sends two distinct ones); per attempt:

- requests, faulted, bodies (distinct request bodies), identical_retries (requests whose body was sent before
  in the attempt), most_sends (the most times one body was sent);
- outcome: `compacted`, `recovered` (a retry got a summary), `used_faulty_reply` (the runtime compacted with the
  empty or cut reply), `without_compaction` (it went on, its history unfolded), `case_ended` (after the last
  step: no turn request was due), `stopped` (none came though one was due: the prompt ended, the runtime exited
  or hung);
- seconds from the first request to the next turn request (None: none came).

Checks, per case: bounded_retry (no attempt sends one body more than RETRY_BOUND times), no_identical_loop (no
body is sent more than RETRY_BOUND times in the whole case: the same compaction re-asked prompt after prompt), surfaced (every attempt a fault defeated was met by an
error the user sees: an error event, a non-zero exit, a failed prompt), no_hang (the harness's timeout did not
have to end the runtime). An error cannot be tied to one attempt from outside, so `surfaced` reads the case's."""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness.runtimes.capture import groups
from harness.runtimes.driver import Drive
from harness.runtimes.observe import Observed

RETRY_BOUND = 6  # sends of one summarization request: a first try and five retries


def _outcome(calls: list[Observed], after: Observed | None, compacted: set[int], steps: int) -> str:
    if after is None:  # what it would have done with the reply, no turn request shows
        return "case_ended" if calls[0].used_before >= steps else "stopped"
    if calls[0].seq not in compacted:
        return "without_compaction"
    if not any(c.fault is None and c.reply for c in calls):
        return "used_faulty_reply"
    return "recovered" if any(c.fault for c in calls) else "compacted"


def attempts(drive: Drive) -> list[dict[str, Any]]:
    compacted = {found.requests[0].seq for found in drive.compactions}
    found = []
    for number, (calls, after) in enumerate(groups(drive.seen), start=1):
        sends = Counter(c.digest for c in calls)
        found.append({"number": number, "steps_before": calls[0].used_before, "requests": len(calls),
                      "faulted": sum(1 for c in calls if c.fault), "bodies": len(sends),
                      "identical_retries": len(calls) - len(sends), "most_sends": max(sends.values()),
                      "outcome": _outcome(calls, after, compacted, drive.outcome.steps),
                      "seconds": round(after.at - calls[0].at, 2) if after is not None else None})
    return found


def _surfaced(drive: Drive) -> list[str]:
    """What the user was shown going wrong: error events, non-zero exits, a crash (the driver adds it to the
    errors); not a stop the runtime said nothing about, nor the harness's own timeout (a hung runtime said
    nothing; what an exec runtime printed before it was ended is lost)."""
    return list(drive.errors)


def fault_json(drive: Drive) -> dict[str, Any]:
    """run.json's `faults` block of a drive with a fault injected."""
    tried = attempts(drive)
    sent = Counter(s.digest for s in drive.seen if s.kind == "compaction")
    defeated = [a for a in tried if a["faulted"] and a["outcome"] not in ("recovered", "compacted", "case_ended")]
    shown = _surfaced(drive)
    return {"summary_fault": drive.fault.spec if drive.fault else None, "attempts": tried,
            "bounded_retry": all(a["most_sends"] <= RETRY_BOUND for a in tried),
            "no_identical_loop": max(sent.values(), default=0) <= RETRY_BOUND,
            "surfaced": bool(shown) if defeated else None, "shown": shown[:5],
            "no_hang": not drive.hung, "retry_bound": RETRY_BOUND}
