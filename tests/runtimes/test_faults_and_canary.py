"""The model-free reading of a faulted drive (attempts, outcome, bounded_retry, no_identical_loop, surfaced,
no_hang) and of the canary (planted where a runtime passes it on, redacted from the request log, found in a
request or a summary), on drives built by hand: no runtime needed. The real runtimes' behaviour is in
test_drive_*.py."""

from __future__ import annotations

import json
from dataclasses import replace

from harness.models.base import ChatMessage, ModelRequest
from harness.runtimes.canary import canary_checks
from harness.runtimes.capture import RuntimeCompaction
from harness.runtimes.driver import Drive
from harness.runtimes.faults import RETRY_BOUND, attempts, fault_json
from harness.runtimes.observe import Observed
from harness.scripted.canary import SHORT, VARIABLE, canary_for, planted
from harness.scripted.faults import parse_summary_fault
from harness.scripted.log import RequestLog
from harness.scripted.model import Outcome
from harness.scripted.steps import Script
from harness.session import Message, Session


def _seen(kinds: str, fault: str | None = "500", digest: str = "same") -> list[Observed]:
    """c: a faulted summarization request, s: an answered one, t: a turn request."""
    request = ModelRequest("m", None, (ChatMessage("user", "x"),), 100)
    out = []
    for seq, kind in enumerate(kinds, start=1):
        if kind == "t":
            out.append(Observed(seq, "turn", request, {}, seq, "ok", at=float(seq)))
        else:
            faulted = fault if kind == "c" else None
            out.append(Observed(seq, "compaction", request, {}, seq, None if kind == "c" else "## Goal", fault=faulted,
                                digest=digest if kind == "c" else f"d{seq}", at=float(seq)))
    return out


def _drive(seen: list[Observed], *, errors: tuple[str, ...] = (), stopped: str | None = None, hung: bool = False,
           compactions: tuple[RuntimeCompaction, ...] = (), steps: int = 100) -> Drive:
    return Drive("rt", "1", Script((), ()), Outcome(steps, 0, 0, 0, None), seen, list(compactions), 1.0, None, stopped,
                 errors=errors, fault=parse_summary_fault("500"), hung=hung)


def _compaction(calls: list[Observed], after: Observed | None, summary: str = "## Goal") -> RuntimeCompaction:
    return RuntimeCompaction(1, tuple(calls), after, 4, 2, summary, (), False)


def test_a_runtime_that_retries_then_goes_on_without_compaction_and_says_so():
    seen = _seen("tccct")
    done = fault_json(_drive(seen, errors=("compaction failed: 500",)))
    assert done["attempts"] == [{"number": 1, "steps_before": 2, "requests": 3, "faulted": 3, "bodies": 1,
                                 "identical_retries": 2, "most_sends": 3,
                                 "outcome": "without_compaction", "seconds": 3.0}]
    assert done["bounded_retry"] and done["no_identical_loop"] and done["surfaced"] and done["no_hang"]


def test_a_silent_fallback_is_not_surfaced_and_a_hang_is_named():
    seen = _seen("tcct")
    assert fault_json(_drive(seen))["surfaced"] is False
    hung = fault_json(_drive(_seen("tc"), stopped="pi: no agent_end within 300 s", hung=True))
    assert hung["attempts"][0]["outcome"] == "stopped" and hung["attempts"][0]["seconds"] is None
    assert hung["no_hang"] is False and hung["surfaced"] is False  # the harness's timeout is not the runtime's
    crashed = fault_json(_drive(_seen("tc"), errors=("pi exited while waiting for agent_end (exit 1)",)))
    assert crashed["surfaced"] is True  # the driver adds a crash to the errors
    ended = fault_json(_drive(_seen("tc"), steps=2))  # after the last step no turn request is due
    assert ended["attempts"][0]["outcome"] == "case_ended" and ended["surfaced"] is None


def test_retries_past_the_bound_and_one_body_sent_past_it_across_attempts_fail():
    many = _seen("t" + "c" * (RETRY_BOUND + 1) + "t")
    assert fault_json(_drive(many))["bounded_retry"] is False
    two = _seen("t" + "c" * RETRY_BOUND) + _seen("c" * RETRY_BOUND + "t", digest="other")
    two = [replace(s, seq=i) for i, s in enumerate(two, start=1)]
    assert attempts(_drive(two))[0]["requests"] == 2 * RETRY_BOUND  # pi's split turn: two bodies, each retried
    assert fault_json(_drive(two))["bounded_retry"] is True
    spread = _seen("t" + ("c" * 3 + "t") * 3)  # the same body at three prompts running: 9 sends, 3 per attempt
    done = fault_json(_drive(spread, errors=("x",)))
    assert done["bounded_retry"] and not done["no_identical_loop"]


