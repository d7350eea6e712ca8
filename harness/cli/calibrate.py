"""`compaction-harness calibrate TRANSCRIPT...`: the cache simulation replayed against real recorded billing."""

from __future__ import annotations

import argparse

import harness.cli.options as options

TTL_MODES = ("auto", "5m", "1h")  # harness.studies.calibrate's, kept here so --help imports no library
COMPACTION_CALLS = ("separate", "prefix")


def add_parser(commands: argparse._SubParsersAction) -> None:
    calibrate = commands.add_parser(
        "calibrate", help="replay transcripts with recorded usage through the cache simulation and compare")
    calibrate.add_argument("transcripts", nargs="+", metavar="TRANSCRIPT",
                           help="a Claude Code session (or any importable transcript, a session.jsonl or a "
                                "case folder) whose assistant messages record usage")
    calibrate.add_argument("--ttl", choices=TTL_MODES, default="auto",
                           help="cache entry lifetime (default auto: the 5m/1h split the transcript records, "
                                "else 5m, said so)")
    calibrate.add_argument("--compaction-call", choices=COMPACTION_CALLS, default=COMPACTION_CALLS[0],
                           help="the runtime's compaction call: separate (shares no cache entry with the "
                                "session; the default the real sessions support) or prefix (the session's "
                                "prefix plus an instruction)")
    calibrate.add_argument("--no-thinking", action="store_true",
                           help="leave recorded thinking out of the replayed context")
    calibrate.add_argument("--totals-only", action="store_true", help="no per-request table")
    options.add_json(calibrate)
    calibrate.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.render.calibrate import show_calibration
    from harness.studies.calibrate import calibrate

    result = calibrate(args.transcripts, args.ttl, not args.no_thinking, args.compaction_call)
    show_calibration(result, as_json=args.json, per_request=not args.totals_only)
    return 0
