"""`compaction-harness serve`: the emulator (Chat Completions, Responses, Messages and Gemini wire formats)
backed by the builtin model; with `--script CASE_DIR`, the scripted model replaying that case to a real agent
runtime (docs/scripted-model.md)."""

from __future__ import annotations

import argparse
import signal

import harness.cli.options as options
from harness.errors import HarnessError


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("serve", help="serve OpenAI, Anthropic and Gemini wire formats backed by the "
                                               "builtin model, with prompt-cache simulation (the emulator); with "
                                               "--script, replay a recorded case to a real agent runtime")
    parser.add_argument("--port", type=options.port_number, default=8765,
                        help="port to listen on (default: %(default)s; 0 = any)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s, loopback)")
    parser.add_argument("--window", action="append", type=window_setting, default=[], metavar="[MODEL=]N",
                        help="context window in tokens enforced with the provider's own error, for MODEL or for "
                             "every model (repeatable; default: the price table's window, none for other models)")
    scripted = parser.add_argument_group("scripted model (replay a case to a runtime)")
    scripted.add_argument("--script", action="append", metavar="CASE_DIR",
                          help="a case to replay (repeatable: several cases are told apart by the request's model "
                               "name, the case id)")
    scripted.add_argument("--workspace", metavar="DIR",
                          help="where each case's workspace (DIR/<case id>, the runtime's working directory) and "
                               "request log (DIR/<case id>.requests.jsonl) are written; required with --script")
    scripted.add_argument("--runtime-signatures", default="all", metavar="NAME",
                          help="whose request signatures tell turns from compactions and side requests: pi, codex, "
                               "opencode, gemini-cli, qwen-code, or all (default)")
    options.add_model(scripted, "--summarizer", "the summarizer under test that answers the runtime's compaction "
                                                "requests (default: builtin)")
    options.add_record_options(scripted, record_default="none", record_help="cassettes for the summarizer "
                               "(default: none, replay only)", cassettes_default=None,
                               cassettes_help="cassette folder for the summarizer (default: no cassette)")
    parser.set_defaults(func=command)


def window_setting(text: str) -> tuple[str, int]:
    """`N` (every model) or `MODEL=N`, as (model or "*", N)."""
    model, sep, size = text.rpartition("=")
    if not size.isdigit() or int(size) <= 0 or (sep and not model):
        raise argparse.ArgumentTypeError(f"expected N or MODEL=N with N a positive token count, not {text!r}")
    return model or "*", int(size)


def command(args: argparse.Namespace) -> int:
    if args.script:
        return _scripted(args)
    if args.workspace or args.summarizer:
        raise HarnessError("--workspace and --summarizer go with --script CASE_DIR")
    from harness.models.emulator import serve
    from harness.render.console import stderr

    def ready(url: str) -> None:
        stderr().print(f"emulator on {url} (OpenAI base_url {url}/v1, Anthropic and Gemini base_url {url}); "
                       "Ctrl-C stops it", markup=False)

    try:
        serve(args.port, args.host, dict(args.window) or None, ready)
    except OSError as exc:
        raise HarnessError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0


def _scripted(args: argparse.Namespace) -> int:
    from harness.scripted import open_replays, serve_replays
    from harness.render.console import stderr

    if not args.workspace:
        raise HarnessError("--script needs --workspace DIR (where the fixtures and the request log are written)")
    replays = open_replays(args.script, args.workspace, runtime=args.runtime_signatures,
                           summarizer=args.summarizer or "builtin", cassettes=args.cassettes,
                           record_mode=args.record_mode)
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)  # a driver's stop is a Ctrl-C here

    def ready(url: str) -> None:
        for case_id, replay in replays.replays.items():
            stderr().print(f"{case_id}: {len(replay.script.steps)} steps, {len(replay.script.prompts)} prompts; "
                           f"workspace {replay.workspace}")
        stderr().print(f"scripted model on {url} (OpenAI base_url {url}/v1, Anthropic and Gemini {url}); Ctrl-C "
                       "stops it and reports")

    try:
        outcomes = serve_replays(replays, args.port, args.host, ready, dict(args.window) or None)
    except OSError as exc:
        raise HarnessError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    for case_id, outcome in outcomes.items():
        print(f"{case_id}: {outcome.describe()}; exit {outcome.exit_code}")
    return max(outcome.exit_code for outcome in outcomes.values())
