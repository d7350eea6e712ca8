"""`compaction-harness serve`: the emulator (Chat Completions, Responses, Messages and Gemini wire formats)
backed by the builtin model."""

from __future__ import annotations

import argparse

import harness.cli.options as options
from harness.errors import HarnessError


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("serve", help="serve OpenAI, Anthropic and Gemini wire formats backed by the "
                                               "builtin model, with prompt-cache simulation (the emulator)")
    parser.add_argument("--port", type=options.port_number, default=8765,
                        help="port to listen on (default: %(default)s; 0 = any)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s, loopback)")
    parser.add_argument("--window", action="append", type=window_setting, default=[], metavar="[MODEL=]N",
                        help="context window in tokens enforced with the provider's own error, for MODEL or for "
                             "every model (repeatable; default: the price table's window, none for other models)")
    parser.set_defaults(func=command)


def window_setting(text: str) -> tuple[str, int]:
    """`N` (every model) or `MODEL=N`, as (model or "*", N)."""
    model, sep, size = text.rpartition("=")
    if not size.isdigit() or int(size) <= 0 or (sep and not model):
        raise argparse.ArgumentTypeError(f"expected N or MODEL=N with N a positive token count, not {text!r}")
    return model or "*", int(size)


def command(args: argparse.Namespace) -> int:
    from harness.models.emulator import serve
    from harness.render.console import stderr

    stderr().print(f"emulator on http://{args.host}:{args.port} (OpenAI base_url .../v1, Anthropic and Gemini "
                   "base_url as is); Ctrl-C stops it")
    try:
        serve(args.port, args.host, dict(args.window) or None)
    except OSError as exc:
        raise HarnessError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0
