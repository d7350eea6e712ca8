"""docs/commands.md below its marker: every command's and subcommand's `--help`, as the parser prints it.

The page's prose (what each command is for) is written by hand above the marker; the option reference below it
is generated here from the one place options are declared (harness/cli), at a fixed width, so it lists every
option and cannot drift from the code: tests/test_commands_doc.py fails when it is stale.

    .venv/bin/python tools/commands_doc.py          # rewrite the generated part
    .venv/bin/python tools/commands_doc.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "commands.md"
MARKER = "<!-- generated below by tools/commands_doc.py from the parser: edit harness/cli, not this -->"
WIDTH = "100"  # argparse wraps to $COLUMNS: fixed, so the page does not depend on the terminal


@contextmanager
def fixed_width() -> Iterator[None]:
    """$COLUMNS at WIDTH while help is formatted, as it was after."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """(command line, parser) for the program, each command and each subcommand, in --help order."""
    from harness.cli import build_parser

    top = build_parser()
    found = [("compaction-harness", top)]

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found.append((f"{prefix} {name}", sub))
                    walk(sub, f"{prefix} {name}")

    walk(top, "compaction-harness")
    return found


def generated() -> str:
    parts = [MARKER, ""]
    with fixed_width():
        for line, parser in parsers():
            parts += [f"## `{line}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    return "\n".join(parts)


def page(current: str) -> str:
    """The page with its generated part replaced (everything from the marker on)."""
    head = current.split(MARKER, 1)[0] if MARKER in current else current.rstrip() + "\n\n"
    return head + generated()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/commands.md is stale")
    args = parser.parse_args(argv)
    current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else "# Commands\n"
    wanted = page(current)
    if args.check:
        if wanted != current:
            print(f"{PAGE.relative_to(ROOT)} is stale: run .venv/bin/python tools/commands_doc.py")
            return 1
        return 0
    PAGE.write_text(wanted, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
