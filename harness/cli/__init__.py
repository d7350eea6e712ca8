"""Command line: `main` and the parser assembly. Each command lives in its own module (harness.cli.run,
.simulate, ...) as `add_parser` (its options, the shared ones from harness.cli.options) and a command
function: parse -> one library call -> one render call.

Command modules import the library inside their command functions: the parser is built for every command
(and --help), and the SDKs and matplotlib behind the library take seconds to import."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Sequence

from harness.cli import (calibrate, cases, compare, cost, gate, merge, real, run, runtimes, serve, simulate,
                         validate_summarizer, view)
from harness.errors import HarnessError
from harness.redact import redact
from harness.render.console import stderr

# the order of --help
COMMANDS = (run, compare, gate, merge, simulate, cases, cost, calibrate, validate_summarizer, real, serve, runtimes,
            view)


class Parser(argparse.ArgumentParser):
    """Every parser and subparser: no abbreviated options (`--cases` is never taken for `--cases-dir`), and a
    usage error is one line naming the command and `--help`, exit 2, not the whole usage."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="compaction-harness",
        description="Evaluate automatic context compaction in LLM agents: what the agent still knows after "
                    "compaction, and what the compaction costs.")
    parser.add_argument("--version", action="version", version=f"compaction-harness {installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    add_debug(parser)
    return parser


def add_debug(parser: argparse.ArgumentParser) -> None:
    """--debug on every parser and subparser, so it can go anywhere on the line."""
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an unexpected error")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                add_debug(subparser)


def installed_version() -> str:
    """The installed package's version (the one run.json records as harness_version)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("compaction-harness")
    except PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if argv is None:  # the command itself, not a caller in the same process
        arm_interrupt_watchdog()
    try:
        return args.func(args)
    except HarnessError as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)  # one line, never wrapped
        return exc.exit_code
    except KeyboardInterrupt:
        stderr().print("interrupted")
        if argv is None:
            end_runtimes()
            stop_now(130)
        return 130
    except Exception as exc:  # the last boundary: a bug or an unforeseen input is one line, not a traceback
        if getattr(args, "debug", False):
            raise
        print(f"error: {type(exc).__name__}: {one_line(exc)} (rerun with --debug for the traceback)",
              file=sys.stderr)
        return 2


INTERRUPT_WATCHDOG_S = 2.0


def arm_interrupt_watchdog() -> None:
    """Ctrl-C raises KeyboardInterrupt as always, and also starts a timer that ends the process if the orderly
    stop (keep what finished, release the run folder) has not ended it within INTERRUPT_WATCHDOG_S: whatever the
    main thread was doing when the signal came, a stop never waits for a hung server. What finished is already
    on disk (each write is atomic), so ending there loses nothing written."""
    def on_interrupt(signum: int, frame: object) -> None:
        timer = threading.Timer(INTERRUPT_WATCHDOG_S, _exit_interrupted)
        timer.daemon = True
        timer.start()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)


def _exit_interrupted() -> None:
    end_runtimes()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def end_runtimes() -> None:
    """Before the command exits on a stop: every runtime it drives is ended and its scratch folder removed (they
    run in their own process groups, which an exit would leave running); nothing when none was imported."""
    process = sys.modules.get("harness.runtimes.process")
    if process is not None:
        process.end_all()


def stop_now(code: int) -> None:
    """Exit at once when a worker thread still waits on a request: everything finished is written (only
    the main thread writes results; cassettes are replaced atomically), and joining the worker would hold
    Ctrl-C until the server answers or the request times out."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def one_line(exc: BaseException) -> str:
    """The error as one printable line with every secret removed."""
    return redact(" ".join(str(exc).split())).encode("utf-8", "backslashreplace").decode("utf-8")
