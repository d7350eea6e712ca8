"""`compaction-harness run`: evaluate compaction over the case library, one run per configuration."""

from __future__ import annotations

import argparse
import signal
import threading
from dataclasses import replace
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any

import harness.cli.options as options
from harness.errors import HarnessError
from harness.models.base import DEFAULT_REQUEST_TIMEOUT_S, DEFAULT_RETRIES, MAX_RETRIES
from harness.scripted.faults import DEFAULT_HOLD_S, SummaryFault, parse_summary_fault
from harness.validate import safe_name

if TYPE_CHECKING:
    from harness.run.config import RunConfig


def help_epilog() -> str:
    from harness.render.definitions import help_epilog as figures

    return figures()


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
    run.add_argument("--answerer-window", type=options.positive_int, metavar="N",
                     help="the answerer's window in tokens (default: its model's in the price table; the builtin "
                          "and custom servers: the case's); past it the ceiling is the oracle (docs/evaluation.md)")
    run.add_argument("--cache", choices=("on", "off"), default="on", help="prompt caching in summarizer calls")
    from harness.compaction.controls import CONTROLS  # the names only; cheap beside what run imports anyway
    run.add_argument("--control", action="append", metavar="CONTROL",
                     help="replace each summary by a reference control of the same size (repeatable: one "
                          "configuration each): " + ", ".join(CONTROLS))
    run.add_argument("--controls", action="store_true",
                     help="run the configuration under test and every control beside it, and compare them")
    options.add_record_options(run, record_default=None,
                               record_help="cassettes: none replays only (the CI mode), once records a missing "
                                           "cassette, new records what is missing, all re-records (default: new "
                                           "for @emulator and @URL specs, once for a provider, none for builtin)",
                               cassettes_default=None,
                               cassettes_help="cassette folder (default: goldens/cassettes with --record-mode, "
                                              "else the run folder's cassettes/)")
    run.add_argument("--record-errors", action="store_true",
                     help="while recording (--record-mode once, new or all), keep a provider's 4xx error replies in "
                          "the cassettes too, so a replay meets that failure again (always as the failure, never as "
                          "an answer); without it only well-formed successes are recorded, and 429/5xx never are")
    run.add_argument("--at-recorded-points", nargs="?", const="recorded-tail", choices=("recorded-tail", "policy-tail"),
                     help="compact exactly where the session's own compaction lines are, trigger off: keep the "
                          "recorded tail (default) or =policy-tail the policy's own; summary budget = the recorded "
                          "summary's tokens")
    run.add_argument("--runtime", action="append", metavar="NAME[@VERSION]",
                     help="drive a real agent runtime through its own compaction on each case (repeatable): pi, "
                          "codex, codex-remote, opencode, gemini-cli, claude-code, qwen-code, or an adapter .toml of "
                          "your own (docs/runtimes.md); @VERSION: another published release, side by side; graded "
                          "beside --policy's (default: default); install with `compaction-harness runtimes install "
                          "NAME[@VERSION]`")
    run.add_argument("--runtime-compaction", choices=("on", "off"), default="on",
                     help="off: the runtime's control, its own compaction switched off (what its own tool-output "
                          "cuts lose)")
    run.add_argument("--runtime-control", action="store_true",
                     help="also drive each case with the runtime's compaction off (a window it never fills) and grade "
                          "the same probes on what it sent there: the report splits the probes the runtime lost to "
                          "its own tool-output cuts from those lost to its compaction (the case's time doubles)")
    run.add_argument("--runtime-set", action="append", metavar="NAME=VALUE", default=[],
                     help="a runtime setting its adapter declares in [settings] (e.g. opencode's prune=true); "
                          "part of the configuration, so gate names a change")
    run.add_argument("--allow-version-drift", action="store_true",
                     help="drive a runtime whose installed version is not its adapter's pin")
    run.add_argument("--sandbox", choices=("on", "off"), default="on",
                     help="with --runtime: on (default) runs it under bubblewrap, loopback only, nothing of the machine "
                          "in view but the system; off runs it unconfined, with a warning (docs/runtimes.md)")
    run.add_argument("--summary-fault", metavar="KIND[:N]",
                     help="with --runtime: answer the runtime's first N summarization requests (default: every one) "
                          "with a fault: timeout, 500, empty or cut (docs/runtimes.md)")
    run.add_argument("--summary-fault-hold", type=float, default=DEFAULT_HOLD_S, metavar="S",
                     help=f"how long a timeout fault holds the connection before closing it (default {DEFAULT_HOLD_S:g})")
    run.add_argument("--canary", action="store_true",
                     help="with --runtime: plant a secret-shaped canary in a tool output and check that no summary "
                          "carries it")
    options.add_instruction(run, repeatable=True)
    run.add_argument("--sections", metavar="A,B,...",
                     help="the summary sections to ask for (default: Goal,Constraints,Progress,Decisions,Files,"
                          "Errors,Next steps)")
    options.add_prices(run)
    options.add_concurrency(run)
    run.add_argument("--jobs", type=options.positive_int, metavar="N",
                     help="worker processes for cases whose models run here (the builtin, cassette replays; default: "
                          "one per core, at most one per case; 1: in this process); models on the network use "
                          "--concurrency")
    run.add_argument("--estimate", action="store_true",
                     help="print the run's requests, tokens, dollars (cache on and off) and wall time per role and "
                          "condition, modelled, and exit without sending anything")
    run.add_argument("--max-usd", type=options.bounded_float(0.0, 1e9, open_low=True), metavar="USD",
                     help="stop before the first request (exit 2) when the estimate exceeds this many dollars")
    run.add_argument("--rpm", type=options.positive_int, metavar="N",
                     help="at most N requests per minute to each model (providers that send no rate-limit headers)")
    run.add_argument("--tpm", type=options.positive_int, metavar="N", help="at most N tokens per minute to each model")
    run.add_argument("--repeat", type=options.bounded_int(1, 100), default=1,
                     help="evaluate each case K times, 1 to 100 (live models; the deterministic builtin runs once)")
    run.add_argument("--request-timeout", type=options.positive_float, default=DEFAULT_REQUEST_TIMEOUT_S, metavar="S",
                     help="seconds one provider request may take before it is retried (default %(default)g)")
    run.add_argument("--retries", type=options.bounded_int(0, MAX_RETRIES), default=DEFAULT_RETRIES, metavar="N",
                     help="retries of a failed request (429, 5xx, 529, timeouts; back-off capped, honouring "
                          "retry-after; default %(default)s)")
    run.add_argument("--out", help="results folder (default: results/<run-id>)")
    run.add_argument("--label", help="a name for the run (part of the run id)")
    run.add_argument("--resume", action="store_true", help="continue the run in --out, skipping finished cases")
    run.add_argument("--overwrite", action="store_true",
                     help="replace the run --out holds: the files a run writes there are removed first (other files "
                          "stay); without it a folder holding a run is refused")
    run.add_argument("--shard", metavar="I/N", help="run a deterministic 1/N of the case x configuration matrix")
    run.add_argument("--include-drafts", action="store_true",
                     help="also run probes marked draft = true (unreviewed; skipped by default)")
    run.add_argument("--inspect-log", metavar="DIR", type=Path,
                     help="also write each configuration's run as an Inspect AI log (.eval) into DIR, to open in "
                          "`inspect view` (needs the inspect extra; docs/inspect.md)")
    options.add_json(run, "print the run's summary as one JSON document")
    run.epilog = help_epilog()
    run.formatter_class = argparse.RawDescriptionHelpFormatter
    run.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    if (args.resume or args.overwrite) and not args.out:
        raise HarnessError(f"{'--resume' if args.resume else '--overwrite'} needs --out DIR: the folder of the run "
                           f"to {'continue' if args.resume else 'replace'}")
    if args.resume and args.overwrite:
        raise HarnessError("--resume continues the run in --out and --overwrite replaces it: choose one")
    if args.label:
        safe_name(args.label, "--label")
    configs = run_configs(args)
    previous = _runtime_stops(args.sandbox == "on") if args.runtime else None
    try:
        return _command(args, configs)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _command(args: argparse.Namespace, configs: list[RunConfig]) -> int:
    from harness.render.console import stderr
    from harness.render.run import RunProgress, show_runs
    from harness.studies.compare import RunOptions, run_configurations

    for line in before_the_run(args, configs):
        stderr().print(line, markup=False)
    run_options = RunOptions(out=Path(args.out) if args.out else None, label=args.label, resume=args.resume,
                             overwrite=args.overwrite,
                             repeat=effective_repeat(configs, args.repeat), concurrency=args.concurrency,
                             shard=args.shard, jobs=args.jobs)
    if args.inspect_log is not None:  # before any request: an unwritable folder is a usage error, not a lost run
        from harness.results.inspect_log import check_writable

        check_writable(args.inspect_log)
    cases = options.selected_cases(args)
    if not args.include_drafts:
        from harness.cases.drafts import without_drafts

        cases, drafts = without_drafts(cases)
        if drafts:
            stderr().print(f"skipping {drafts} draft probe{'' if drafts == 1 else 's'} (draft = true; "
                           f"--include-drafts runs them)", markup=False)
    if price_first(args, cases, configs):
        return 0
    from harness.models.cassette import one_run

    with one_run():
        result = run_configurations(cases, configs, run_options, RunProgress(as_json=args.json))
    show_runs(result, as_json=args.json)
    if args.inspect_log is not None:
        write_inspect_logs(result.runs, cases, args.inspect_log)
    return 1 if result.failed else 0


