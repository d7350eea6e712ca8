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
    parser.add_argument("--policy", action="append",
                        help="policy name (repeatable: one table or sweep per policy; default: default)")
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
    from harness.studies.simulate import Simulator, config_for, load_target, parse_int_list

    target = load_target(args.target)
    extra = {}
    if args.summarizer:
        from harness.compaction.summarizer import model_summarizer

        extra["summarizer"] = model_summarizer(args.summarizer)
    simulator = Simulator(target, estimator=args.estimator, tokenizer=args.tokenizer, **extra)
    config = config_for(target, policy_settings(args))
    policies = args.policy or ["default"]
    if args.sweep:
        windows = parse_int_list(args.windows, "--windows") if args.windows else [config.context_window]
        reserves = parse_int_list(args.reserves, "--reserves")
        rows = [row for policy in policies for row in simulator.sweep(policy, config, windows, reserves)]
        if args.plot:
            from harness.render.plots import sweep_plot

            err.print(f"plot: {sweep_plot(rows, args.plot, f'reserve sweep: {target.name}')}")
        if args.json:
            print(json.dumps({"target": target.name, "sweep": rows}, indent=2))
        else:
            render_sweep(target.name, rows)
        return 0
    results = [simulator.run(policy, config) for policy in policies]
    if args.json:
        documents = [r.to_json() for r in results]
        print(json.dumps(documents[0] if len(documents) == 1 else documents, indent=2))
    else:
        for result in results:
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
    from harness.compaction import RISK_KINDS

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
    from harness.cases.schema import discover

    table = Table(title=f"cases in {args.cases_dir}")
    for column in ("id", "pool", "window", "messages", "probes", "title"):
        table.add_column(column)
    for case in discover(args.cases_dir):
        table.add_row(case.id, case.pool, str(case.context_window), str(len(case.session.messages)),
                      str(len(case.probes)), case.title)
    out.print(table)
    return 0


def cmd_cases_validate(args: argparse.Namespace) -> int:
    from harness.cases.schema import discover, validate_case

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


def cmd_cases_import(args: argparse.Namespace) -> int:
    from harness.importers import FORMATS, import_transcript, write_case

    session, report, meta = import_transcript(args.file, args.source_format, window=args.window, model=args.model)
    toml_path = write_case(args.out, session, report, meta)
    if report.detected:
        out.print(f"--from auto chose {report.format} ({FORMATS[report.format][0]})")
    for line in report.lines():
        print(line)  # as is: report lines hold brackets ("[no result recorded]") and must not wrap
    out.print(f"case written: {toml_path} and {toml_path.parent / 'session.jsonl'}; add probes to case.toml "
              f"(`compaction-harness cases probe-draft {toml_path.parent}` proposes drafts)", markup=False)
    return 0


def cmd_cases_probe_draft(args: argparse.Namespace) -> int:
    from harness.importers import draft_probes, render_probes

    probes = draft_probes(args.case)
    print(f"# {len(probes)} DRAFT probes for {args.case}: review each (question, expected facts, planted_at), "
          f"then remove `draft = true` and append it to case.toml")
    if probes:
        print(render_probes(probes), end="")
    return 0


# ---------------------------------------------------------------------------------------------
# run

SETTING_ALIASES = {"window": "context_window", "reserve": "reserve_tokens", "tail_cap": "tail_cap_tokens",
                   "max_output": "max_output_tokens"}


def parse_settings(pairs: list[str] | None) -> tuple[tuple[str, Any], ...]:
    from dataclasses import fields

    from harness.policy import PolicyConfig

    known = {f.name for f in fields(PolicyConfig)}
    settings = []
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        key = SETTING_ALIASES.get(key.strip(), key.strip())
        if not sep or key not in known:
            raise HarnessError(f"--set {pair!r}: expected KEY=VALUE with KEY one of {', '.join(sorted(known))}")
        if key == "mode":
            settings.append((key, value))
        elif key == "enabled":
            settings.append((key, value.lower() in ("1", "true", "yes", "on")))
        else:
            try:
                settings.append((key, int(value.replace("_", ""))))
            except ValueError:
                raise HarnessError(f"--set {pair!r}: {key} takes an integer") from None
    return tuple(settings)


