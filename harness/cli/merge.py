"""`compaction-harness merge`: join shard results into one run, with its report."""

from __future__ import annotations

import argparse

import harness.cli.options as options


def add_parser(commands: argparse._SubParsersAction) -> None:
    merge = commands.add_parser("merge", help="join shard results into one run (every shard of one split)")
    merge.add_argument("runs", nargs="+", metavar="RUN")
    merge.add_argument("--out", required=True, help="the merged run's folder")
    merge.add_argument("--allow-partial", action="store_true",
                       help="merge runs that are not whole (a shard killed or still running, case files missing)")
    options.add_json(merge, "print the merged run's summary as one JSON document")
    merge.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.render.run import show_merged
    from harness.results.folder import merge_runs

    run = merge_runs(args.runs, args.out, allow_partial=args.allow_partial)
    show_merged(run, args.runs, args.out, as_json=args.json)
    return 0
