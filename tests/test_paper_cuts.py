"""Paper cuts (issue 29 item 7), each with its test: no abbreviated options, argparse errors in one line,
simulate takes a case id, gate --baseline has help, progress lines without a terminal, no `None s` after a
cassette miss, and an @emulator spec without a price row runs offline at price 0."""

import io
import json

import pytest
from rich.console import Console

from harness.cli import main
from harness.errors import HarnessError
from harness.models.pricing import load_prices, resolve
from harness.render.progress import Heartbeat

from test_runner import make_case


def test_an_abbreviated_option_is_refused_not_taken_for_a_longer_one(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["cases", "validate", "--cases", "X"])  # validate has --cases-dir only: never taken for it
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert "unrecognized arguments: --cases" in error


@pytest.mark.parametrize("argv", [["run", "--polic", "x"], ["gate"], ["bogus"], ["run", "--repeat", "many"]])
def test_an_argparse_error_is_one_line_pointing_at_help(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("compaction-harness") and "--help)" in error


def test_simulate_takes_a_case_id_as_run_does(tmp_path, capsys):
    make_case(tmp_path / "cases", "small")
    assert main(["simulate", "small", "--cases-dir", str(tmp_path / "cases"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)
    assert main(["simulate", "nope", "--cases-dir", str(tmp_path / "cases")]) == 2
    assert "no such session file, case folder or case id" in capsys.readouterr().err


def test_gate_baseline_has_help(capsys):
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--baseline FILE the baseline JSON to gate against" in text and "3 configuration change" in text


def test_a_heartbeat_prints_now_and_then_and_at_the_end_off_a_terminal():
    out = io.StringIO()
    now = [0.0]
    beat = Heartbeat("cases", 5, console=Console(file=out, force_terminal=False), every_s=30, clock=lambda: now[0])
    for step, name in zip((10, 25, 10, 1, 1), "abcde"):
        now[0] += step
        beat.tick(name)
    assert out.getvalue().splitlines() == ["cases: 2/5 done (last: b), 35 s", "cases: 5/5 done (last: e), 47 s"]
    quiet = io.StringIO()
    on_terminal = Heartbeat("cases", 1, console=Console(file=quiet, force_terminal=True))
    on_terminal.tick("a")
    assert quiet.getvalue() == ""  # the progress bar is there


def test_run_and_cost_without_a_terminal_say_how_far_they_are(tmp_path, capsys):
    make_case(tmp_path / "cases", "small")
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(tmp_path / "out")]) == 0
    assert "cases: 1/1 done (last: small)" in capsys.readouterr().err
    assert main(["cost", "--cases-dir", str(tmp_path / "cases"), "--model", "claude-sonnet-4-6"]) == 0
    assert "cost: sessions priced: 1/1 done (last: small)" in capsys.readouterr().err


def test_a_cassette_miss_prints_no_none_seconds(tmp_path, capsys):
    make_case(tmp_path / "cases", "small")
    base = ["run", "--cases-dir", str(tmp_path / "cases"), "--summarizer", "openai:gpt-5@emulator", "--cassettes",
            str(tmp_path / "cassettes")]
    assert main([*base, "--record-mode", "new", "--out", str(tmp_path / "recorded")]) == 0
    capsys.readouterr()  # the replay asks for other sections: its requests were never recorded
    main([*base, "--record-mode", "none", "--sections", "Goal", "--out", str(tmp_path / "out")])
    printed = capsys.readouterr()
    assert "not recorded" in printed.out + printed.err
    assert "None s" not in printed.out + printed.err


def test_an_emulator_spec_without_a_price_row_runs_offline_at_price_0(tmp_path, capsys):
    make_case(tmp_path / "cases", "small")
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--summarizer", "openai-compact:gpt-5.6@emulator",
                 "--out", str(tmp_path / "out"), "--json"]) == 0
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["aggregates"]["cost"]["usd"] == 0 and run["aggregates"]["cost"]["source"] == "modelled"
    with pytest.raises(HarnessError, match="no price for model"):
        resolve("openai:gpt-5.6", load_prices(None))  # off the emulator a missing row still stops the run
