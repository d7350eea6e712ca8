"""pi 0.73.1 driven end to end on a real case: every recorded output reaches it byte for byte, every step is used
once, its own compactions are captured and graded; an adapter written from docs/runtimes.md alone runs too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cases import load_case
from harness.cli import main
from harness.models.builtin import BuiltinClient
from harness.runtimes.adapter import load
from harness.runtimes.driver import drive
from tests.runtimes.conftest import require

CASE = Path(__file__).parents[2] / "cases" / "edge-32k-window"


@pytest.fixture(scope="module")
def pi_drive(tmp_path_factory):
    pi = require("pi")
    case = load_case(CASE)
    done = drive(case, pi.adapter, pi.binary, pi.version, BuiltinClient(), tmp_path_factory.mktemp("logs"))
    return case, done


def test_every_output_arrives_and_every_step_is_used_once(pi_drive):
    case, done = pi_drive
    assert done.ok, done.failure
    assert done.outcome.used == done.outcome.steps
    recorded = {m.tool_call_id: m.content for m in case.session.messages if m.role == "tool"}
    sent = {}
    for seen in done.seen:
        for message in seen.request.messages:
            if message.role == "tool":
                sent.setdefault(message.tool_call_id, message.content)
    assert set(sent) == set(recorded)
    assert all(sent[k] == recorded[k] for k in recorded)  # byte for byte


def test_its_compactions_are_captured_with_context(pi_drive):
    case, done = pi_drive
    assert done.compactions, "pi at a 32K window compacts"
    for found in done.compactions:
        assert found.summary and 0 < found.position <= len(case.session.messages)
        assert found.covers <= found.position
        assert found.requests[0].request.system.startswith("You are a context summarization assistant")


def test_run_grades_the_runtime_beside_the_default_policy(tmp_path):
    require("pi")
    out = tmp_path / "run"
    assert main(["run", "--runtime", "pi", "--cases", "edge-32k-window", "--out", str(out)]) == 0
    runs = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/run.json")}
    runtime = next(r for name, r in runs.items() if name.startswith("runtime-pi"))
    assert runtime["configuration"]["runtime"] == "pi@0.73.1"
    case = json.loads(next((out / next(n for n in runs if n.startswith("runtime-pi")) / "cases").glob("*.json")).read_text())
    drive_record = case["outcome"]["runtime"]
    assert drive_record["steps_used"] == drive_record["steps"] and drive_record["compactions"]
    assert all(c["well_formed"] for c in drive_record["compactions"] if "well_formed" in c)
    assert any(p.get("compactions_before") for p in case["outcome"]["probes"])
    assert (out / next(n for n in runs if n.startswith("runtime-pi")) / "runtime-logs" / "edge-32k-window" /
            "requests.jsonl").is_file()


def test_an_adapter_written_from_the_doc_alone_runs(tmp_path):
    """The fields docs/runtimes.md lists, written by hand for pi under another name, with its bin on disk."""
    pi = require("pi")
    adapter = tmp_path / "my-pi.toml"
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
                 "--out", str(out)]) == 0
    assert any(p.name.startswith("runtime-my-pi") for p in out.iterdir())