def before_the_run(args: argparse.Namespace, configs: list[RunConfig]) -> list[str]:
    """What a reader should know before the run starts: an --instruction the summarizer cannot follow, and the
    default policy run beside a --runtime without being named."""
    lines = list(dict.fromkeys(w for w in (config.instruction_warning() for config in configs) if w))
    if args.runtime and not args.policy and not args.json:
        lines.append("note: each --runtime is graded beside --policy default, a run of its own, and the two are "
                     "compared (comparison.md); --policy NAME picks the policy beside it")
    return lines


def write_inspect_logs(runs, cases: list, directory: Path) -> None:
    from harness.render.console import stderr
    from harness.results.inspect_log import write

    for finished in runs:
        stderr().print(f"Inspect log: {write(finished.run, finished.folder.path, cases, directory)}", markup=False)


def price_first(args: argparse.Namespace, cases: list, configs: list[RunConfig]) -> bool:
    """The estimate, before any request: printed for --estimate (then the run stops: True), for --max-usd and
    at the top of every live run; over --max-usd the run stops here with a usage error."""
    from harness.render.console import stderr, stdout
    from harness.render.estimate import print_estimates
    from harness.run.config import plan_run
    from harness.run.estimate import estimate_run, over_budget, reaches_network

    configs = [config for config in configs if config.runtime is None]  # a runtime's requests are its own: not priced
    plans = [plan_run(config, keys=not args.estimate) for config in configs]
    if not (args.estimate or args.max_usd is not None or any(reaches_network(p) for p in plans)):
        return False
    estimates = [estimate_run(cases, plan, _label(config), args.repeat) for config, plan in zip(configs, plans)]
    documents = [e.to_json(args.concurrency, args.rpm, args.tpm) for e in estimates]
    if args.estimate and args.json:
        import json

        print(json.dumps(documents if len(documents) > 1 else documents[0], indent=2))
    else:
        print_estimates(documents, stderr() if args.json else stdout())
    if args.max_usd is not None and (reason := over_budget(estimates, args.max_usd)):
        raise HarnessError(reason)
    return bool(args.estimate)


