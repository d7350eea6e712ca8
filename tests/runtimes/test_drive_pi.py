"""pi 0.73.1 driven end to end on a real case: every recorded output reaches it byte for byte, every step is used
once, its own compactions are captured and graded beside the default policy; at the case's own 32K window its
overflow recovery fails, and the turn it gave up is graded as lost; an adapter written from docs/runtimes.md alone runs."""

from __future__ import annotations

import json

import pytest

from harness.cases import load_case
from harness.cli import main
from harness.models.builtin import BuiltinClient
from harness.runtimes.adapter import load
from harness.runtimes.driver import drive
from harness.runtimes.record import sent_outputs
from runtime_helpers import CASE, require

WINDOW = 49152  # pi completes this case at 48K; at its own 32K pi's overflow recovery gives up (below)


@pytest.fixture(scope="module")
def pi_drive(tmp_path_factory):
    pi = require("pi")
    case = load_case(CASE)
    done = drive(case, pi.adapter, pi.binary, pi.version, BuiltinClient(), tmp_path_factory.mktemp("logs"),
                 window=WINDOW)
    return case, done


def test_every_output_arrives_and_every_step_is_used_once(pi_drive):
    case, done = pi_drive
    assert done.ok, done.failure
    assert done.outcome.used == done.outcome.steps == 69
    recorded = {m.tool_call_id: m.content for m in case.session.messages if m.role == "tool"}
    sent = sent_outputs(done)
    assert set(sent) == set(recorded) and len(recorded) == 53
    assert all(sent[k] == recorded[k] for k in recorded)  # byte for byte


def test_its_compactions_are_captured_with_their_context(pi_drive):
    case, done = pi_drive
    assert done.compactions, "pi compacts this case at 48K"
    for found in done.compactions:
        assert found.summary and 0 < found.position <= len(case.session.messages)
        assert found.covers <= found.position and not found.mid_turn  # pi checks between runs only
        assert found.requests[0].request.system.startswith("You are a context summarization assistant")
        assert found.after is None or found.summary.strip()[:100] in "\n".join(
            m.content for m in found.after.request.messages)


def test_at_its_own_window_pi_gives_up_a_turn_and_is_graded_for_it(tmp_path):
    """pi's kept-recent budget (20000) exceeds its own trigger at 32K: its compactions fold nothing, a turn
    overflows, its recovery gives up and the turn is dropped. A finding, graded: past the stop nothing pi could
    send holds a fact, so each probe there fails compacted, naming the stop; the run itself completes (exit 0)."""
    require("pi")
    out = tmp_path / "run"
    assert main(["run", "--runtime", "pi", "--cases", "edge-32k-window", "--out", str(out)]) == 0
    folder = next(p for p in out.iterdir() if p.name.startswith("runtime-pi"))
    case = json.loads((folder / "cases" / "edge-32k-window.json").read_text())
    record = case["runtime"]
    assert record["failure"] is None and record["steps_used"] < record["steps"]
    assert "without asking for step" in record["stopped"] and "overflow" in record["stopped"].lower()
    assert 0 < record["stopped_position"] < case["messages"]
    after = [p for p in case["probes"] if p["at"] == "end"]
    assert after and all(not p["conditions"]["compacted"]["retained"] for p in after)
    assert all(p["conditions"]["compacted"]["error"].startswith("not sent: pi ended prompt") for p in after)
    assert all(p["conditions"]["full"]["retained"] for p in after if p["valid"])
    report = (folder / "report.md").read_text()
    assert "### Runtime compactions" in report and "STOPPED before case message" in report


def test_run_grades_the_runtime_beside_the_default_policy(tmp_path):
    require("pi")
    out = tmp_path / "run"
    assert main(["run", "--runtime", "pi", "--cases", "edge-32k-window", "--window", str(WINDOW),
                 "--out", str(out)]) == 0
    folder = next(p for p in out.iterdir() if p.name.startswith("runtime-pi"))
    run = json.loads((folder / "run.json").read_text())
    assert run["configuration"]["runtime"] == "pi@0.73.1"
    case = json.loads((folder / "cases" / "edge-32k-window.json").read_text())
    record = case["runtime"]
    assert record["steps_used"] == record["steps"] and record["compactions"]
    assert all(c["well_formed"] for c in record["compactions"] if "well_formed" in c)
    assert any(p["compactions_before"] for p in case["probes"])
    assert (folder / "runtime-logs" / "edge-32k-window" / "requests.jsonl").is_file()
    assert "runtime-pi" in (out / "comparison.md").read_text()


def test_an_adapter_written_from_the_doc_alone_runs(tmp_path):
    """The fields docs/runtimes.md lists, written by hand for pi under another name, its bin on disk; the run
    folder is named after the adapter's `name`, not its file's."""
    pi = require("pi")
    adapter = tmp_path / "adapter-file.toml"
    adapter.write_text(f'''
name = "my-pi"
version = "{pi.version}"
wire = "openai-chat"
[install]
bin = "{pi.binary}"
version_args = ["--version"]
[session]
mode = "rpc"
command = ["${{bin}}", "--mode", "rpc", "--provider", "harness", "--model", "${{model}}"]
[env]
HOME = "${{home}}"
PI_CODING_AGENT_DIR = "${{home}}/agent"
PI_OFFLINE = "1"
[files]
"${{home}}/agent/models.json" = \'\'\'
{{"providers": {{"harness": {{"baseUrl": "${{base_url}}", "api": "openai-completions", "apiKey": "x",
  "models": [{{"id": "${{model}}", "contextWindow": ${{window}}, "maxTokens": ${{max_output}}}}]}}}}}}
\'\'\'
"${{home}}/agent/settings.json" = \'{{"compaction": {{"enabled": ${{compaction_setting}}}}}}\'
[compaction]
on = "true"
off = "false"
[tools]
shell = ["bash"]
[signatures]
compaction.system = ["You are a context summarization assistant"]
''')
    assert load(str(adapter)).name == "my-pi"
    out = tmp_path / "run"
    assert main(["run", "--runtime", str(adapter), "--policy", "truncate", "--cases", "edge-32k-window",
                 "--window", str(WINDOW), "--out", str(out)]) == 0
    assert any(p.name.startswith("runtime-my-pi") for p in out.iterdir())
    assert not any("adapter-file" in p.name for p in out.iterdir())