def parse_sections(text: str | None) -> tuple[str, ...]:
    from harness.compaction.summarizer import SECTIONS

    if text is None:
        return SECTIONS
    sections = tuple(s.strip() for s in text.split(",") if s.strip())
    if not sections:
        raise HarnessError("--sections needs at least one section name")
    return sections


def run_configs(args: argparse.Namespace) -> list:
    """One configuration per combination of the repeatable --policy, --model and --summarizer."""
    from itertools import product

    from harness.run.matrix import RunConfig

    settings = parse_settings(args.set)
    at_points = args.at_recorded_points is not None
    if args.summary_tokens is not None and args.summary_tokens <= 0:
        raise HarnessError(f"--summary-tokens must be positive, not {args.summary_tokens}")
    if args.summary_tokens is not None and not at_points:  # the summarizer's budget, as --set summary_tokens=N
        settings = (*settings, ("summary_tokens", args.summary_tokens))
    recorded = {"at_recorded_points": at_points, "recorded_tail": (args.at_recorded_points or "recorded-tail").removesuffix("-tail"),
                "summary_tokens": args.summary_tokens if at_points else None}
    return [RunConfig(policy=policy, model=model, summarizer=summarizer, answerer=args.answerer, judge=args.judge,
                      cache=args.cache == "on", settings=settings, record_mode=args.record_mode,
                      cassettes=args.cassettes, prices=args.prices, sections=parse_sections(args.sections),
                      **recorded)
            for policy, model, summarizer in product(args.policy or ["default"], args.model or ["builtin"],
                                                     args.summarizer or ["same"])]


def cmd_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from harness.cases.schema import discover
    from harness.render.run import render_summary, write_markdown
    from harness.results.folder import RunFolder
    from harness.run.matrix import default_run_id, matrix, parse_shard, results_path, run_cases

    if args.resume and not args.out:
        raise HarnessError("--resume needs --out DIR: the folder of the run to continue")
    shard = parse_shard(args.shard)
    cases = discover(args.cases_dir, args.cases or None)
    configs = run_configs(args)
    for config in configs:
        config.validate()
    several = len(configs) > 1
    base = Path(args.out) if args.out else None
    runs, failed = [], False
    for config, chosen in matrix(cases, configs, shard).items():
        label = args.label if not several else f"{args.label + '-' if args.label else ''}{config.policy}-" \
                f"{config.model}-{config.summarizer}".replace(":", "_").replace("/", "_").replace("@", "_")
        run_id = default_run_id(config, label)
        folder = RunFolder(base / label if several and base else results_path(str(base) if base else None, run_id))
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=err, transient=True, disable=args.json)
        with progress:
            task = progress.add_task("cases", total=len(chosen) * args.repeat)
            run = run_cases(chosen, config, folder, run_id=run_id, label=label, resume=args.resume,
                            repeat=args.repeat, concurrency=args.concurrency, shard=args.shard,
                            on_case=lambda record: progress.update(task, advance=1, description=record["case"]))
        write_markdown(run, folder.path / "report.md")
        runs.append((folder, run))
        failed = failed or bool(run["aggregates"]["errors"])
        if not args.json:
            render_summary(run, out)
            out.print(f"results: {folder.path}/run.json, report: {folder.path}/report.md\n")
    comparison = None
    if several:
        comparison = write_comparison([run for _, run in runs], base or Path("results"))
        if not args.json:
            render_comparison(comparison)
    if args.json:
        documents = [{"run": str(f.path), "configuration": r["configuration"], "aggregates": r["aggregates"]}
                     for f, r in runs]
        print(json.dumps({"runs": documents, "comparison": comparison} if several else documents[0], indent=2))
    return 1 if failed else 0


def write_comparison(runs: list[dict], folder) -> dict:
    from harness.studies.compare import comparison, markdown
    from harness.results.folder import write_json

    from harness.render.run import markdown_compaction_points

    result = comparison(runs)
    write_json(folder / "comparison.json", result)
    points = markdown_compaction_points(runs, "###")  # recorded summaries beside ours, per compaction point
    (folder / "comparison.md").write_text(markdown(result) + "\n".join(["", *points]), encoding="utf-8")
    return result


