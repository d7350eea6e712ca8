"""The runner on small hand-made cases: invalid probes, error isolation, resume, the CLI."""

import json

import pytest

from harness.cases import discover
from harness.cli import main
from harness.results.folder import RunFolder, read_run, strip_volatile
from harness.run.config import RunConfig
from harness.run.matrix import run_cases

SESSION = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Please make the dev server listen on port 8080. Use pnpm, not npm."},
    {"role": "assistant", "content": "Reading the config.",
     "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "src/server/config.ts"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "export const PORT = 3000;\n" + "// filler line\n" * 400},
    {"role": "assistant", "content": "The port is set in src/server/config.ts; I changed it to 8080."},
    {"role": "user", "content": "Actually the port must be 9090 now, 8080 is taken."},
    {"role": "assistant", "content": "Changing the port to 9090.",
     "tool_calls": [{"id": "c2", "name": "edit_file", "arguments": {"path": "src/server/config.ts",
                                                                    "new": "PORT = 9090"}}]},
    {"role": "tool", "tool_call_id": "c2", "content": "edited"},
    {"role": "assistant", "content": "Done: the server listens on 9090."},
]

PROBES = """
[[probe]]
id = "pm"
kind = "constraint"
question = "What did the user say to use instead of npm?"
all = ["pnpm"]
planted_at = 0

[[probe]]
id = "config-file"
kind = "artifact"
question = "Which file sets the port?"
all = ["src/server/config.ts"]
planted_at = 1

[[probe]]
id = "never-said"
kind = "recall"
question = "What is the staging database host?"
all = ["db-staging-7.internal"]
planted_at = 2
"""


def make_case(root, name, session=SESSION, window=2000, probes=PROBES):
    folder = root / name
    folder.mkdir(parents=True)
    lines = session if isinstance(session, str) else "\n".join(json.dumps(m) for m in session) + "\n"
    (folder / "session.jsonl").write_text(lines)
    (folder / "case.toml").write_text(
        f'[case]\nid = "{name}"\ntitle = "t"\npool = "edge"\n\n[model]\ncontext_window = {window}\n'
        f"max_output_tokens = 256\n\n[policy]\nreserve_tokens = 400\ntail_cap_tokens = 300\nsummary_tokens = 300\n"
        + probes)
    return folder


def test_a_probe_that_fails_on_the_full_history_is_invalid(tmp_path):
    make_case(tmp_path / "cases", "small")
    wide = RunConfig(answerer_window=1_000_000)  # the whole history fits the answerer: it is the ceiling
    run = run_cases(discover(tmp_path / "cases"), wide, RunFolder(tmp_path / "out"), run_id="r")
    probes = {p["id"]: p for p in run["cases"]["small"]["probes"]}
    assert run["cases"]["small"]["events"], "the tiny window must force a compaction"
    assert probes["pm"]["valid"] and probes["config-file"]["valid"]
    assert not probes["never-said"]["valid"]
    assert probes["never-said"]["invalid_reason"] == "fails on the full history"
    assert run["aggregates"]["invalid_probes"] == ["small/never-said"]
    assert run["aggregates"]["valid_probes"] == 2


def test_one_failing_case_is_reported_and_the_others_finish(tmp_path):
    make_case(tmp_path / "cases", "good")
    make_case(tmp_path / "cases", "broken", session='{"role": "user", "content": "x"}\n{"role": "robot"}\n')
    run = run_cases(discover(tmp_path / "cases"), RunConfig(), RunFolder(tmp_path / "out"), run_id="r")
    assert run["cases"]["good"]["status"] == "ok"
    assert run["cases"]["broken"]["status"] == "error"
    assert "session.jsonl:2: role: unknown role 'robot'" in run["aggregates"]["errors"]["broken"]


def test_resume_after_an_interrupted_run_gives_the_same_run(tmp_path, monkeypatch):
    import sys
    import threading

    for name in ("a", "b", "c"):
        make_case(tmp_path / "cases", name)
    cases = discover(tmp_path / "cases")
    whole = run_cases(cases, RunConfig(), RunFolder(tmp_path / "whole"), run_id="r")

    class Stop(Exception):
        pass

    matrix = sys.modules["harness.run.matrix"]  # the module (harness.run's face exports a function of that name)
    released = threading.Event()
    real = matrix.guarded_case_record

    def held(case, plan, repeat=0):  # every case after the first waits until the interrupt: no race with it
        if case.id != "a":
            released.wait(30)
        return real(case, plan, repeat)

    def interrupt(record):
        released.set()
        raise Stop

    monkeypatch.setattr(matrix, "guarded_case_record", held)
    folder = RunFolder(tmp_path / "part")
    with pytest.raises(Stop):
        run_cases(cases, RunConfig(), folder, run_id="r", on_case=interrupt)
    monkeypatch.undo()
    finished = folder.finished_cases()
    # what finished is on disk: a, and b, which had started; c had not started and never ran
    assert finished == {("a", 0), ("b", 0)}
    seen = []
    resumed = run_cases(cases, RunConfig(), folder, run_id="r", resume=True, on_case=lambda r: seen.append(r["case"]))
    assert sorted(seen) == sorted({"a", "b", "c"} - {case for case, _ in finished})  # only the rest ran
    assert strip_volatile(resumed) == strip_volatile(whole)