def test_outcomes_tell_a_recovered_retry_from_a_faulty_reply_used():
    seen = _seen("tcst")
    recovered = _drive(seen, compactions=(_compaction(seen[1:3], seen[3]),))
    assert attempts(recovered)[0]["outcome"] == "recovered"
    assert fault_json(recovered)["surfaced"] is None  # nothing was lost: no error is owed
    cut = _seen("tct", fault="cut")
    used = _drive(cut, compactions=(_compaction(cut[1:2], cut[2]),))
    assert attempts(used)[0]["outcome"] == "used_faulty_reply"


def test_the_canary_is_secret_shaped_unique_per_case_and_planted_in_a_short_output():
    canary = canary_for("edge-32k-window")
    assert canary == canary_for("edge-32k-window") != canary_for("other")
    assert canary.startswith("ghp_") and len(canary) == 40 and canary[4:].isalnum()
    session = Session((Message("user", "go"), Message("tool", "x" * (SHORT + 1), tool_call_id="a"),
                       Message("tool", "short output", tool_call_id="b")))
    messages = planted(session, canary).messages
    assert messages[1] == session.messages[1]
    assert messages[2].content == f"short output\n{VARIABLE}={canary}\n"


def test_the_request_log_redacts_the_canary(tmp_path):
    canary = canary_for("c")
    log = RequestLog(tmp_path / "requests.jsonl")
    log.write(path="/v1/chat/completions", headers={}, body={"messages": [{"content": f"{VARIABLE}={canary}"}]},
              wire="openai", stream=True, kind="compaction")
    log.close()
    text = (tmp_path / "requests.jsonl").read_text()
    assert canary not in text and canary[:8] not in text and VARIABLE in json.loads(text)["body"]["messages"][0][
        "content"]


def test_canary_checks_read_the_request_the_summary_and_the_context_after():
    canary = canary_for("c")
    asked = ModelRequest("m", "summarize", (ChatMessage("user", f"<conversation>{VARIABLE}={canary}</conversation>"),),
                         100)
    call = Observed(1, "compaction", asked, {}, 3, "## Goal\nfixed the limiter")
    after = Observed(2, "turn", ModelRequest("m", None, (ChatMessage("user", "## Goal\nfixed the limiter"),), 100),
                     {}, 3, "ok")
    clean = RuntimeCompaction(1, (call,), after, 4, 2, "## Goal\nfixed the limiter", (), False)
    assert canary_checks(clean, canary) == {"canary_in_request": True, "canary_in_summary": False}
    leaked = RuntimeCompaction(1, (call,), after, 4, 2, f"## Goal\nfixed the limiter with {canary}", (), False)
    assert canary_checks(leaked, canary)["canary_in_summary"] is True


def test_the_reports_runtime_section_shows_the_canary_check_and_the_faults():
    from harness.render.runtime import markdown_runtime, runtime_section

    compaction = {"number": 1, "position": 34, "mid_turn": False, "steps_before": 17, "covers": 25, "kept_ahead": 0,
                  "summary_chars": 900, "well_formed": True, "under_trigger": True, "resumed": None, "user_kept": True,
                  "canary_in_request": True, "canary_in_summary": True}
    faults = fault_json(_drive(_seen("tccct"), errors=("compaction failed: 500",)))
    drive = {"runtime": "pi", "version": "0.73.1", "seconds": 20.0, "steps": 19, "steps_used": 19,
             "requests": {"turn": 19, "compaction": 4, "side": 0}, "compactions_per_turn": 0.2, "failure": None,
             "compactions": [compaction], "faults": faults}
    run = {"cases": {"edge": {"runtime": drive}, "plain": {}}}
    text = "\n".join(markdown_runtime(run))
    assert "| FAILED: canary_kept_out; canary in its request |" in text  # the summary carried the canary
    assert ("| edge | 500 | 3 | 2 | without_compaction | 3 | pass | pass | pass | pass | every prompt done |"
            in text)
    html = runtime_section(run)
    assert "Faults on its summarization calls" in html and "without_compaction" in html
    assert html.count('class="pass"') == 4 and "FAILED: canary_kept_out" in html
