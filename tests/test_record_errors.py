"""`run --record-errors` (issue 17.4): while recording, a provider's 4xx reply is kept in the cassette and a
replay meets that same failure again, never an answer; without the flag the reply is not recorded, so the
replay misses. Through the real OpenAI SDK over the emulator, which answers the first summarizer call 400."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.models.emulator import Emulator, EmulatorTransport
from test_failed_requests import PROBES, SESSION
from test_runner import make_case

EMULATED = "openai:gpt-5@emulator"


@pytest.fixture
def cases(tmp_path, monkeypatch):
    make_case(tmp_path / "cases", "multi", session=SESSION, probes=PROBES)
    emulator = Emulator()
    emulator.inject("400")  # the first request: the summarizer's first compaction
    monkeypatch.setattr("harness.models.emulator.EmulatorTransport", lambda: EmulatorTransport(emulator))
    return tmp_path / "cases"


def command(cases, tmp_path, out: str, mode: str, *extra: str) -> list[str]:
    return ["run", "--cases-dir", str(cases), "--summarizer", EMULATED, "--answerer", "builtin", "--record-mode", mode,
            "--cassettes", str(tmp_path / "cassettes"), "--out", str(tmp_path / out), "--retries", "0", *extra]


def recorded_statuses(tmp_path) -> list[int]:
    return [i["response"]["status"] for path in sorted((tmp_path / "cassettes").rglob("*.json"))
            for i in json.loads(path.read_text())["interactions"]]


def case_of(tmp_path, out: str) -> dict:
    return json.loads((tmp_path / out / "run.json").read_text())["cases"]["multi"]


def test_with_the_flag_a_4xx_is_recorded_and_replayed_as_that_failure(cases, tmp_path):
    assert main(command(cases, tmp_path, "recorded", "new", "--record-errors")) == 1
    assert recorded_statuses(tmp_path) == [400]
    recorded = case_of(tmp_path, "recorded")["failure"]
    assert recorded["request"] == "summarizer" and "HTTP 400" in recorded["error"]
    assert main(command(cases, tmp_path, "replayed", "none")) == 1  # offline: the cassette alone answers
    replayed = case_of(tmp_path, "replayed")
    assert replayed["status"] == "ok" and replayed["failure"] == recorded and replayed["events"] == []
    assert all(p["failure"] == recorded for p in replayed["probes"])  # the failure, never a summary


def test_without_the_flag_the_4xx_is_not_recorded(cases, tmp_path):
    assert main(command(cases, tmp_path, "recorded", "new")) == 1
    assert "HTTP 400" in case_of(tmp_path, "recorded")["failure"]["error"]  # the run saw it all the same
    assert 400 not in recorded_statuses(tmp_path)
    assert main(command(cases, tmp_path, "replayed", "none")) == 2  # nothing was recorded: nothing to replay
    assert not (tmp_path / "replayed" / "run.json").exists()


def test_the_flag_on_a_replay_only_run_is_a_usage_error(cases, tmp_path, capsys):
    assert main(command(cases, tmp_path, "out", "none", "--record-errors")) == 2
    error = capsys.readouterr().err
    assert "--record-errors" in error and "--record-mode once, new or all" in error
    assert not (tmp_path / "out").exists()


def test_run_help_names_the_flag(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "--record-errors" in capsys.readouterr().out
