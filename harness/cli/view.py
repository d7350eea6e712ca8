"""`compaction-harness view RUN`: open a run's report.html in a browser, or serve it."""

from __future__ import annotations

import argparse

import harness.cli.options as options


def add_parser(commands: argparse._SubParsersAction) -> None:
    view = commands.add_parser("view", help="open a run's report.html in the browser, or serve it where there is no display")
    view.add_argument("run", metavar="RUN", help="a run folder (with run.json) or its report.html")
    view.add_argument("--serve", action="store_true",
                      help="serve the page over HTTP instead of opening it (machines without a display)")
    view.add_argument("--port", type=options.port_number, default=8766,
                      help="with --serve: port to listen on (default: %(default)s; 0 = any)")
    view.add_argument("--host", default="127.0.0.1", help="with --serve: address to bind (default: %(default)s)")
    view.add_argument("--expose", action="store_true",
                      help="with --serve: allow a --host that is not loopback (every machine that reaches it can "
                           "read the report; only report.html is served)")
    view.add_argument("--no-open", action="store_true", help="write the page if needed and print its path only")
    view.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from harness.errors import HarnessError
    from harness.render.console import stderr, stdout
    from harness.render.view import is_loopback, open_page, report_page, serve_page

    if not (is_loopback(args.host) or args.expose or args.no_open):  # before any work: it may serve
        raise HarnessError(f"--host {args.host} is not loopback: other machines could read the report; add --expose "
                           "to serve it there")
    page = report_page(args.run)
    if args.no_open:
        stdout().print(f"report: {page}", markup=False)
        return 0
    if not args.serve and open_page(page):
        stdout().print(f"opened {page}", markup=False)
        return 0
    why = "" if args.serve else "no display to open a browser on; "

    def ready(url: str) -> None:
        stderr().print(f"{why}report on {url} (Ctrl-C stops it)", markup=False)
        if not is_loopback(args.host):
            stderr().print(f"exposed: {page.resolve()} (that file only, no other file of its folder) to every "
                           f"machine that can reach {args.host}", markup=False)

    serve_page(page, args.host, args.port, ready)
    return 0
