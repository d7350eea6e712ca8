"""`compaction-harness runtimes`: the real agent runtimes the harness can drive, and installing them pinned."""

from __future__ import annotations

import argparse


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("runtimes", help="list the real agent runtimes (pi, codex, opencode, ...) and "
                                                  "install them pinned from their lockfiles")
    sub = parser.add_subparsers(dest="runtimes_command", required=True)
    listing = sub.add_parser("list", help="each shipped runtime: pinned version, installed or not, where")
    listing.set_defaults(func=list_command)
    install = sub.add_parser("install", help="install a runtime from its pinned lockfile (npm ci; Inspect's: pip, "
                                             "hashes required, a venv of its own) into the harness's cache "
                                             "($COMPACTION_HARNESS_RUNTIMES or ~/.cache/compaction-harness/runtimes)")
    install.add_argument("names", nargs="+", metavar="NAME", help="a shipped runtime (pi, codex, opencode, gemini-cli, "
                                                                  "inspect-summary, ...) or an adapter .toml")
    install.set_defaults(func=install_command)


def list_command(args: argparse.Namespace) -> int:
    from harness.errors import HarnessError
    from harness.render.console import stdout
    from harness.runtimes import adapter, install

    rows = []
    for path in sorted(adapter.ADAPTERS.glob("*.toml")):
        runtime = adapter.load(str(path))
        try:
            where = str(install.executable(runtime))
        except HarnessError:
            where = f"not installed ({install.install_command(runtime)})"
        rows.append(f"{runtime.name:<16} {runtime.version:<10} {runtime.wire:<12} {where}")
    stdout().print("\n".join(rows), markup=False, highlight=False)
    return 0


def install_command(args: argparse.Namespace) -> int:
    from harness.render.console import stderr
    from harness.runtimes import adapter, install

    for name in args.names:
        runtime = adapter.load(name)
        stderr().print(f"installing {runtime.pin} ({'pip' if runtime.pip else 'npm ci'}) ...", markup=False)
        binary = install.install(runtime)
        found = install.check_version(runtime, binary, allow_drift=False)
        stderr().print(f"{runtime.name} {found}: {binary}", markup=False)
    return 0