def _label(config: RunConfig) -> str:
    parts = [config.policy, config.model] + ([f"summarizer {config.summarizer}"] if config.summarizer != "same" else [])
    return " / ".join(parts + [f"answerer {config.answerer_spec}"] + ([f"judge {config.judge}"] if config.judge else []))


def run_configs(args: argparse.Namespace) -> list[RunConfig]:
    """One configuration per combination of the repeatable --policy, --model and --summarizer."""
    from harness.run.config import RunConfig

    at_points = args.at_recorded_points is not None
    window_recorded = any(e.pair.replace(" ", "") == "context_window=recorded" for e in args.settings)
    if window_recorded and not args.runtime:
        raise HarnessError("--window recorded sets each case's window so a runtime's own trigger fires where the "
                           "recorded session compacted: add --runtime NAME (a policy compacts there with "
                           "--at-recorded-points)")
    entries = [e for e in args.settings if e.pair.replace(" ", "") != "context_window=recorded"]
    settings, budget = split_recorded_budget(entries, at_points)
    recorded: dict[str, Any] = {"at_recorded_points": at_points, "summary_tokens": budget,
                                "recorded_tail": (args.at_recorded_points or "recorded-tail").removesuffix("-tail")}
    configs = [RunConfig(policy=policy, model=model, summarizer=summarizer, answerer=args.answerer,
                         judge=args.judge, cache=args.cache == "on", settings=settings, prices=args.prices,
                         sections=parse_sections(args.sections), control=control,
                         request_timeout=args.request_timeout, retries=args.retries, record_errors=args.record_errors,
                         answerer_window=args.answerer_window, rpm=args.rpm, tpm=args.tpm,
                         instruction=instruction, instruction_file=instruction_file,
                         instruction_name=instruction_name, **recorded)
               for policy, model, summarizer, control, (instruction, instruction_file, instruction_name)
               in product(args.policy or ["default"], args.model or ["builtin"], args.summarizer or ["same"],
                          controls_of(args), instructions_of(args))]
    runtime_settings = tuple(_runtime_setting(pair) for pair in args.runtime_set)
    if args.runtime_control and (not args.runtime or args.runtime_compaction == "off"):
        raise HarnessError("--runtime-control drives each --runtime case again with its compaction off, beside the "
                           "run with it on: give --runtime, and leave out --runtime-compaction off")
    fault = _summary_fault(args)
    # a runtime uses its own prompt: one configuration per runtime and model, not per --instruction, and none kept
    configs += [replace(config, policy="recorded", runtime=runtime, runtime_compaction=args.runtime_compaction == "on",
                        instruction=None, instruction_file=None, instruction_name=None,
                        runtime_settings=runtime_settings, allow_version_drift=args.allow_version_drift, control=None,
                        runtime_sandbox=args.sandbox == "on", runtime_window_recorded=window_recorded,
                        runtime_fault=fault, runtime_canary=args.canary, runtime_control=args.runtime_control)
                for runtime in dict.fromkeys(args.runtime or ()) for config in configs if config.control is None
                and config.policy == (args.policy or ["default"])[0] and config.instruction == configs[0].instruction]
    recording = [with_recording(config, args.record_mode, args.cassettes) for config in configs]
    replaying = [config for config in recording if config.record_mode == "none"]
    if args.record_errors and replaying:  # a usage error before any work: the flag would do nothing
        raise HarnessError(f"--record-errors keeps error replies while recording, and configuration "
                           f"{_label(replaying[0])} only replays (record mode none): pass --record-mode once, new or "
                           f"all")
    return recording


