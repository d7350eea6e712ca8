"""`compaction-harness cases`: list, validate and import cases; draft probes."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import harness.cli.options as options
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.cases.schema import Case


def add_parser(commands: argparse._SubParsersAction) -> None:
    cases = commands.add_parser("cases", help="list, validate and import cases; draft probes")
    cases_commands = cases.add_subparsers(dest="cases_command", required=True)
    listing = cases_commands.add_parser("list", help="the cases and their probes")
    options.add_pool(listing)
    options.add_cases_dir(listing)
    options.add_json(listing, "print the cases as one JSON document")
    listing.set_defaults(func=list_command)
    validate = cases_commands.add_parser("validate", help="check every case file and session")
    options.add_case_selection(validate, positional=True)
    options.add_pool(validate)
    options.add_json(validate, "print the counts and problems as one JSON document")
    validate.set_defaults(func=validate_command)
    importing = cases_commands.add_parser("import", help="turn an agent transcript into a case folder")
    importing.add_argument("file", metavar="FILE")
    importing.add_argument("--from", dest="source_format", default="auto", metavar="FORMAT",
                           help="auto (default), claude-code, claude-code-openai, codex, openai, anthropic, "
                                "mini-swe-agent, swe-agent, atif")
    importing.add_argument("--out", required=True, metavar="DIR", help="the case folder (its name is the case id)")
    importing.add_argument("--window", type=int, help="context window (default: the transcript's or the model's)")
    importing.add_argument("--model", help="the session model (default: the transcript's)")
    importing.set_defaults(func=import_command)
    exporting = cases_commands.add_parser("export", help="write a case's session in another format (ATIF)")
    exporting.add_argument("case", metavar="CASE", help="a case id of the library, or a case folder")
    exporting.add_argument("--to", dest="target_format", choices=("atif",), default="atif",
                           help="atif (default): an ATIF v1.8 trajectory (docs/atif.md)")
    exporting.add_argument("--out", required=True, metavar="FILE", help="the trajectory file to write")
    options.add_cases_dir(exporting)
    exporting.set_defaults(func=export_command)
    grading = cases_commands.add_parser("grade", help="grade one answer against one probe's matchers "
                                        "(exit 0 pass, 1 fail)")
    grading.add_argument("case", metavar="CASE", help="a case id or folder")
    grading.add_argument("probe", metavar="PROBE", help="the probe id")
    grading.add_argument("answer", metavar="ANSWER", help="the answer text to grade")
    options.add_cases_dir(grading)
    options.add_json(grading)
    grading.set_defaults(func=grade_command)
    drafting = cases_commands.add_parser("probe-draft", help="propose draft probes from a case's session")
    drafting.add_argument("case", metavar="CASE", help="a case folder")
    drafting.add_argument("--show-dropped", action="store_true",
                          help="also print the candidates that failed the drafter's checks, each with its reason")
    drafting.set_defaults(func=probe_draft_command)


def list_command(args: argparse.Namespace) -> int:
    from harness.render.cases import show_cases

    show_cases(options.selected_cases(args), args.cases_dir, as_json=args.json)
    return 0


def validate_command(args: argparse.Namespace) -> int:
    from harness.render.cases import show_problems

    cases = options.selected_cases(args)
    problems = [problem for case in cases for problem in case_problems(case)]
    show_problems(cases, problems, as_json=args.json)
    return 2 if problems else 0


def case_problems(case: Case) -> list[str]:
    """A case's problems, an error that stops its validation among them; each probe's own examples are
    graded by its matchers (a self-test that fails is a defect of the probe)."""
    from harness.cases import validate_case
    from harness.cases.thinking import thinking_only_problems
    from harness.probes import anchor_problems, example_problems
    from harness.run.preflight import case_policy_problem

    try:
        problems = validate_case(case)
    except HarnessError as exc:
        return [str(exc)]
    where = case.directory / "case.toml"
    drafts = [f"{where}: probe {probe.id}: draft = true: review its question and expected facts, then remove "
              f"`draft` (run skips it unless --include-drafts)" for probe in case.probes if probe.draft]
    policy = [p for p in [case_policy_problem(case)] if p]  # what `run` refuses, validate reports
    return problems + policy + drafts + thinking_only_problems(case) + [
        f"{where}: probe {probe.id}: {problem}" for probe in case.probes
        for problem in (*example_problems(probe), *anchor_problems(probe, case.session))]


def grade_command(args: argparse.Namespace) -> int:
    from harness.cases import discover
    from harness.probes import match
    from harness.render.grade import show_grade

    found = discover(args.cases_dir, [args.case])
    probe = next((p for p in found[0].probes if p.id == args.probe), None) if len(found) == 1 else None
    if probe is None:
        known = ", ".join(p.id for p in found[0].probes) if len(found) == 1 else ""
        raise HarnessError(f"no probe {args.probe!r} in case {args.case!r}" + (f" (its probes: {known})" if known else ""))
    result = match(args.answer, probe)
    show_grade(found[0].id, probe, args.answer, result, as_json=args.json)
    return 0 if result.passed else 1


def import_command(args: argparse.Namespace) -> int:
    from harness.importers import import_transcript, write_case
    from harness.render.cases import show_import

    session, report, meta = import_transcript(args.file, args.source_format, window=args.window, model=args.model)
    show_import(write_case(args.out, session, report, meta), report)
    return 0


def export_command(args: argparse.Namespace) -> int:
    import json

    from harness.atomic import write_atomic
    from harness.importers.atif import export_atif
    from harness.render.console import stderr

    from pathlib import Path

    from harness.cases import discover

    [case] = discover(args.cases_dir, [args.case])[:1] or [None]
    document = export_atif(case.session, model=case.model_name, session_id=case.id, window=case.context_window)
    write_atomic(Path(args.out), json.dumps(document, ensure_ascii=False, indent=1) + "\n")
    stderr().print(f"{case.id}: {len(document['steps'])} ATIF steps -> {args.out}", markup=False)
    return 0


def probe_draft_command(args: argparse.Namespace) -> int:
    from harness.cases.drafts import review_drafts
    from harness.render.cases import show_probe_drafts

    kept, dropped = review_drafts(args.case)
    show_probe_drafts(args.case, kept, dropped if args.show_dropped else None, len(dropped))
    return 0
