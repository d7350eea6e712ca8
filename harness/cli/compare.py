"""`compaction-harness compare`: configurations side by side, with pairwise significance."""

from __future__ import annotations

import argparse

import harness.cli.options as options


def add_parser(commands: argparse._SubParsersAction) -> None:
    compare = commands.add_parser("compare", help="configurations side by side, with pairwise significance")
    compare.add_argument("runs", nargs="+", metavar="RUN")
    options.add_markdown(compare, "write the comparison as markdown")
    options.add_json(compare)
    compare.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.render.compare import show_compare
    from harness.results.folder import read_run
    from harness.studies.compare import comparison

    runs = [read_run(path) for path in args.runs]
    show_compare(comparison(runs), runs, markdown_path=args.markdown, as_json=args.json)
    return 0