def _runtime_stops(sandboxed: bool) -> Any:
    """A run driving runtimes: SIGTERM stops it as Ctrl-C does (its runtimes ended, their scratch folders removed,
    what finished kept); --sandbox off is said on the terminal. Returns SIGTERM's handler before (None: unset)."""
    from harness.render.console import stderr

    if not sandboxed:
        from harness.runtimes.sandbox import off_warning

        stderr().print(off_warning(), markup=False)
    if threading.current_thread() is not threading.main_thread():
        return None
    handler = signal.getsignal(signal.SIGINT)
    return signal.signal(signal.SIGTERM, handler if callable(handler) else signal.default_int_handler)


def _summary_fault(args: argparse.Namespace) -> SummaryFault | None:
    """--summary-fault parsed; it and --canary act on a runtime's calls, so without --runtime they are an error."""
    if (args.summary_fault or args.canary) and not args.runtime:
        raise HarnessError(f"{'--summary-fault' if args.summary_fault else '--canary'} acts on a runtime's own "
                           "summarization calls: add --runtime NAME")
    return parse_summary_fault(args.summary_fault, args.summary_fault_hold) if args.summary_fault else None


def _runtime_setting(pair: str) -> tuple[str, str]:
    name, sep, value = pair.partition("=")
    if not sep or not name.strip():
        raise HarnessError(f"--runtime-set {pair!r}: expected NAME=VALUE")
    return name.strip(), value.strip()


def with_recording(config: RunConfig, record_mode: str | None, cassettes: str | None) -> RunConfig:
    """The configuration with its record mode and cassette folder, defaulted to fit its models."""
    from dataclasses import replace

    from harness.run.config import record_defaults

    mode, folder = record_defaults(config.model_specs, record_mode, cassettes)
    return replace(config, record_mode=mode, cassettes=folder)


def effective_repeat(configs: list[RunConfig], repeat: int) -> int:
    """--repeat K samples a live model K times; the builtin model (also behind the emulator) answers the same
    every time, so its repeats would only multiply n and narrow the intervals. Alone it runs once, with a
    note; beside a live configuration, whose repeats mean something, it is refused."""
    from harness.render.console import stderr
    from harness.studies.compare import text_source

    fixed = [c for c in configs if all(text_source(spec) == "builtin" for spec in c.model_specs)]
    if repeat == 1 or not fixed:
        return repeat
    if len(fixed) < len(configs):
        raise HarnessError(f"--repeat {repeat}: configuration {fixed[0].policy} / {fixed[0].model} / "
                           f"{fixed[0].summarizer_spec} is the deterministic builtin model, whose repeats are "
                           f"identical; run it without --repeat, apart from the live configurations")
    stderr().print(f"note: --repeat {repeat} ignored: the builtin model is deterministic, so every repeat would "
                   f"be identical and only narrow the intervals; each case runs once", markup=False)
    return 1


def instructions_of(args: argparse.Namespace) -> list[tuple[str | None, str | None, str | None]]:
    """(text, file, name) per --instruction; one (None, None, None) without: the case's [summary] or the shipped
    one. The name the reports show is the file's stem (its path where two stems are alike), or --label when one
    instruction is given."""
    if not args.instruction:
        return [(None, None, None)]
    stems = [Path(value).stem for value in args.instruction]
    names = [str(Path(value).with_suffix("")) if stems.count(stem) > 1 else stem
             for value, stem in zip(args.instruction, stems)]
    if args.label and len(args.instruction) == 1:
        names = [args.label]
    return [(*options.instruction_text(value), name) for value, name in zip(args.instruction, names)]


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
