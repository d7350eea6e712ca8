"""The default run's CPU per graded probe against an older commit's, in interleaved pairs (issue 32's measure).

    .venv/bin/python tools/run_cpu.py [--old 345709b] [--old-dir /tmp/compaction-harness-345709b] [--pairs 3]

Each pair runs the older commit's `compaction-harness run` and then this checkout's, each on its own embedded
default, and takes the CPU (user + system) each used from the operating system's accounting of the finished
child. This checkout runs with `--jobs 1`: its worker processes would belong to a forkserver that the child does
not wait for, so their CPU would go uncounted; one process does the same work. The library grew between the
commits, so each run's CPU is divided by the probes it graded (`aggregates.valid_probes` in its run.json: the
probes graded in the compacted condition) and the pair's ratio is new over old. Interleaving puts both runs of a
pair under the same load. The older checkout is made once (a detached git worktree with its own venv) and
reused.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
TURN2 = "345709b"  # the commit issue 32 measures against


@dataclass(frozen=True)
class Measured:
    cpu_seconds: float
    graded: int

    @property
    def per_probe(self) -> float:
        return self.cpu_seconds / self.graded


def child_cpu(command: list[str], cwd: Path) -> float:
    """Run `command` to its end; the user + system CPU seconds it (and the children it waited for) used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except FileNotFoundError:  # run with a python outside the project's venv, say: no compaction-harness beside it
        raise SystemExit(f"{command[0]} not found: run this script with the project's .venv/bin/python") from None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def graded_probes(run_json: Path) -> int:
    """The probes a run graded in the compacted condition (its valid probes)."""
    graded = json.loads(run_json.read_text(encoding="utf-8"))["aggregates"]["valid_probes"]
    if not graded:
        raise SystemExit(f"{run_json}: no graded probes, nothing to divide by")
    return int(graded)


def measure(binary: Path, cwd: Path, out: Path, extra: list[str]) -> Measured:
    cpu = child_cpu([str(binary), "run", "--out", str(out), *extra], cwd)
    return Measured(cpu, graded_probes(out / "run.json"))


def ratios(pairs: list[tuple[Measured, Measured]]) -> list[float]:
    """New over old, per graded probe, pair by pair."""
    return [new.per_probe / old.per_probe for old, new in pairs]


def old_checkout(commit: str, folder: Path) -> Path:
    """The older commit's `compaction-harness`, installed in its own venv (made once)."""
    binary = folder / ".venv" / "bin" / "compaction-harness"
    if binary.exists():
        return binary
    steps = [[sys.executable, "-m", "venv", str(folder / ".venv")],
             [str(folder / ".venv" / "bin" / "pip"), "install", "-q", "-e", str(folder)]]
    if not folder.exists():
        steps.insert(0, ["git", "worktree", "add", "--detach", str(folder), commit])
    for step in steps:
        done = subprocess.run(step, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:  # a commit that does not exist, no network for pip: one line, not a traceback
            raise SystemExit(f"making the {commit} checkout in {folder}: {' '.join(step[:4])} failed: "
                             f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return binary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default=TURN2, help=f"the commit to compare with (default {TURN2}, turn-2)")
    parser.add_argument("--old-dir", type=Path, help="where its checkout is or goes "
                        "(default: /tmp/compaction-harness-COMMIT)")
    parser.add_argument("--pairs", type=int, default=3, help="interleaved old/new pairs (default 3)")
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    old_dir = args.old_dir or Path(tempfile.gettempdir()) / f"compaction-harness-{args.old}"
    old_binary = old_checkout(args.old, old_dir)
    new_binary = Path(sys.executable).parent / "compaction-harness"
    pairs: list[tuple[Measured, Measured]] = []
    with tempfile.TemporaryDirectory(prefix="run-cpu-") as scratch:
        for i in range(args.pairs):
            old = measure(old_binary, old_dir, Path(scratch) / f"old-{i}", [])
            new = measure(new_binary, ROOT, Path(scratch) / f"new-{i}", ["--jobs", "1"])
            pairs.append((old, new))
    _print(pairs, args.old)
    return 0


def _print(pairs: list[tuple[Measured, Measured]], commit: str) -> None:
    table = Table(title=f"CPU per graded probe: this checkout against {commit}")
    for column in ("pair", "old CPU s", "old graded", "new CPU s", "new graded", "ratio per probe"):
        table.add_column(column, justify="right")
    for i, ((old, new), ratio) in enumerate(zip(pairs, ratios(pairs)), 1):
        table.add_row(str(i), f"{old.cpu_seconds:.1f}", str(old.graded), f"{new.cpu_seconds:.1f}", str(new.graded),
                      f"{ratio:.2f}x")
    console = Console()
    console.print(table)
    console.print(f"median ratio per graded probe: {statistics.median(ratios(pairs)):.2f}x")


if __name__ == "__main__":
    sys.exit(main())
