"""Command line: `main` and the parser assembly. Each command lives in its own module (harness.cli.run,
.simulate, ...) as `add_parser` (its options, the shared ones from harness.cli.options) and a command
function: parse -> one library call -> one render call.

Command modules import the library inside their command functions: the parser is built for every command
(and --help), and the SDKs and matplotlib behind the library take seconds to import."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from harness.cli import cases, compare, cost, gate, merge, real, run, serve, simulate, validate_summarizer
from harness.errors import HarnessError
from harness.render.console import stderr

COMMANDS = (run, compare, gate, merge, simulate, cases, cost, validate_summarizer, real, serve)  # the order of --help


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compaction-harness",
        description="Evaluate automatic context compaction in LLM agents: what the agent still knows after "
                    "compaction, and what the compaction costs.")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)  # one line, never wrapped
        return exc.exit_code
    except KeyboardInterrupt:
        stderr().print("interrupted")
        return 130
