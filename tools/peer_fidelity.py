"""Peer fidelity (issue 28): each harness peer beside the real runtime it re-implements, on shipped cases with the
builtin summarizer: where each compacted and where its verbatim tail started. Prints a markdown table.

    .venv/bin/python tools/peer_fidelity.py --runtime pi --runtime codex --cases edge-32k-window [--window N]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

from harness.cases import load_case
from harness.errors import HarnessError
from harness.runtimes.install import installed
from harness.studies.fidelity import fidelity

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", action="append", required=True)
    parser.add_argument("--cases", action="append", required=True)
    parser.add_argument("--window", type=int, help="the window for both (default: the case's)")
    args = parser.parse_args()
    print("| case | runtime | window | runtime compacts before | peer compacts before | runtime tail from | "
          "peer tail from | note |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    try:
        for name in args.runtime:
            runtime = installed(name)
            for case_id in args.cases:
                case = load_case(ROOT / "cases" / case_id)
                if args.window:
                    case = dataclasses.replace(case, context_window=args.window)
                found = fidelity(case, runtime, Path(tempfile.mkdtemp(prefix="fidelity-")))
                r, p = found.runtime_points, found.peer_points
                print(f"| {case.id} | {found.runtime} | {case.context_window} | {list(r.positions)} | "
                      f"{list(p.positions)} | {list(r.tails)} | {list(p.tails)} | {found.failure or ''} |")
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
