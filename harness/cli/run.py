"""`compaction-harness run`: evaluate compaction over the case library, one run per configuration."""

from __future__ import annotations

import argparse
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any

import harness.cli.options as options
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.run.config import RunConfig


def add_parser(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser("run", help="evaluate compaction over the case library (default: all, builtin)")
    options.add_case_selection(run)
    run.add_argument("--pool", action="append", metavar="POOL",
                     help="only the cases of this pool (repeatable): desktop, long, autonomous, edge, real")
    options.add_policy_options(run, summary_tokens_note="; with --at-recorded-points: the budget instead of "
                                                        "the recorded summary's size")
    options.add_model(run, "--model", f"the session model (repeatable; default builtin): {options.MODEL_SPECS}",
                      repeatable=True)
    options.add_model(run, "--summarizer", "`same` (the session model, default) or a model spec (repeatable)",
                      repeatable=True)
    options.add_model(run, "--answerer", "the model answering probes (default: the session model)")
    options.add_model(run, "--judge", "a judge model spec for 0-5 grades (optional; never a model under test)")
    run.add_argument("--cache", choices=("on", "off"), default="on", help="prompt caching in summarizer calls")
    run.add_argument("--control", action="append", metavar="CONTROL",
                     help="replace each summary by a reference control of the same size: empty, keyword-bag, "
                          "head-first or head-last (repeatable: one configuration each)")
    run.add_argument("--controls", action="store_true",
                     help="run the configuration under test and every control beside it, and compare them")
    options.add_record_options(run, record_default="none",
                               record_help="cassettes: none replays only (default), once, new, all re-records",
                               cassettes_default="goldens/cassettes", cassettes_help="cassette folder (default: "
                                                                                     "%(default)s)")
    run.add_argument("--at-recorded-points", nargs="?", const="recorded-tail", choices=("recorded-tail", "policy-tail"),
                     help="compact exactly where the session's own compaction lines are, trigger off: keep the "
                          "recorded tail (default) or =policy-tail the policy's own; summary budget = the recorded "
                          "summary's tokens")
    run.add_argument("--sections", metavar="A,B,...",
                     help="the summary sections to ask for (default: Goal,Constraints,Progress,Decisions,Files,"
                          "Errors,Next steps)")
    options.add_prices(run)
    options.add_concurrency(run)
    run.add_argument("--repeat", type=options.positive_int, default=1, help="evaluate each case K times (live runs)")
    run.add_argument("--out", help="results folder (default: results/<run-id>)")
    run.add_argument("--label", help="a name for the run (part of the run id)")
    run.add_argument("--resume", action="store_true", help="continue the run in --out, skipping finished cases")
    run.add_argument("--shard", metavar="I/N", help="run a deterministic 1/N of the case x configuration matrix")
    options.add_json(run, "print the run's summary as one JSON document")
    run.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.cases import discover
    from harness.render.run import RunProgress, show_runs
    from harness.studies.compare import RunOptions, run_configurations

    if args.resume and not args.out:
        raise HarnessError("--resume needs --out DIR: the folder of the run to continue")
    run_options = RunOptions(out=Path(args.out) if args.out else None, label=args.label, resume=args.resume,
                             repeat=args.repeat, concurrency=args.concurrency, shard=args.shard)
    cases = discover(args.cases_dir, args.cases or None)
    if args.pool:
        cases = [case for case in cases if case.pool in args.pool]
        if not cases:
            raise HarnessError(f"no case of pool {', '.join(args.pool)} in the selection")
    result = run_configurations(cases, run_configs(args), run_options, RunProgress(as_json=args.json))
    show_runs(result, as_json=args.json)
    return 1 if result.failed else 0


def run_configs(args: argparse.Namespace) -> list[RunConfig]:
    """One configuration per combination of the repeatable --policy, --model and --summarizer."""
    from harness.run.config import RunConfig

    at_points = args.at_recorded_points is not None
    settings, budget = split_recorded_budget(args.settings, at_points)
    recorded: dict[str, Any] = {"at_recorded_points": at_points, "summary_tokens": budget,
                                "recorded_tail": (args.at_recorded_points or "recorded-tail").removesuffix("-tail")}
    return [RunConfig(policy=policy, model=model, summarizer=summarizer, answerer=args.answerer, judge=args.judge,
                      cache=args.cache == "on", settings=settings, record_mode=args.record_mode,
                      cassettes=args.cassettes, prices=args.prices, sections=parse_sections(args.sections),
                      control=control, **recorded)
            for policy, model, summarizer, control in product(args.policy or ["default"], args.model or ["builtin"],
                                                              args.summarizer or ["same"], controls_of(args))]


def controls_of(args: argparse.Namespace) -> list[str | None]:
    """None is the summarizer under test; `--controls` puts every reference control beside it."""
    if args.controls:
        from harness.compaction.controls import CONTROLS

        return [None, *CONTROLS]
    return list(args.control) if args.control else [None]


def split_recorded_budget(entries: list[options.SettingArg],
                          at_points: bool) -> tuple[tuple[tuple[str, Any], ...], int | None]:
    """The policy settings, and the summary budget at recorded points: there `--summary-tokens N` replaces
    the recorded summary's size instead of setting summary_tokens (`--set summary_tokens=N` still does)."""
    budget_flags = [e for e in entries if e.flag == "--summary-tokens"]
    for entry in budget_flags:  # checked here: a run would only fail case by case
        value = dict(options.parse_settings([entry]))["summary_tokens"]
        if value <= 0:
            raise HarnessError(f"--summary-tokens must be positive, not {value}")
    if not at_points:
        return options.parse_settings(entries), None
    settings = options.parse_settings([e for e in entries if e.flag != "--summary-tokens"])
    budget = dict(options.parse_settings(budget_flags[-1:])).get("summary_tokens")
    return settings, budget


def parse_sections(text: str | None) -> tuple[str, ...]:
    from harness.compaction.summarizer import SECTIONS

    if text is None:
        return SECTIONS
    sections = tuple(s.strip() for s in text.split(",") if s.strip())
    if not sections:
        raise HarnessError("--sections needs at least one section name")
    return sections
