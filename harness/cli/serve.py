"""`compaction-harness serve`: the emulator, OpenAI and Anthropic wire formats backed by the builtin model."""

from __future__ import annotations

import argparse

import harness.cli.options as options
from harness.errors import HarnessError


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("serve", help="serve OpenAI and Anthropic wire formats backed by the builtin "
                                               "model, with prompt-cache simulation (the emulator)")
    parser.add_argument("--port", type=options.port_number, default=8765,
                        help="port to listen on (default: %(default)s; 0 = any)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s, loopback)")
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.models.emulator import serve
    from harness.render.console import stderr

    stderr().print(f"emulator on http://{args.host}:{args.port} (OpenAI base_url .../v1, Anthropic base_url as is); "
                   "Ctrl-C stops it")
    try:
        serve(args.port, args.host)
    except OSError as exc:
        raise HarnessError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0
