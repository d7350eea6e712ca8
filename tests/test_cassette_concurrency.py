"""Two recordings into one `--cassettes` keep each other's exchanges (issue 33.4): each save joins what the
file holds now under a lock on the cassette's folder, instead of writing the list the writer read when it
opened. Shown deterministically with two writers in one process, and with two concurrent `run` processes
of different configurations whose replays are then both complete."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx2
import pytest

from harness.errors import HarnessError
from harness.models.cassette import CassetteTransport, one_run
from harness.models.emulator import Emulator, EmulatorTransport
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
    later = Emulator(clock=lambda: 5000.0)  # the same replies, made at another time
    again = CassetteTransport(path, inner=EmulatorTransport(later), mode="all", case_id="case")
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


def _claimant(path, mode: str) -> subprocess.Popen:
    """Another process holding a `mode` recording open on the cassette at `path` until its stdin closes."""
    code = ("import sys; from pathlib import Path; from harness.models.cassette import CassetteTransport; "
            "from harness.models.emulator import EmulatorTransport; "
            f"CassetteTransport(Path({str(path)!r}), inner=EmulatorTransport(), mode={mode!r}, case_id='case'); "
            "print('open', flush=True); sys.stdin.read()")
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline() == "open\n"
    return process


def test_a_re_recording_and_another_processs_recording_refuse_each_other(tmp_path):
    """Issue 44: `--record-mode all` replaces what the file held when it opened, so beside a recording of another
    process it would drop what that one saved: the second to open stops with one line, whichever mode; a
    process's own writers never refuse each other, and the claim ends with the process."""
    path = tmp_path / "case" / "openai-gpt-5.json"
    for theirs, ours in (("all", "new"), ("all", "all"), ("new", "all"), ("once", "all")):
        other = _claimant(path, theirs)
        try:
            with pytest.raises(HarnessError, match=r"cassette folder .*/case: another process is (re-)?recording") \
                    as refused:
                CassetteTransport(path, inner=EmulatorTransport(), mode=ours, case_id="case")
            assert "\n" not in str(refused.value) and "another --cassettes" in str(refused.value)
        finally:
            other.communicate("")
        path.unlink(missing_ok=True)
    for mode in ("new", "new"):
        other = _claimant(path, mode)  # recordings that add share a folder
        try:
            _post(CassetteTransport(path, inner=EmulatorTransport(), mode="new", case_id="case"), "together")
        finally:
            other.communicate("")
    _post(CassetteTransport(path, inner=EmulatorTransport(), mode="all", case_id="case"), "alone now")
    _post(CassetteTransport(path, inner=EmulatorTransport(), mode="new", case_id="case"), "same process")


def test_two_concurrent_re_recordings_lose_nothing_or_one_refuses_in_one_line(tmp_path):
    """Two `run --record-mode all` of different configurations into one `--cassettes` at once (3 of 4 rounds lost
    exchanges, both exiting 0): now each run either finishes, or stops with one line (exit 2) at the first case
    folder the other holds, and then records whole once the other is done; every configuration replays whole."""
    cases = tmp_path / "cases"
    for name in ("one", "two"):
        make_case(cases, name, session=SESSION, probes=PROBES)
    cassettes = tmp_path / "cassettes"
    recordings = {tail: _run(cases, cassettes, tmp_path / f"record-{tail}", "all", tail) for tail in (300, 200)}
    ended = {tail: (process.wait(timeout=600), process.stderr.read()) for tail, process in recordings.items()}
    for tail, (code, error) in ended.items():
        if code == 2:
            assert error.startswith("error: cassette folder ") and "another process is" in error
            assert error.count("\n") == 1
            again = _run(cases, cassettes, tmp_path / f"record-{tail}-again", "new", tail)
            assert again.wait(timeout=600) == 0, again.stderr.read()
        else:
            assert code == 0, error
    replays = [_run(cases, cassettes, tmp_path / f"replay-{tail}", "none", tail) for tail in (300, 200)]
    for process in replays:
        assert process.wait(timeout=600) == 0, process.stderr.read()  # no cassette miss in either


def test_a_re_recording_that_changes_nothing_changes_no_byte(tmp_path):
    """Issue 45 item 6: `--record-mode all` rewrote 14 committed cassettes whose only change was a timestamp. An
    exchange recorded again unchanged but for the reply's `created` time keeps its entry as it was; a changed one
    is replaced."""
    path = tmp_path / "case" / "openai-gpt-5.json"
    first = CassetteTransport(path, inner=EmulatorTransport(Emulator(clock=lambda: 1000.0)), mode="new",
                              case_id="case")
    for text in ("one", "two", "one"):
        _post(first, text)
    before = path.read_bytes()
    again = CassetteTransport(path, inner=EmulatorTransport(), mode="all", case_id="case")
    for text in ("one", "two", "one"):
        _post(again, text)
    assert path.read_bytes() == before
    changed = CassetteTransport(path, inner=EmulatorTransport(), mode="all", case_id="case")
    for text in ("one", "three"):
        _post(changed, text)
    recorded = json.loads(path.read_text())["interactions"]
    assert [i["request"]["body"]["messages"][0]["content"] for i in recorded] == ["one", "three"]
    assert recorded[0] == json.loads(before)["interactions"][0]  # timestamp and timing as first recorded
