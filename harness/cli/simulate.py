"""`compaction-harness simulate`: replay one session through a policy without a model."""

from __future__ import annotations

import argparse

import harness.cli.options as options
from harness.errors import HarnessError


def add_parser(commands: argparse._SubParsersAction) -> None:
    simulate = commands.add_parser("simulate", help="replay one session through a policy without a model")
    simulate.add_argument("target", metavar="SESSION|CASE_DIR|CASE_ID",
                          help="a session file, a case folder, or a case id in --cases-dir (as run takes it)")
    options.add_cases_dir(simulate)
    options.add_policy_options(simulate)
    simulate.add_argument("--estimator", choices=("chars4", "o200k", "cl100k"), default="chars4",
                          help="what the trigger counts with (the runtime uses chars4)")
    simulate.add_argument("--tokenizer", choices=("o200k", "cl100k"), default="o200k",
                          help="the true counts reported beside the estimate")
    options.add_model(simulate, "--summarizer",
                      "summarize with a model (builtin, openai:MODEL, ...); default: a placeholder")
    options.add_json(simulate)
    simulate.add_argument("--sweep", action="store_true", help="one row per window x reserve")
    simulate.add_argument("--windows", help="comma-separated windows for --sweep (default: the case's)")
    simulate.add_argument("--reserves", default="4096,8192,16384,32768,65536",
                          help="comma-separated reserves for --sweep (default: %(default)s)")
    options.add_plot(simulate, "with --sweep: compactions and risks against reserve")
    simulate.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.compaction.summarizer import model_summarizer
    from harness.render.simulate import show_simulations, show_sweep
    from harness.studies.simulate import Simulator, config_for, load_target, parse_int_list, skipped_combinations

    target = load_target(args.target, args.cases_dir)
    extra = {"summarizer": model_summarizer(args.summarizer)} if args.summarizer else {}
    simulator = Simulator(target, estimator=args.estimator, tokenizer=args.tokenizer, **extra)
    config = config_for(target, dict(options.parse_settings(args.settings)))
    policies = args.policy or ["default"]
    if args.sweep:
        windows = parse_int_list(args.windows, "--windows") if args.windows else [config.context_window]
        reserves = parse_int_list(args.reserves, "--reserves")
        skipped = skipped_combinations(windows, reserves)
        if len(skipped) == len(windows) * len(reserves):
            raise HarnessError(f"--sweep: nothing to run, every combination has reserve >= window "
                               f"({'; '.join(s['reason'].split(':')[0] for s in skipped)})")
        rows = [row for policy in policies for row in simulator.sweep(policy, config, windows, reserves)]
        show_sweep(target.name, rows, skipped, plot=args.plot, as_json=args.json)
    else:
        show_simulations([simulator.run(policy, config) for policy in policies], as_json=args.json)
    return 0
