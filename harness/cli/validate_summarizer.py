"""`compaction-harness validate-summarizer`: the same model against a cheaper summarizer, with a verdict."""

from __future__ import annotations

import argparse

import harness.cli.options as options


def add_parser(commands: argparse._SubParsersAction) -> None:
    verdict = commands.add_parser("validate-summarizer", help="quality and cost: the same model against a cheaper "
                                                              "summarizer, with a one-sentence verdict")
    options.add_model(verdict, "--model", "the session model (builtin, PROVIDER:MODEL[@emulator])", required=True)
    options.add_model(verdict, "--alt-model", "the cheaper summarizer to weigh against it, or control:NAME (empty, "
                                               "keyword-bag, head-first, head-last): the session model's summarizer "
                                               "under that reference control, a known difference", required=True)
    options.add_case_selection(verdict)
    options.add_pool(verdict)
    verdict.add_argument("--out", default="results/validate-summarizer", help="folder (default: %(default)s)")
    verdict.add_argument("--resume", action="store_true", help="continue both runs in --out, skipping finished cases")
    options.add_record_options(verdict, record_default=None,
                               record_help="cassettes (default: new for API and emulator specs: record what is "
                                           "missing)",
                               cassettes_default=None, cassettes_help="cassette folder (default: OUT/cassettes)")
    options.add_instruction(verdict, repeatable=False)
    options.add_prices(verdict)
    options.add_concurrency(verdict)
    options.add_json(verdict)
    verdict.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.render.verdict import VerdictProgress, show_verdict
    from harness.studies.verdict import validate_summarizer

    validation = validate_summarizer(options.selected_cases(args), args.model, args.alt_model,
                                     args.out, record_mode=args.record_mode, cassettes=args.cassettes,
                                     prices=args.prices, concurrency=args.concurrency, resume=args.resume,
                                     observer=VerdictProgress(as_json=args.json),
                                     instruction=options.instruction_text(args.instruction) if args.instruction
                                     else None)
    show_verdict(validation, as_json=args.json)
    return 0
