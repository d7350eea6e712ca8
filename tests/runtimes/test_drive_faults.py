"""Real runtimes meeting faults on their summarization calls, and the canary: pi (keeping 4000 recent tokens, so
a short cut of edge-32k-window compacts real history at 32K) and codex, each on the case's first turns. What
each runtime does is recorded, not judged here; these tests pin what was measured (docs/runtimes.md)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from harness.cases import load_case
from harness.cli import main
from harness.models.base import ModelClient, ModelRequest, ModelResponse
from harness.models.builtin import BuiltinClient
from harness.runtimes.adapter import load
from harness.runtimes.driver import LOG_FILE, drive
from harness.runtimes.faults import RETRY_BOUND
from harness.runtimes.record import drive_json
from harness.scripted.canary import canary_for
from harness.scripted.faults import parse_summary_fault
from runtime_helpers import CASE, require, small_tail_pi

PI_MESSAGES = 36  # pi-small-tail compacts once before message 34 (a split turn: two summarization calls)
CODEX_MESSAGES = 61  # codex compacts mid-turn before message 58 at the case's 32K
WINDOW = 32768


def _case(messages: int):
    case = load_case(CASE)
    return case.with_session(replace(case.session, messages=case.session.messages[:messages], compactions=()))


def _pi_drive(tmp_path, summarizer: ModelClient | None = None, fault: str | None = None, canary: bool = False):
    pi = require("pi")
    case = _case(PI_MESSAGES)
    adapter = load(str(small_tail_pi(pi, tmp_path)))
    done = drive(case, adapter, pi.binary, pi.version, summarizer or BuiltinClient(), tmp_path / "logs",
                 window=WINDOW, fault=parse_summary_fault(fault, hold_s=2) if fault else None, canary=canary)
    return case, done, drive_json(done, case, WINDOW)


class LeakySummarizer(ModelClient):
    """The builtin's summary with every token-shaped string of the request appended: a summarizer that copies
    credentials, as the canary check must catch."""

    spec = name = "test:leaky"

    def complete(self, request: ModelRequest) -> ModelResponse:
        answer = BuiltinClient().complete(request)
        seen = re.findall(r"ghp_[A-Za-z0-9]{20,}", "\n".join(m.content for m in request.messages))
        return replace(answer, text=answer.text + "\n\n## Credentials\n" + "\n".join(seen))


def test_pi_meets_a_500_by_retrying_then_going_on_without_compaction_and_says_so(tmp_path):
    _, done, record = _pi_drive(tmp_path, fault="500")
    faults = record["faults"]
    assert done.ok and not done.compactions  # every step used: the case went on, uncompacted
    outcomes = [a["outcome"] for a in faults["attempts"]]
    assert outcomes[0] == "without_compaction" and set(outcomes) <= {"without_compaction", "case_ended"}
    assert all(a["faulted"] == a["requests"] for a in faults["attempts"])
    went_on = [a for a in faults["attempts"] if a["outcome"] == "without_compaction"]
    # it retried the same body; how its retries fall into attempts depends on timing (one attempt may hold a single
    # request when the next prompt's compaction starts a new one), so the retries are counted over the case
    assert sum(a["identical_retries"] for a in went_on) > 0
    assert faults["bounded_retry"] and faults["no_hang"] and faults["surfaced"]
    assert any("500" in line for line in faults["shown"])


def test_pi_keeps_an_empty_summary_without_saying_so(tmp_path):
    _, done, record = _pi_drive(tmp_path, fault="empty")
    faults = record["faults"]
    assert done.ok and faults["no_hang"] and faults["bounded_retry"]
    assert [a["outcome"] for a in faults["attempts"]] == ["used_faulty_reply"]
    assert faults["surfaced"] is False  # the finding: history folded into nothing, no error shown


def test_run_with_a_fault_once_and_the_canary_records_a_recovered_retry_and_a_clean_summary(tmp_path):
    """The whole path at pi's shipped settings: flags, run.json, the redacted log, report.md and report.html."""
    require("pi")
    out = tmp_path / "run"
    assert main(["run", "--runtime", "pi", "--cases", "edge-32k-window", "--window", "49152", "--summary-fault",
                 "500:1", "--canary", "--out", str(out)]) == 0
    folder = next(p for p in out.iterdir() if p.name.startswith("runtime-pi-fault-500x1-canary"))
    record = json.loads((folder / "cases" / "edge-32k-window.json").read_text())["runtime"]
    faults = record["faults"]
    assert faults["summary_fault"] == "500:1" and faults["attempts"][0]["outcome"] == "recovered"
    assert faults["surfaced"] is None and faults["bounded_retry"] and faults["no_hang"]
    assert record["canary"] and record["compactions"]
    assert record["compactions"][0]["canary_in_request"]  # later ones fold the first summary, which dropped it
    assert all(c["canary_in_summary"] is False for c in record["compactions"])
    log = (folder / "runtime-logs" / "edge-32k-window" / LOG_FILE).read_text()
    assert canary_for("edge-32k-window") not in log and "GITHUB_TOKEN=" in log  # checked before the redaction
    assert "#### Faults on its summarization calls" in (folder / "report.md").read_text()
    assert 'id="runtime"' in (folder / "report.html").read_text()


def test_a_summarizer_that_copies_the_canary_is_caught(tmp_path):
    case, done, record = _pi_drive(tmp_path, summarizer=LeakySummarizer(), canary=True)
    assert done.ok and record["compactions"]
    assert all(c["canary_in_request"] and c["canary_in_summary"] for c in record["compactions"])
    assert canary_for(case.id) not in (tmp_path / "logs" / LOG_FILE).read_text()


def test_codex_retries_a_500_thirty_times_with_one_body_then_exits_1_saying_so(tmp_path):
    codex = require("codex")
    case = _case(CODEX_MESSAGES)
    done = drive(case, codex.adapter, codex.binary, codex.version, BuiltinClient(), tmp_path,
                 fault=parse_summary_fault("500"))
    record = drive_json(done, case, case.context_window)
    faults = record["faults"]
    assert [a["outcome"] for a in faults["attempts"]] == ["stopped"] and not done.compactions
    attempt = faults["attempts"][0]
    assert attempt["bodies"] == 1 and attempt["most_sends"] == attempt["requests"] > RETRY_BOUND
    assert faults["bounded_retry"] is False and faults["no_identical_loop"] is False  # the finding
    assert faults["no_hang"] and faults["surfaced"] and "exited 1" in record["stopped"]  # a stop, graded
