"""`compaction-harness merge`: join shard results into one run."""

from __future__ import annotations

import argparse



def add_parser(commands: argparse._SubParsersAction) -> None:
    merge = commands.add_parser("merge", help="join shard results into one run")
    merge.add_argument("runs", nargs="+", metavar="RUN")
    merge.add_argument("--out", required=True, help="the merged run's folder")
    merge.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.render.run import show_merged
    from harness.results.folder import merge_runs

    run = merge_runs(args.runs, args.out)
    show_merged(run, args.runs, args.out)
    return 0
