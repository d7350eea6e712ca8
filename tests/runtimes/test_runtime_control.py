"""A runtime's own cuts told apart from its compaction's losses (pi 0.73.1, `run --runtime pi --runtime-control`).

The case (written here, short): the first tool output is over pi's 50 KB cut (pi keeps its last 50 KB), with
one fact on its first line (cut) and one further down (sent whole); later outputs fill pi's window so it
compacts before the last turn. The graded context is what pi sent: the cut fact is lost in the run and in the
control alike (a cut loss), the other is kept by the control and lost only with pi's compaction. Codex cuts the
same output otherwise (it keeps its head and end, about 10K characters): there the fact in its middle is the
cut loss."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from runtime_helpers import require

CUT_FACT = "rollout codename is BLUEHERON-7"
DEEP_FACT = "canary host is ip-10-0-9-42"
MAX_OUTPUT = 4096
WINDOW = 49152


def _log(lines: int, seed: str, facts: dict[int, str]) -> str:
    rows = [f"{seed} {i:05d}: pod web-{i * 7919 % 65536:04x} ready=1/1 restarts=0 node=ip-10-0-{i % 8}-{i % 250}"
            for i in range(lines)]
    for at, fact in facts.items():
        rows[at] = f"{seed} {at:05d}: NOTE {fact}"
    return "\n".join(rows)


def _turn(n: int, prompt: str, output: str, closing: str) -> list[dict]:
    call = f"call_{n:04d}"
    return [{"role": "user", "content": prompt},
            {"role": "assistant", "content": "", "tool_calls": [{"id": call, "name": "bash",
                                                                 "arguments": {"cmd": f"cat logs/part{n}.log"}}]},
            {"role": "tool", "tool_call_id": call, "content": output},
            {"role": "assistant", "content": closing}]


def write_case(root) -> str:
    big = _log(1000, "deploy", {0: f"the {CUT_FACT}", 600: f"the {DEEP_FACT}"})  # ~66 KB: pi keeps its last 50
    assert len(big.encode()) > 60 * 1024
    messages = [{"role": "system", "content": "You are a deployment assistant. Use bash to read logs."}]
    messages += _turn(1, "Read the deploy log part 1 and tell me if the rollout finished.", big,
                      "The rollout finished; every pod reports ready.")
    for n in (2, 3):
        messages += _turn(n, f"Now read deploy log part {n}.", _log(330, f"batch{n}", {}), f"Part {n} looks fine.")
    messages += [{"role": "user", "content": "Summarise where we are."},
                 {"role": "assistant", "content": "All parts of the rollout are read and healthy."}]
    directory = root / "cut-and-compaction"
    directory.mkdir()
    (directory / "session.jsonl").write_text("\n".join(json.dumps(m) for m in messages) + "\n")
    (directory / "case.toml").write_text(f'''
[case]
id = "cut-and-compaction"
title = "A tool output over pi's cut, then enough output to compact"
pool = "edge"
session = "session.jsonl"

[model]
context_window = {WINDOW}
max_output_tokens = {MAX_OUTPUT}

[[probe]]
id = "codename"
kind = "recall"
question = "What is the rollout codename?"
all = ["BLUEHERON-7"]
planted_at = 2

[[probe]]
id = "canary"
kind = "recall"
question = "Which host is the canary host?"
all = ["ip-10-0-9-42"]
planted_at = 2
''')
    return str(directory)


def _control_run(root, runtime: str):
    require(runtime)
    case = write_case(root)
    out = root / "run"
    assert main(["run", "--runtime", runtime, "--runtime-control", "--cases", case, "--out", str(out)]) == 0
    folder = next(p for p in out.iterdir() if p.name.startswith(f"runtime-{runtime}"))
    return folder, json.loads((folder / "cases" / "cut-and-compaction.json").read_text())


@pytest.fixture(scope="module")
def control_run(tmp_path_factory):
    return _control_run(tmp_path_factory.mktemp("control"), "pi")


def test_the_cut_fact_is_lost_to_cuts_and_the_other_to_compaction(control_run):
    _, record = control_run
    runtime = record["runtime"]
    assert runtime["compactions"], "pi compacts before the last turn"
    assert runtime["outputs_cut"] == 1 and runtime["probes_lost_to_cuts"] == ["codename"]
    control = runtime["control"]
    assert control["compactions"] == 0 and control["outputs_cut"] == 1
    split = control["retained"]
    assert split["lost_to_cuts"] == ["codename"]
    assert split["lost_to_compaction"] == ["canary"]
    assert split["lost"] == ["codename", "canary"] and split["lost_in_control_only"] == []


def test_the_graded_context_is_what_pi_sent(control_run):
    _, record = control_run
    probes = {p["id"]: p for p in record["probes"]}
    assert all(p["valid"] for p in probes.values())  # the case's own history holds both facts
    assert probes["codename"]["conditions"]["full"]["retained"]
    assert probes["codename"]["conditions"]["compacted"]["retained"] is False


def test_the_reports_split_the_losses(control_run):
    folder, _ = control_run
    run = json.loads((folder / "run.json").read_text())
    assert run["cases"]["cut-and-compaction"]["runtime"]["control"]["retained"]["lost_to_cuts"] == ["codename"]
    report = (folder / "report.md").read_text()
    assert "lost to its own cuts" in report and "| cut-and-compaction | 1 | 1 | 2 |" in report
    html = (folder / "report.html").read_text()
    assert 'id="runtime-losses"' in html and "codename" in html


def test_codex_cuts_the_middle_of_an_output_and_that_is_a_cut_loss(tmp_path):
    _, record = _control_run(tmp_path, "codex")
    runtime = record["runtime"]
    assert runtime["probes_lost_to_cuts"] == ["canary"]  # codex kept the output's head, where the codename is
    split = runtime["control"]["retained"]
    assert split["lost_to_cuts"] == ["canary"] and "codename" not in split["lost"]
    assert not runtime["compactions"] and split["lost_to_compaction"] == []  # its cut outputs never fill 48K