def test_resume_refuses_another_configuration(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    args = ["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(tmp_path / "out")]
    assert main(args) == 0
    assert main(args) == 2  # the folder holds a run already
    assert "already holds a run" in capsys.readouterr().err
    assert main(args + ["--resume", "--set", "tail_turns=2"]) == 2
    assert "different configuration" in capsys.readouterr().err


def test_run_cli_writes_results_and_prints_json(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    out = tmp_path / "out"
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["aggregates"]["valid_probes"] == 2
    assert (out / "report.md").read_text().startswith("# Run ")
    case_file = json.loads((out / "cases" / "a.json").read_text())
    assert case_file["contexts"]["end"]["summary"].startswith("[Summary")
    assert read_run(out)["configuration"]["summarizer_spec"] == "builtin"


@pytest.mark.parametrize("option,message", [
    (["--set", "colour=3"], "expected KEY=VALUE"),
    (["--set", "tail_turns=many"], "takes an integer"),
    (["--model", "mistral:large"], "unknown provider"),
    (["--cases", "nope"], "no case matches 'nope'"),
])
def test_usage_errors_exit_2(tmp_path, capsys, option, message):
    make_case(tmp_path / "cases", "a")
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(tmp_path / "o"), *option]) == 2
    assert message in capsys.readouterr().err


def test_judge_repeat_and_concurrency(tmp_path):
    for name in ("a", "b"):
        make_case(tmp_path / "cases", name)
    cases = discover(tmp_path / "cases")
    config = RunConfig(judge="openai:gpt-5@emulator", record_mode="all", cassettes=str(tmp_path / "cassettes"))
    run = run_cases(cases, config, RunFolder(tmp_path / "out"), run_id="r", repeat=2, concurrency=2)
    assert sorted(run["cases"]) == ["a", "a.r1", "b", "b.r1"]
    graded = run["cases"]["a"]["probes"][0]["conditions"]["full"]
    assert graded["judged"] in range(6) and graded["judge_reason"]
    assert (tmp_path / "cassettes" / "a" / "openai-gpt-5-emulator.json").exists()
    assert (tmp_path / "cassettes" / "a.r1" / "openai-gpt-5-emulator.json").exists()  # one writer per file
    # the same run one case at a time gives the same outcomes
    serial = run_cases(cases, config, RunFolder(tmp_path / "serial"), run_id="r", repeat=2)
    assert strip_volatile(serial["cases"]) == strip_volatile(run["cases"])


def test_a_judge_under_test_is_refused(tmp_path, capsys):
    make_case(tmp_path / "cases", "a")
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(tmp_path / "o"), "--judge", "builtin"]) == 2
    assert "is a model under test" in capsys.readouterr().err


@pytest.mark.parametrize("args,message", [
    (["run", "--repeat", "0"], "--repeat: expected a whole number of 1 or more"),
    (["run", "--concurrency", "x"], "--concurrency: expected a whole number"),
    (["serve", "--port", "99999"], "--port: expected a port from 0 to 65535"),
])
def test_bad_numbers_are_usage_errors(capsys, args, message):
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_run_counts_each_messages_true_tokens_once(tmp_path, monkeypatch):
    """The replay's step check and live context, the ceiling and the graded prompts' sizes read one table per
    session (Case.true_tokens), so the o200k count of each message is taken once (issue 32)."""
    import harness.tokens

    make_case(tmp_path / "cases", "small")
    counted = []
    real = harness.tokens.count_message

    def spy(counter, message):
        counted.append((counter.name, id(message)))
        return real(counter, message)

    monkeypatch.setattr(harness.tokens, "count_message", spy)
    run = run_cases(discover(tmp_path / "cases"), RunConfig(), RunFolder(tmp_path / "out"), run_id="r")
    assert run["cases"]["small"]["events"] and run["cases"]["small"]["probes"]
    true = [message for name, message in counted if name == "o200k"]
    assert true and len(true) == len(set(true))