def render_comparison(result: dict) -> None:
    from harness.studies.compare import table_rows

    table = Table(title=f"comparison ({result['grade']}, compacted)")
    table.add_column("")
    for run in result["runs"]:
        table.add_column(run["label"], justify="right")
    for title, cell in table_rows(result):
        table.add_row(title, *(cell(r) for r in result["runs"]))
    out.print(table)
    pairs = Table(title="pairwise on shared valid probes")
    for column in ("a", "b", "probes", "only a", "only b", "b - a [95%]", "McNemar p"):
        pairs.add_column(column)
    for p in result["pairs"]:
        pairs.add_row(p["a"], p["b"], str(p["shared_probes"]), str(p["only_a"]), str(p["only_b"]),
                      f"{p['difference']:+.3f} [{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}]", f"{p['p_value']:.4f}")
    out.print(pairs)


def cmd_compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from harness.studies.compare import comparison, markdown
    from harness.results.folder import read_run

    from harness.render.run import markdown_compaction_points

    runs = [read_run(path) for path in args.runs]
    result = comparison(runs)
    points = markdown_compaction_points(runs, "###")  # recorded summaries beside ours, per compaction point
    if args.markdown:
        Path(args.markdown).write_text(markdown(result) + "\n".join(["", *points]), encoding="utf-8")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        render_comparison(result)
        for line in points:
            out.print(line, markup=False)
    return 0


# ---------------------------------------------------------------------------------------------
# gate and merge


def parse_thresholds(args: argparse.Namespace):
    from harness.studies.gate import Thresholds

    overall, per_kind = None, {}
    for value in args.min_pass_rate or []:
        kind, sep, number = value.rpartition("=")
        try:
            rate = float(number)
        except ValueError:
            raise HarnessError(f"--min-pass-rate {value!r}: expected a rate like 0.8 or KIND=0.8") from None
        if sep:
            per_kind[kind] = rate
        else:
            overall = rate
    return Thresholds(min_pass_rate=overall, max_drop=args.max_drop, per_kind_min=per_kind,
                      min_effect=args.min_effect, alpha=args.alpha)


