"""Shared test set-up: no test touches the network or sees real keys; benchmarks run for real only when
their folder is asked for by name."""

import os
import socket
from collections import Counter
from pathlib import Path

import pytest

KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")

BENCHMARKS = Path(__file__).parent / "benchmarks"
STORAGE = Path(__file__).parents[1] / "results" / "benchmarks"


def pytest_configure(config):
    # `pytest` (everything) runs each benchmark once with --benchmark-disable (the ini default);
    # `pytest tests/benchmarks` measures them and saves the figures under results/benchmarks/.
    asked = [Path(a.split("::")[0]).resolve() for a in config.args]
    if any(p == BENCHMARKS or BENCHMARKS in p.parents for p in asked):
        config.option.benchmark_disable = False
        config.option.benchmark_autosave = True
        if config.option.benchmark_storage == "file://./.benchmarks":
            config.option.benchmark_storage = f"file://{STORAGE}"


def pytest_terminal_summary(terminalreporter):
    # A clone without ../shared, or without a runtime installed, skips whole groups of tests: say which and why
    # in a few lines (pytest's `-rs` lists each one).
    skipped = terminalreporter.stats.get("skipped", [])
    reasons = Counter(_skip_reason(report) for report in skipped)
    if reasons:
        terminalreporter.write_line(f"{len(skipped)} skipped, by reason:")
        for reason, count in reasons.most_common():
            terminalreporter.write_line(f"{count:6d}  {reason}")


def _skip_reason(report) -> str:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return " ".join(reason.removeprefix("Skipped: ").split())[:160]


def pytest_xdist_auto_num_workers(config):
    # `-n auto`: one worker more than the cores. A part of the suite waits on child processes (the runtimes'
    # node processes and their retry back-off), and the spare worker runs other tests meanwhile: on 2 cores
    # the suite took 5 min 51 s with 3 workers against 6 min 24 s with 2 (quiet machine, 2026-12-02).
    return (os.cpu_count() or 1) + 1


@pytest.fixture(autouse=True)
def no_network(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every socket connection fails, except loopback for tests that ask for the `loopback` fixture."""
    if request.node.get_closest_marker("live"):
        return
    allow_loopback = "loopback" in request.fixturenames
    real_connect = socket.socket.connect

    def guarded_connect(self: socket.socket, address: object) -> None:
        if self.family == socket.AF_UNIX:  # a socket file (the worker processes' fork server) is not the network
            return real_connect(self, address)
        host = address[0] if isinstance(address, tuple) else address
        if allow_loopback and host in ("127.0.0.1", "::1", "localhost"):
            return real_connect(self, address)
        raise OSError(f"network blocked in tests: connect to {address!r}")

    real_getaddrinfo = socket.getaddrinfo

    def guarded_getaddrinfo(host: object, *args: object, **kwargs: object):  # no DNS queries either
        if allow_loopback and host in ("127.0.0.1", "::1", "localhost"):
            return real_getaddrinfo(host, *args, **kwargs)
        raise socket.gaierror(f"network blocked in tests: resolve {host!r}")

    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", lambda self, address: guarded_connect(self, address))
    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def loopback() -> None:
    """Marks a test as allowed to connect to 127.0.0.1 (and nothing else)."""




@pytest.fixture(autouse=True)
def cases_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """`run` puts offline cases in one worker process per core by default; a worker does not see a test's
    monkeypatches, so tests run them in-process unless they ask for processes (`--jobs N`, `jobs=N`)."""
    from harness.run import workers

    monkeypatch.setattr(workers, "available_cores", lambda: 1)
