"""Command line: argument parsing and rendering only; each command calls one function."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table

from harness.errors import HarnessError

# Wide tables in CI logs and pipes; a terminal keeps its own width.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)


# ---------------------------------------------------------------------------------------------
# simulate


def add_policy_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", default="default", help="policy name (default: %(default)s)")
    parser.add_argument("--window", type=int, help="context window in tokens (default: the case's)")
    parser.add_argument("--max-output", type=int, help="the model's max output tokens (default: the case's)")
    parser.add_argument("--reserve", type=int, help="reserve_tokens (default 16384)")
    parser.add_argument("--tail-turns", type=int, help="tail_turns (default 3)")
    parser.add_argument("--tail-cap", type=int, help="tail_cap_tokens (default 16384)")
    parser.add_argument("--mode", choices=("read_write", "lookup", "off"), help="default read_write")
    parser.add_argument("--summary-tokens", type=int, help="summarizer output budget (default 4096)")


def policy_settings(args: argparse.Namespace) -> dict[str, Any]:
    return {"context_window": args.window, "max_output_tokens": args.max_output,
            "reserve_tokens": args.reserve, "tail_turns": args.tail_turns,
            "tail_cap_tokens": args.tail_cap, "mode": args.mode, "summary_tokens": args.summary_tokens}


def cmd_simulate(args: argparse.Namespace) -> int:
    from harness.simulate import Simulator, config_for, load_target, parse_int_list

    target = load_target(args.target)
    simulator = Simulator(target, estimator=args.estimator, tokenizer=args.tokenizer)
    config = config_for(target, policy_settings(args))
    if args.sweep:
        windows = parse_int_list(args.windows, "--windows") if args.windows else [config.context_window]
        reserves = parse_int_list(args.reserves, "--reserves")
        rows = simulator.sweep(args.policy, config, windows, reserves)
        if args.json:
            print(json.dumps({"target": target.name, "sweep": rows}, indent=2))
        else:
            render_sweep(target.name, rows)
        return 0
    result = simulator.run(args.policy, config)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        render_simulation(result)
    return 0


def render_simulation(result) -> None:
    replay, config = result.replay, result.config
    out.print(f"[bold]{result.target}[/]: {result.messages} messages, {replay.sends} sends, policy "
              f"{result.policy} ({config.mode}), window {config.context_window}, reserve {config.reserve_tokens}, "
              f"estimator {result.estimator}; replayed in {result.elapsed_s:.3f} s")
    table = Table(title="compaction events")
    for column in ("#", "send", "head..tail", "turns", "steps", "one step", "before est/true",
                   "after est/true", "summary", "source"):
        table.add_column(column, justify="right" if column not in ("source", "one step") else "left")
    for e in replay.events:
        table.add_row(str(e.number), str(e.send_index), f"{e.head_start}..{e.tail_start}", str(e.turns_kept),
                      str(e.steps_kept), "yes" if e.truncated_to_step else "", f"{e.tokens_before_est}/{e.tokens_before_true}",
                      f"{e.tokens_after_est}/{e.tokens_after_true}", str(e.summary_tokens), e.source)
    out.print(table if replay.events else "no compaction")
    counts = replay.risk_counts()
    risks = Table(title="risks the policy leaves")
    risks.add_column("risk")
    risks.add_column("sends", justify="right")
    risks.add_column("first", justify="left")
    for kind, count in counts.items():
        first = next((r for r in replay.risks if r.kind == kind), None)
        risks.add_row(kind, str(count), f"@{first.send_index}: {first.detail}" if first else "")
    out.print(risks)


def render_sweep(name: str, rows: list[dict]) -> None:
    from harness.compactor import RISK_KINDS

    table = Table(title=f"reserve sweep: {name}")
    for column in ("policy", "window", "reserve", "compactions", *RISK_KINDS):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(row["policy"], str(row["context_window"]), str(row["reserve_tokens"]),
                      str(row["compactions"]), *(str(row[k]) for k in RISK_KINDS))
    out.print(table)


# ---------------------------------------------------------------------------------------------
# cases


def cmd_cases_list(args: argparse.Namespace) -> int:
    from harness.cases import discover

    table = Table(title=f"cases in {args.cases_dir}")
    for column in ("id", "pool", "window", "messages", "probes", "title"):
        table.add_column(column)
    for case in discover(args.cases_dir):
        table.add_row(case.id, case.pool, str(case.context_window), str(len(case.session.messages)),
                      str(len(case.probes)), case.title)
    out.print(table)
    return 0


def cmd_cases_validate(args: argparse.Namespace) -> int:
    from harness.cases import discover, validate_case

    problems: list[str] = []
    cases = discover(args.cases_dir, args.cases or None)
    for case in cases:
        try:
            problems.extend(validate_case(case))
        except HarnessError as exc:
            problems.append(str(exc))
    for problem in problems:
        err.print(problem)
    probes = sum(len(c.probes) for c in cases)
    out.print(f"{len(cases)} cases, {probes} probes, {len(problems)} problems")
    return 2 if problems else 0


# ---------------------------------------------------------------------------------------------
# run (until the evaluation lands: simulate every shipped case)


def cmd_run(args: argparse.Namespace) -> int:
    from harness.cases import discover
    from harness.simulate import Simulator, Target, config_for

    rows = []
    for case in discover(args.cases_dir, args.cases or None):
        target = Target(case.id, case.session, case.context_window, case.max_output_tokens)
        result = Simulator(target).run(args.policy, config_for(target, {}))
        rows.append((case, result))
    table = Table(title="compaction over the shipped cases (placeholder summarizer)")
    for column in ("case", "pool", "messages", "sends", "compactions", "risks", "seconds"):
        table.add_column(column)
    for case, result in rows:
        table.add_row(case.id, case.pool, str(result.messages), str(result.replay.sends),
                      str(len(result.replay.events)), str(len(result.replay.risks)), f"{result.elapsed_s:.2f}")
    out.print(table)
    return 0


# ---------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="compaction-harness", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="evaluate compaction over the case library")
    run.add_argument("--cases", action="append", help="case id, folder or glob (repeatable)")
    run.add_argument("--cases-dir", default="cases")
    run.add_argument("--policy", default="default")
    run.set_defaults(func=cmd_run)

    simulate = commands.add_parser("simulate", help="replay one session through a policy without a model")
    simulate.add_argument("target", metavar="SESSION|CASE_DIR")
    add_policy_options(simulate)
    simulate.add_argument("--estimator", choices=("chars4", "o200k", "cl100k"), default="chars4",
                          help="what the trigger counts with (the runtime uses chars4)")
    simulate.add_argument("--tokenizer", choices=("o200k", "cl100k"), default="o200k",
                          help="the true counts reported beside the estimate")
    simulate.add_argument("--json", action="store_true", help="one JSON document on stdout")
    simulate.add_argument("--sweep", action="store_true", help="one row per window x reserve")
    simulate.add_argument("--windows", help="comma-separated windows for --sweep (default: the case's)")
    simulate.add_argument("--reserves", default="4096,8192,16384,32768,65536",
                          help="comma-separated reserves for --sweep (default: %(default)s)")
    simulate.set_defaults(func=cmd_simulate)

    cases = commands.add_parser("cases", help="list and validate cases")
    cases_commands = cases.add_subparsers(dest="cases_command", required=True)
    listing = cases_commands.add_parser("list", help="the cases and their probes")
    listing.add_argument("--cases-dir", default="cases")
    listing.set_defaults(func=cmd_cases_list)
    validate = cases_commands.add_parser("validate", help="check every case file and session")
    validate.add_argument("cases", nargs="*", help="case ids or folders (default: all)")
    validate.add_argument("--cases-dir", default="cases")
    validate.set_defaults(func=cmd_cases_validate)

    # -- commands added by other modules go below this line --
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)  # one line, never wrapped
        return exc.exit_code
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
