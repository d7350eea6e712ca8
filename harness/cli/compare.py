"""`compaction-harness compare`: configurations side by side, with pairwise significance."""

from __future__ import annotations

import argparse

import harness.cli.options as options


def add_parser(commands: argparse._SubParsersAction) -> None:
    compare = commands.add_parser("compare", help="configurations side by side, with pairwise significance")
    compare.add_argument("runs", nargs="+", metavar="RUN",
                         help="run folders; the folder of a run with several configurations stands for each of them")
    options.add_markdown(compare, "write the comparison as markdown")
    options.add_json(compare)
    compare.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.render.compare import show_compare
    from harness.results.folder import read_run
    from harness.studies.compare import comparison

    from harness.results.run_folders import run_folders

    runs = [read_run(folder) for path in args.runs for folder in run_folders(path)]
    show_compare(comparison(runs), runs, markdown_path=args.markdown, as_json=args.json)
    return 0
