"""`compaction-harness cost`: a compaction's cost in six request shapes, with the first request after it."""

from __future__ import annotations

import argparse

import harness.cli.options as options


def add_parser(commands: argparse._SubParsersAction) -> None:
    cost = commands.add_parser("cost", help="a compaction's cost in six request shapes (cache on, cache off, tools dropped, a "
                                                "cheaper model, a fresh prompt, the provider's own compaction), the "
                                                "first request after it included")
    options.add_model(cost, "--model", "the session model, priced (repeatable; default: "
                                       "anthropic:claude-sonnet-4-6 and openai:gpt-5)", repeatable=True)
    options.add_model(cost, "--alt-model", "a cheaper summarizer (repeatable; default: "
                                           "claude-haiku-4-5 / gpt-5-mini by provider)", repeatable=True)
    options.add_case_selection(cost)
    cost.add_argument("--cache-ttl", choices=("5m", "1h"), default=None,
                      help="the Anthropic cache entry lifetime the requests ask for (default 5m); entries expire "
                           "by it across the sessions' idle gaps where messages carry timestamps")
    options.add_pool(cost)
    options.add_prices(cost)
    options.add_markdown(cost, "write the tables as markdown")
    options.add_plot(cost, "cost per compaction by request shape")
    options.add_json(cost)
    cost.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.render.cost import show_study
    from harness.render.progress import Heartbeat
    from harness.studies.costs import study

    beat = Heartbeat("cost: sessions priced", 0, quiet=args.json)
    result = study(options.selected_cases(args), args.model, args.alt_model, args.prices, args.cache_ttl,
                   on_case=beat.tick)
    show_study(result, plot=args.plot, markdown_path=args.markdown, as_json=args.json)
    return 0
