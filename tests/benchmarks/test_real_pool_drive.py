"""The whole real pool (the 10 `real-*` Claude Code cases) driven through a real runtime, as `run --runtime NAME
--pool real` drives it before grading (drive, capture, price: harness.run.runtime.driven_case), at the cases' own
windows with the builtin summarizer. Issue 39's targets on this 2-core machine, quiet: the pool through pi and
through Codex each under 10 minutes; the harness's CPU at most a quarter of the runtime's.

One round takes minutes, so it is opt-in like the other runtime benchmarks:

    pytest tests/benchmarks/test_real_pool_drive.py -n 0 -o addopts= -m runtime --benchmark-enable

`extra_info` holds the pool's wall seconds, the harness's CPU seconds (this process: its server threads, the
scripted model, the request log, capture and pricing; and the sandbox's relays) and the runtime's (its
processes, counted as they end, measured inside the sandbox: harness.run.runtime.cpu_seconds),
their ratio, the load average at the start and end, and per case the steps used and compactions made.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from harness.cases import load_case
from harness.errors import HarnessError
from harness.models import _tokens
from harness.models.builtin import BuiltinClient
from harness.models.pricing import load_prices
from harness.run.runtime import cpu_seconds, driven_case
from harness.runtimes.install import installed
from harness.runtimes.price import pricing_for

CASES = sorted(p for p in (Path(__file__).resolve().parents[2] / "cases").glob("real-*") if p.is_dir())


def _cpu() -> tuple[float, float]:
    """(the harness's, the runtime's) CPU seconds so far: a sandboxed runtime's as its forwarder measured it."""
    used = cpu_seconds()
    return used["harness"], used["runtime"]


@pytest.mark.runtime
@pytest.mark.parametrize("name", ["pi", "codex", "opencode"])
def test_real_pool_drive(benchmark, tmp_path, name, loopback):
    try:
        runtime = installed(name)
    except HarnessError as exc:
        pytest.skip(str(exc))
    cases = [load_case(path) for path in CASES]
    assert len(cases) == 10
    pricing = pricing_for("builtin", load_prices(None))
    _tokens.encode("")  # the tokenizer's one-time load is not a drive's
    found: dict = {}

    def the_pool():
        load, (mine, theirs), started = os.getloadavg()[0], _cpu(), time.perf_counter()
        records = [driven_case(case, runtime, BuiltinClient(), tmp_path, True, case.context_window,
                               case.max_output_tokens, pricing=pricing).record for case in cases]
        after = _cpu()
        found.update(seconds=round(time.perf_counter() - started, 1), harness_cpu=round(after[0] - mine, 1),
                     runtime_cpu=round(after[1] - theirs, 1), load_start=round(load, 1),
                     load_end=round(os.getloadavg()[0], 1),
                     cases={c.id: {"steps": f"{r['steps_used']}/{r['steps']}", "compactions": len(r["compactions"]),
                                   "seconds": r["seconds"]} for c, r in zip(cases, records)})
        return records

    records = benchmark.pedantic(the_pool, rounds=1, iterations=1, warmup_rounds=0)
    assert all(r["steps_used"] == r["steps"] and not r["stopped"] for r in records)  # every case to its end
    share = found["harness_cpu"] / found["runtime_cpu"] if found["runtime_cpu"] else None
    benchmark.extra_info.update({"runtime": f"{name} {runtime.version}", **found,
                                 "harness_share_of_runtime_cpu": round(share, 3) if share is not None else None})
