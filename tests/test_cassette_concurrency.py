"""Two recordings into one `--cassettes` keep each other's exchanges (issue 33.4): each save joins what the
file holds now under a lock on the cassette's folder, instead of writing the list the writer read when it
opened. Shown deterministically with two writers in one process, and with two concurrent `run` processes
of different configurations whose replays are then both complete."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx2

from harness.models.cassette import CassetteTransport, one_run
from harness.models.emulator import EmulatorTransport
from test_failed_requests import EMULATED, PROBES, SESSION
from test_runner import make_case


def _post(transport: CassetteTransport, text: str) -> None:
    body = {"model": "gpt-5", "messages": [{"role": "user", "content": text}]}
    request = httpx2.Request("POST", "http://openai.emulator.invalid/v1/chat/completions", json=body)
    assert transport.handle_request(request).status_code == 200


def test_two_writers_opened_together_both_keep_what_they_recorded(tmp_path):
    path = tmp_path / "case" / "openai-gpt-5.json"
    first, second = (CassetteTransport(path, inner=EmulatorTransport(), mode=mode, case_id="case")
                     for mode in ("new", "once"))  # both opened before either recorded anything
    _post(first, "one")
    _post(second, "two")
    _post(first, "three")
    recorded = json.loads(path.read_text())["interactions"]
    assert [i["request"]["body"]["messages"][0]["content"] for i in recorded] == ["one", "two", "three"]
    replay = CassetteTransport(path, inner=None, mode="none", case_id="case")
    for text in ("one", "two", "three"):
        _post(replay, text)


def test_a_re_recording_replaces_only_what_the_file_held_when_it_opened(tmp_path):
    path = tmp_path / "case" / "openai-gpt-5.json"
    _post(CassetteTransport(path, inner=EmulatorTransport(), mode="new", case_id="case"), "old")
    again = CassetteTransport(path, inner=EmulatorTransport(), mode="all", case_id="case")
    other = CassetteTransport(path, inner=EmulatorTransport(), mode="new", case_id="case")
    _post(other, "meanwhile")  # recorded after the re-recording opened: kept
    _post(again, "fresh")
    recorded = json.loads(path.read_text())["interactions"]
    assert [i["request"]["body"]["messages"][0]["content"] for i in recorded] == ["meanwhile", "fresh"]


def test_within_one_run_a_re_recording_keeps_what_an_earlier_configuration_recorded(tmp_path):
    """`run --policy A --runtime pi --record-mode all`: each configuration opens the case's cassette in `all`;
    the later one replaces what an earlier run left, not what the first configuration just recorded."""
    path = tmp_path / "case" / "openai-gpt-5.json"
    _post(CassetteTransport(path, inner=EmulatorTransport(), mode="new", case_id="case"), "before the run")
    with one_run():
        _post(CassetteTransport(path, inner=EmulatorTransport(), mode="all", case_id="case"), "first configuration")
        _post(CassetteTransport(path, inner=EmulatorTransport(), mode="all", case_id="case"), "second configuration")
    recorded = json.loads(path.read_text())["interactions"]
    assert [i["request"]["body"]["messages"][0]["content"] for i in recorded] == ["first configuration",
                                                                                  "second configuration"]
    replay = CassetteTransport(path, inner=None, mode="none", case_id="case")
    for text in ("first configuration", "second configuration"):
        _post(replay, text)


def _run(cases, cassettes, out, mode: str, tail: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "harness", "run", "--cases-dir", str(cases), "--summarizer", EMULATED,
               "--record-mode", mode, "--cassettes", str(cassettes), "--out", str(out),
               "--set", f"tail_cap_tokens={tail}"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_two_concurrent_recordings_of_different_configurations_both_replay(tmp_path):
    cases = tmp_path / "cases"
    for name in ("one", "two", "three"):
        make_case(cases, name, session=SESSION, probes=PROBES)
    cassettes = tmp_path / "cassettes"
    recordings = [_run(cases, cassettes, tmp_path / f"record-{tail}", "new", tail) for tail in (300, 200)]
    for process in recordings:
        assert process.wait(timeout=600) == 0, process.stderr.read()
    replays = [_run(cases, cassettes, tmp_path / f"replay-{tail}", "none", tail) for tail in (300, 200)]
    for process in replays:
        assert process.wait(timeout=600) == 0, process.stderr.read()  # no cassette miss in either
    for tail in (300, 200):
        run = json.loads((tmp_path / f"replay-{tail}" / "run.json").read_text())
        assert all(case["status"] == "ok" and case["events"] for case in run["cases"].values())
