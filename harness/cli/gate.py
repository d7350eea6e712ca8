"""`compaction-harness gate`: a run against a baseline; exit 0 pass, 1 regression, 2 error, 3 configuration
change."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

import harness.cli.options as options
from harness.errors import HarnessError
from harness.validate import writable_file

if TYPE_CHECKING:
    from harness.studies.gate import Thresholds


def add_parser(commands: argparse._SubParsersAction) -> None:
    what = "compare a run with a baseline: exit 0 pass, 1 regression, 2 error, 3 configuration change"
    parser = commands.add_parser("gate", help=what, description=what + " (docs/ci.md)")
    parser.add_argument("run", metavar="RUN", help="a run folder, or the folder of a run with several configurations "
                                                "(the one with the baseline's configuration is gated)")
    parser.add_argument("--baseline", required=True, metavar="FILE",
                        help="the baseline JSON to gate against (written by --update-baseline)")
    parser.add_argument("--update-baseline", action="store_true", help="write the baseline from this run")
    parser.add_argument("--allow-partial", action="store_true",
                        help="with --update-baseline: accept a run with errored cases or failed requests")
    parser.add_argument("--allow-config-change", action="store_true",
                        help="gate a run whose configuration differs from the baseline's (the differences are "
                             "named; without this flag gate stops with exit 3)")
    parser.add_argument("--min-pass-rate", action="append", metavar="[KIND=]RATE",
                        help="fail under this compacted pass rate, overall or for one probe kind (repeatable)")
    parser.add_argument("--max-drop", type=options.rate, metavar="RATE",
                        help="fail when the pass rate drops more than this (0 to 1)")
    parser.add_argument("--min-effect", type=options.rate, default=0.05,
                        help="live runs: smallest drop that fails (%(default)s)")
    parser.add_argument("--alpha", type=options.bounded_float(0.0, 1.0, open_low=True), default=0.05,
                        help="live runs: significance level, above 0 to 1 (%(default)s)")
    parser.add_argument("--junit", metavar="FILE", type=options.output_file, help="JUnit XML, one test case per probe")
    options.add_markdown(parser, "a summary for a CI job page")
    options.add_json(parser, "print the verdict as one JSON document")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.render.gate import show_baseline, show_gate
    from harness.studies.gate import gate, read_baseline, update_baseline

    if args.update_baseline:
        writable_file(args.baseline, "--update-baseline")  # before any work: exit 2, not a traceback at the end
    if args.update_baseline:
        _, run = the_run(args.run, None)
        show_baseline(update_baseline(run, args.baseline, allow_partial=args.allow_partial), args.baseline,
                      as_json=args.json)
        return 0
    baseline = read_baseline(args.baseline)
    folder, run = the_run(args.run, baseline)  # folder: where the case files (lost-probe answers) are
    verdict = gate(run, baseline, parse_thresholds(args), allow_config_change=args.allow_config_change)
    from harness.render.lost import lost_by_key

    show_gate(verdict, run["run_id"], args.baseline, junit=args.junit, markdown_path=args.markdown,
              lost=lost_by_key(run, folder) if args.junit else None, as_json=args.json)
    return verdict.exit_code


def the_run(path: str, baseline: dict[str, Any] | None) -> tuple[Path, dict[str, Any]]:
    """The run to gate and its folder: the folder's run, or of a folder with several configurations the one
    run with the baseline's configuration (none to match against when writing a baseline: then it must name
    one)."""
    from harness.results.folder import read_run
    from harness.results.run_folders import run_folders
    from harness.studies.gate import configuration_changes

    folders = run_folders(path)
    runs = [(folder, read_run(folder)) for folder in folders]
    if len(runs) == 1:
        return runs[0]
    names = ", ".join(str(folder) for folder in folders)
    if baseline is None:
        raise HarnessError(f"{path} holds {len(runs)} runs ({names}): write a baseline from one of them")
    matching = [(folder, run) for folder, run in runs
                if not configuration_changes(baseline.get("configuration") or {}, run["configuration"])]
    if len(matching) != 1:
        raise HarnessError(f"{path} holds {len(runs)} runs ({names}) and {len(matching) or 'none'} of them "
                           f"{'has' if len(matching) < 2 else 'have'} the baseline's configuration: pass one folder")
    return matching[0]


def parse_thresholds(args: argparse.Namespace) -> Thresholds:
    from harness.studies.gate import Thresholds

    overall, per_kind = None, {}
    for value in args.min_pass_rate or []:
        kind, sep, number = value.rpartition("=")
        try:
            rate = float(number)
        except ValueError:
            raise HarnessError(f"--min-pass-rate {value!r}: expected a rate like 0.8 or KIND=0.8") from None
        if not 0.0 <= rate <= 1.0:
            raise HarnessError(f"--min-pass-rate {value!r}: a rate is from 0 to 1")
        if sep:
            per_kind[kind] = rate
        else:
            overall = rate
    return Thresholds(min_pass_rate=overall, max_drop=args.max_drop, per_kind_min=per_kind,
                      min_effect=args.min_effect, alpha=args.alpha)