def cmd_gate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from harness.studies.gate import gate, junit_xml, markdown, read_baseline, update_baseline
    from harness.results.folder import read_run

    run = read_run(args.run)
    if args.update_baseline:
        baseline = update_baseline(run, args.baseline)
        out.print(f"baseline written: {args.baseline} ({len(baseline['probes'])} probes, grade {baseline['grade']})")
        return 0
    verdict = gate(run, read_baseline(args.baseline), parse_thresholds(args))
    if args.junit:
        Path(args.junit).write_text(junit_xml(verdict, run["run_id"]), encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(markdown(verdict, run["run_id"], args.baseline), encoding="utf-8")
    render_gate(verdict)
    return verdict.exit_code


def render_gate(verdict) -> None:
    s = verdict.stats
    table = Table(title=f"gate ({'deterministic' if verdict.deterministic else 'live'}, grade {verdict.grade})")
    for column in ("probe", "kind", "baseline", "now", "change"):
        table.add_column(column)
    for key in verdict.regressions:
        row = verdict.rows[key]
        table.add_row(key, row["kind"], "pass", "fail", "[red]regression[/]")
    for key in verdict.improvements:
        row = verdict.rows[key]
        table.add_row(key, row["kind"], "fail", "pass", "[green]improvement[/]")
    if verdict.regressions or verdict.improvements:
        out.print(table)
    rate = (lambda v: "-" if v is None else f"{100 * v:.1f}%")
    out.print(f"{s['pairs']} paired probes: {rate(s['baseline_rate'])} -> {rate(s['now_rate'])}, "
              f"{len(verdict.regressions)} lost, {len(verdict.improvements)} gained, McNemar p={s['p_value']:.4f}")
    for failure in verdict.failures:
        out.print(f"[red]threshold[/]: {failure}")
    out.print("[red]FAIL[/]" if verdict.exit_code else "[green]PASS[/]")


def cmd_merge(args: argparse.Namespace) -> int:
    from harness.results.aggregate import aggregate
    from harness.results.folder import merge_runs

    run = merge_runs(args.runs, args.out, aggregate)
    out.print(f"merged {len(args.runs)} runs into {args.out}: {len(run['cases'])} cases")
    return 0


# ---------------------------------------------------------------------------------------------
# cost and validate-summarizer (harness.studies.costs, harness.studies.verdict)


def cmd_cost(args: argparse.Namespace) -> int:
    from pathlib import Path

    from harness.cases.schema import discover
    from harness.studies.costs import markdown, study

    result = study(discover(args.cases_dir, args.cases or None), args.model, args.alt_model, args.prices)
    plot = None
    if args.plot:
        from harness.render.plots import cost_plot

        plot = cost_plot(result, args.plot)
    if args.markdown:
        link = None
        if plot:
            from harness.render.plots import markdown_image

            link = markdown_image("", plot, Path(args.markdown).parent)[4:-1]
        Path(args.markdown).write_text(markdown(result, link), encoding="utf-8")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        render_cost(result)
    return 0


def render_cost(result: dict) -> None:
    from harness.studies.costs import break_even_sentence, shape_title

    out.print(f"{len(result['cases'])} cases, {result['sessions_with_compactions']} with compactions; "
              f"{result['note']}")
    for summary in result["models"]:
        table = Table(title=f"{summary['model']}: {summary['compactions']} compactions, cache hit "
                            f"{100 * (summary['cache_hit_rate'] or 0):.1f}%")
        for column in ("request shape", "model", "uncached", "cache read", "cache write", "output",
                       "$ / compaction", "$ / session", "source"):
            table.add_column(column, justify="left" if column in ("request shape", "model", "source") else "right")
        for shape, t in summary["shapes"].items():
            table.add_row(shape_title(shape), t["model"], str(t["uncached_tokens"]), str(t["cached_input_tokens"]),
                          str(t["cache_write_tokens"]), str(t["output_tokens"]), f"${t['per_compaction_usd'] or 0:.5f}",
                          f"${t['per_session_usd'] or 0:.5f}", t["source"])
        out.print(table)
        for alt, a in summary["alternatives"].items():
            out.print(f"  {alt}: {break_even_sentence(summary['model'], alt, a)}")


def cmd_validate_summarizer(args: argparse.Namespace) -> int:
    from harness.cases.schema import discover
    from harness.studies.verdict import validate_summarizer

    result = validate_summarizer(discover(args.cases_dir, args.cases or None), args.model, args.alt_model, args.out,
                                 record_mode=args.record_mode, cassettes=args.cassettes, prices=args.prices,
                                 concurrency=args.concurrency)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    q = result["quality"]
    out.print(f"{q['grade']} pass rate: same {100 * (q['same_rate'] or 0):.1f}%, {args.alt_model} "
              f"{100 * (q['alt_rate'] or 0):.1f}%; difference {100 * q['difference']:+.1f} points "
              f"[{100 * q['ci95'][0]:+.1f}, {100 * q['ci95'][1]:+.1f}], McNemar p={q['p_value']:.4g}")
    out.print(f"[bold]{result['verdict']}[/]")
    out.print(f"written: {args.out}/verdict.md, verdict.json, {', '.join(result['plots'].values()) or 'no plots'}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from harness.models.emulator import serve as serve_emulator

    err.print(f"emulator on http://{args.host}:{args.port} (OpenAI base_url .../v1, Anthropic base_url as is); "
              "Ctrl-C stops it")
    try:
        serve_emulator(args.port, args.host)
    except OSError as exc:
        raise HarnessError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0


# ---------------------------------------------------------------------------------------------


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, not {text!r}")
    return value


def port_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, not {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compaction-harness",
        description="Evaluate automatic context compaction in LLM agents: what the agent still knows after "
                    "compaction, and what the compaction costs.")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="evaluate compaction over the case library (default: all, builtin)")
    run.add_argument("--cases", action="append", help="case id, folder or glob (repeatable; default: all)")
    run.add_argument("--cases-dir", default="cases")
    run.add_argument("--policy", action="append", help="policy name (repeatable; default: default)")
    run.add_argument("--model", action="append", help="the session model (repeatable; default builtin): builtin, "
                                                       "openai:MODEL, anthropic:MODEL, openai:MODEL@BASE_URL, "
                                                       "PROVIDER:MODEL@emulator")
    run.add_argument("--summarizer", action="append",
                     help="`same` (the session model, default) or a model spec (repeatable)")
    run.add_argument("--answerer", help="the model answering probes (default: the session model)")
    run.add_argument("--judge", help="a judge model spec for 0-5 grades (optional; never a model under test)")
    run.add_argument("--cache", choices=("on", "off"), default="on", help="prompt caching in summarizer calls")
    run.add_argument("--set", action="append", metavar="KEY=VALUE",
                     help="a policy setting: mode, reserve_tokens, tail_turns, tail_cap_tokens, window, ...")
    run.add_argument("--record-mode", choices=("none", "once", "new", "all"), default="none",
                     help="cassettes: none replays only (default), once, new, all re-records")
    run.add_argument("--cassettes", default="goldens/cassettes", help="cassette folder (default: %(default)s)")
    run.add_argument("--at-recorded-points", nargs="?", const="recorded-tail", choices=("recorded-tail", "policy-tail"),
                     help="compact exactly where the session's own compaction lines are, trigger off: keep the "
                          "recorded tail (default) or =policy-tail the policy's own; summary budget = the recorded "
                          "summary's tokens")
    run.add_argument("--summary-tokens", type=int, metavar="N",
                     help="summarizer output budget (with --at-recorded-points: instead of the recorded size)")
    run.add_argument("--sections", metavar="A,B,...",
                     help="the summary sections to ask for (default: Goal,Constraints,Progress,Decisions,Files,"
                          "Errors,Next steps)")
    run.add_argument("--prices", metavar="FILE", help="a TOML price file over the shipped table")
    run.add_argument("--concurrency", type=positive_int, default=1, help="cases in flight at once (API models)")
    run.add_argument("--repeat", type=positive_int, default=1, help="evaluate each case K times (live runs)")
    run.add_argument("--out", help="results folder (default: results/<run-id>)")
    run.add_argument("--label", help="a name for the run (part of the run id)")
    run.add_argument("--resume", action="store_true", help="continue the run in --out, skipping finished cases")
    run.add_argument("--shard", metavar="I/N", help="run a deterministic 1/N of the case x configuration matrix")
    run.add_argument("--json", action="store_true", help="print the run's summary as one JSON document")
    run.set_defaults(func=cmd_run)

    compare = commands.add_parser("compare", help="configurations side by side, with pairwise significance")
    compare.add_argument("runs", nargs="+", metavar="RUN")
    compare.add_argument("--markdown", metavar="FILE")
    compare.add_argument("--json", action="store_true")
    compare.set_defaults(func=cmd_compare)

    gate = commands.add_parser("gate", help="compare a run with a baseline: exit 0 pass, 1 regression, 2 error")
    gate.add_argument("run", metavar="RUN")
    gate.add_argument("--baseline", required=True, metavar="FILE")
    gate.add_argument("--update-baseline", action="store_true", help="write the baseline from this run")
    gate.add_argument("--min-pass-rate", action="append", metavar="[KIND=]RATE",
                      help="fail under this compacted pass rate, overall or for one probe kind (repeatable)")
    gate.add_argument("--max-drop", type=float, metavar="RATE", help="fail when the pass rate drops more than this")
    gate.add_argument("--min-effect", type=float, default=0.05, help="live runs: smallest drop that fails (%(default)s)")
    gate.add_argument("--alpha", type=float, default=0.05, help="live runs: significance level (%(default)s)")
    gate.add_argument("--junit", metavar="FILE", help="JUnit XML, one test case per probe")
    gate.add_argument("--markdown", metavar="FILE", help="a summary for a CI job page")
    gate.set_defaults(func=cmd_gate)

    merge = commands.add_parser("merge", help="join shard results into one run")
    merge.add_argument("runs", nargs="+", metavar="RUN")
    merge.add_argument("--out", required=True)
    merge.set_defaults(func=cmd_merge)

    simulate = commands.add_parser("simulate", help="replay one session through a policy without a model")
    simulate.add_argument("target", metavar="SESSION|CASE_DIR")
    add_policy_options(simulate)
    simulate.add_argument("--estimator", choices=("chars4", "o200k", "cl100k"), default="chars4",
                          help="what the trigger counts with (the runtime uses chars4)")
    simulate.add_argument("--tokenizer", choices=("o200k", "cl100k"), default="o200k",
                          help="the true counts reported beside the estimate")
    simulate.add_argument("--summarizer", metavar="SPEC",
                          help="summarize with a model (builtin, openai:MODEL, ...); default: a placeholder")
    simulate.add_argument("--json", action="store_true", help="one JSON document on stdout")
    simulate.add_argument("--sweep", action="store_true", help="one row per window x reserve")
    simulate.add_argument("--windows", help="comma-separated windows for --sweep (default: the case's)")
    simulate.add_argument("--reserves", default="4096,8192,16384,32768,65536",
                          help="comma-separated reserves for --sweep (default: %(default)s)")
    simulate.add_argument("--plot", metavar="FILE.png", help="with --sweep: compactions and risks against reserve")
    simulate.set_defaults(func=cmd_simulate)

    cases = commands.add_parser("cases", help="list, validate and import cases; draft probes")
    cases_commands = cases.add_subparsers(dest="cases_command", required=True)
    listing = cases_commands.add_parser("list", help="the cases and their probes")
    listing.add_argument("--cases-dir", default="cases")
    listing.set_defaults(func=cmd_cases_list)
    validate = cases_commands.add_parser("validate", help="check every case file and session")
    validate.add_argument("cases", nargs="*", help="case ids or folders (default: all)")
    validate.add_argument("--cases-dir", default="cases")
    validate.set_defaults(func=cmd_cases_validate)
    importing = cases_commands.add_parser("import", help="turn an agent transcript into a case folder")
    importing.add_argument("file", metavar="FILE")
    importing.add_argument("--from", dest="source_format", default="auto", metavar="FORMAT",
                           help="auto (default), claude-code, claude-code-openai, codex, openai, anthropic, "
                                "mini-swe-agent, swe-agent")
    importing.add_argument("--out", required=True, metavar="DIR", help="the case folder (its name is the case id)")
    importing.add_argument("--window", type=int, help="context window (default: the transcript's or the model's)")
    importing.add_argument("--model", help="the session model (default: the transcript's)")
    importing.set_defaults(func=cmd_cases_import)
    drafting = cases_commands.add_parser("probe-draft", help="propose draft probes from a case's session")
    drafting.add_argument("case", metavar="CASE", help="a case folder")
    drafting.set_defaults(func=cmd_cases_probe_draft)

    cost = commands.add_parser("cost", help="the summarizer call's cost in four request shapes per compaction")
    cost.add_argument("--model", action="append", help="the session model, priced (repeatable; default: "
                                                       "anthropic:claude-sonnet-4-6 and openai:gpt-5)")
    cost.add_argument("--alt-model", action="append", help="a cheaper summarizer (repeatable; default: "
                                                           "claude-haiku-4-5 / gpt-5-mini by provider)")
    cost.add_argument("--cases", action="append", help="case id, folder or glob (repeatable; default: all)")
    cost.add_argument("--cases-dir", default="cases")
    cost.add_argument("--prices", metavar="FILE", help="a TOML price file over the shipped table")
    cost.add_argument("--markdown", metavar="FILE", help="write the tables as markdown")
    cost.add_argument("--plot", metavar="FILE.png", help="cost per compaction by request shape")
    cost.add_argument("--json", action="store_true", help="one JSON document on stdout")
    cost.set_defaults(func=cmd_cost)

    verdict = commands.add_parser("validate-summarizer", help="quality and cost: the same model against a cheaper "
                                                              "summarizer, with a one-sentence verdict")
    verdict.add_argument("--model", required=True, help="the session model (builtin, PROVIDER:MODEL[@emulator])")
    verdict.add_argument("--alt-model", required=True, help="the cheaper summarizer to weigh against it")
    verdict.add_argument("--cases", action="append", help="case id, folder or glob (repeatable; default: all)")
    verdict.add_argument("--cases-dir", default="cases")
    verdict.add_argument("--out", default="results/validate-summarizer", help="folder (default: %(default)s)")
    verdict.add_argument("--record-mode", choices=("none", "once", "new", "all"),
                         help="cassettes (default: new for API and emulator specs: record what is missing)")
    verdict.add_argument("--cassettes", help="cassette folder (default: OUT/cassettes)")
    verdict.add_argument("--prices", metavar="FILE", help="a TOML price file over the shipped table")
    verdict.add_argument("--concurrency", type=positive_int, default=1, help="cases in flight at once (API models)")
    verdict.add_argument("--json", action="store_true")
    verdict.set_defaults(func=cmd_validate_summarizer)

    serve = commands.add_parser("serve", help="serve OpenAI and Anthropic wire formats backed by the builtin "
                                              "model, with prompt-cache simulation (the emulator)")
    serve.add_argument("--port", type=port_number, default=8765,
                       help="port to listen on (default: %(default)s; 0 = any)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s, loopback)")
    serve.set_defaults(func=cmd_serve)
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
