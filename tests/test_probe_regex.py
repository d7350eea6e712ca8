"""A probe regex never hangs a run (issue 33.3): the shapes that backtrack exponentially are refused when the
case is loaded (`run` and `cases grade` exit 2 with one line naming the file, the probe and the field), every
other search stops at its time limit, and a search never holds the GIL, so Ctrl-C reaches the main thread."""

from __future__ import annotations

import threading
import time

import pytest

import harness.probe_regex
from harness.cases import discover
from harness.errors import HarnessError, InputError
from harness.cli import main
from harness.probe_regex import risky_shape, search, search_any
from test_runner import make_case


def regex_probe(pattern: str) -> str:
    escaped = pattern.replace("\\", "\\\\")
    return f'\n[[probe]]\nid = "shape"\nkind = "recall"\nquestion = "Which?"\nregex = "{escaped}"\nplanted_at = 1\n'


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|a)*x", r"(.*)*x", r"(\w+\s?)*x", r"(?:ab|ab)+c", r"((a)+)+b"])
def test_a_backtracking_shape_is_refused_when_the_case_is_loaded(tmp_path, pattern):
    folder = make_case(tmp_path / "cases", "small", probes=regex_probe(pattern))
    with pytest.raises(InputError) as refused:
        discover(tmp_path / "cases")
    assert str(refused.value).startswith(f"{folder / 'case.toml'}: probe shape: `regex` {pattern!r}: ")
    assert "backtracks exponentially" in str(refused.value)


@pytest.mark.parametrize("pattern", [r"9090", r"(?:^|[\s`'\"])sa2\b", r"(a{1,5})+x", r"a{2,}b",
                                     r"(?:\bno\b|\bnot\b)[^.\n]{0,40}\bglobal", r"(start[^\n]{0,40}?-1\b[\s\S]{0,100}?end)"])
def test_bounded_and_plain_shapes_are_accepted(pattern):
    assert risky_shape(pattern) is None


def test_run_and_cases_grade_refuse_it_in_one_line(tmp_path, capsys):
    folder = make_case(tmp_path / "cases", "small", probes=regex_probe(r"(a+)+$"))
    expected = f"error: {folder / 'case.toml'}: probe shape: `regex` '(a+)+$': a quantifier inside an unbounded"
    assert main(["run", "--cases-dir", str(tmp_path / "cases"), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(expected) and len(error.splitlines()) == 1
    assert not (tmp_path / "out" / "run.json").exists()  # refused before the first case
    assert main(["cases", "grade", "small", "shape", "a" * 40 + "!", "--cases-dir", str(tmp_path / "cases")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(expected) and len(error.splitlines()) == 1


def test_a_search_that_backtracks_stops_at_its_limit(monkeypatch):
    monkeypatch.setattr(harness.probe_regex, "SEARCH_LIMIT_S", 0.2)
    assert risky_shape(r"(a|aa)+$") is None  # not a shape the load check knows: the limit stops it
    with pytest.raises(HarnessError, match=r"probe regex '\(a\|aa\)\+\$' ran past 0.2 s on a 41-character text"):
        search(r"(a|aa)+$", "a" * 40 + "!")
    assert search(r"port\s+9090$", "The port\nis port 9090\nnow") is True  # case-insensitive, ^/$ per line


def test_a_search_leaves_the_main_thread_running(monkeypatch):
    """A run matches on worker threads; the main thread must keep running (Ctrl-C is handled there)."""
    monkeypatch.setattr(harness.probe_regex, "SEARCH_LIMIT_S", 1.0)
    outcome: list[BaseException] = []
    worker = threading.Thread(target=lambda: _catch(outcome, lambda: search(r"(a|aa)+$", "a" * 60 + "!")))
    worker.start()
    ticks = 0
    while worker.is_alive():
        time.sleep(0.01)
        ticks += 1
    assert ticks >= 5 and isinstance(outcome[0], HarnessError)  # the GIL was released while it matched


def _catch(outcome: list[BaseException], call) -> None:
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 (handed to the test's thread)
        outcome.append(exc)


def test_the_limit_is_wall_time_even_when_the_engine_gets_little_cpu(monkeypatch):
    """Issue 44: the `regex` engine's timeout counts CPU time, so on a loaded machine `cases grade` with
    `(a|aa)+$` took 10.4 s against the documented 5 s. Here the engine is starved outright (it sleeps, using no
    CPU, as a thread does that never gets a core): the search still ends at its limit, and every text of one
    probe shares that one limit."""
    monkeypatch.setattr(harness.probe_regex, "SEARCH_LIMIT_S", 0.3)
    calls: list[float] = []

    def starved(pattern: str, text: str, cpu_limit_s: float) -> bool:
        calls.append(cpu_limit_s)
        if cpu_limit_s < 0.3:
            raise TimeoutError  # the first try in the caller's thread
        time.sleep(60)  # never reaches its CPU limit
        return True

    monkeypatch.setattr(harness.probe_regex, "_engine", starved)
    outcome: list[BaseException] = []
    worker = threading.Thread(target=lambda: _catch(outcome, lambda: search_any(r"(a|aa)+$", ["a" * 41, "b" * 9])))
    worker.start()
    worker.join(30)  # far past the limit, far before the engine's sleep ends
    assert not worker.is_alive() and isinstance(outcome[0], HarnessError)
    assert "ran past 0.3 s on a 41-character text" in str(outcome[0])
    assert calls == [0.05, 0.3]  # the second text was never searched: the one limit was spent


def test_a_sound_regex_is_searched_once_in_the_callers_thread(monkeypatch):
    started = threading.active_count()
    assert search_any(r"port\s+9090$", ["nothing here", "The port\nis port 9090\nnow"]) is True
    assert search_any(r"9091", ["nothing here", "port 9090"]) is False
    assert threading.active_count() == started
