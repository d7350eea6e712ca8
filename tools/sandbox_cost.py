"""What the sandbox costs a drive (issue 40): the first MESSAGES messages of a shipped case driven through each
runtime with the sandbox on and off, alternately, ROUNDS times; prints one row per drive with the load average
when it started (docs/runtimes.md keeps the figures), then one bwrap start alone.

    .venv/bin/python tools/sandbox_cost.py --runtime pi --runtime codex [--case edge-32k-window] [--messages 12]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.cases import load_case
from harness.errors import HarnessError
from harness.models.builtin import BuiltinClient
from harness.runtimes.driver import drive
from harness.runtimes.install import installed
from harness.runtimes.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", action="append", required=True)
    parser.add_argument("--case", default="edge-32k-window")
    parser.add_argument("--messages", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    case = load_case(ROOT / "cases" / args.case)
    case = case.with_session(dataclasses.replace(case.session, messages=case.session.messages[:args.messages],
                                                 compactions=()))
    print("| round | runtime | sandbox | load | steps used | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    try:
        runtimes = [installed(name) for name in args.runtime]
        for number in range(1, args.rounds + 1):
            for runtime in runtimes:
                for sandboxed in (True, False):
                    load = os.getloadavg()[0]
                    done = drive(case, runtime.adapter, runtime.binary, runtime.version, BuiltinClient(),
                                 Path(tempfile.mkdtemp(prefix="sandbox-cost-")), sandboxed=sandboxed)
                    print(f"| {number} | {runtime.adapter.pin} | {done.sandbox} | {load:.1f} | "
                          f"{done.outcome.used}/{done.outcome.steps}{'' if done.ok else ' FAILED'} | "
                          f"{done.seconds:.1f} |")
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sandbox-cost-") as scratch:
        command = Sandbox(Path(scratch)).command(["true"], Path(scratch), Path(scratch))
        started = time.perf_counter()
        for _ in range(20):
            subprocess.run(command, check=True)
        print(f"\none bwrap start (to `true` and back): {(time.perf_counter() - started) / 20 * 1000:.0f} ms, "
              f"mean of 20, load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
