"""`compaction-harness real-report`: scores on real ground. At each real compaction point of the chosen pool,
the real summary, the summarizer under test at the same points and budget, the controls, the floor and the
full history, by kind, with the probes lost (harness.studies.real)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import harness.cli.options as options
from harness.errors import HarnessError


def add_parser(commands: argparse._SubParsersAction) -> None:
    real = commands.add_parser("real-report", help="the real pool at its real compaction points: real summaries "
                                                    "beside the builtin's, the controls, the floor and full history")
    options.add_case_selection(real)
    real.add_argument("--pool", default="real", help="the pool whose cases are reported (default: %(default)s)")
    options.add_model(real, "--summarizer", "the summarizer compared with the real summaries (default builtin)")
    options.add_model(real, "--answerer", "the model answering probes (default builtin)")
    real.add_argument("--runtime", action="append", default=[], metavar="NAME",
                      help="also drive this real runtime on each case (repeatable: pi, codex, opencode), its window set "
                           "so its own trigger fires where the recorded session compacted (run --window recorded)")
    real.add_argument("--out", default="results/real-report",
                      help="the folder of the arms' runs, one subfolder each (default: %(default)s)")
    real.add_argument("--from-runs", action="store_true",
                      help="report on the runs already in --out instead of running the arms")
    real.add_argument("--resume", action="store_true", help="continue the arms' runs in --out")
    real.add_argument("--allow-over-budget", action="store_true",
                      help="compare arms even when some summaries exceeded the recorded size (graded cut to it)")
    options.add_markdown(real, "also write the report as markdown (default: OUT/report.md)")
    options.add_json(real, "print the study as one JSON document")
    real.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.cases import discover
    from harness.render.real import ArmProgress, show_real
    from harness.studies.real import arms, read_arms, real_study, run_arms

    chosen = arms(args.summarizer or "builtin", args.answerer or "builtin", tuple(dict.fromkeys(args.runtime)))
    out = Path(args.out)
    if args.from_runs:
        runs = read_arms(out, chosen)
    else:
        cases = [c for c in discover(args.cases_dir, args.cases or None) if c.pool == args.pool]
        if not cases:
            raise HarnessError(f"no case of pool {args.pool!r} in the selection")
        runs = run_arms(cases, out, chosen, ArmProgress(as_json=args.json), resume=args.resume)
    study = real_study(runs, under_test=chosen[1].name, allow_over_budget=args.allow_over_budget)
    markdown = Path(args.markdown) if args.markdown else out / "report.md"
    show_real(study, as_json=args.json, markdown=markdown,
              command="compaction-harness " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    return 0
