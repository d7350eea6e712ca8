"""Where a runtime lives and whether it is the pinned version. Shipped runtimes install with `npm ci` from the
lockfile beside their adapter (harness/runtimes/npm/NAME/) into a cache the project owns, never into git:
`$COMPACTION_HARNESS_RUNTIMES` or ~/.cache/compaction-harness/runtimes, one folder per NAME-VERSION.
The version check is a runtime process like any other: the scrubbed environment, a scratch home, the sandbox."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.redact import redact
from harness.runtimes.adapter import RuntimeAdapter
from harness.runtimes.home import version_environment
from harness.runtimes.process import RuntimeFailed, RuntimeProcess
from harness.runtimes.sandbox import Sandbox, check

LOCKFILES = Path(__file__).parent / "npm"
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:[-+][\w.]+)?")


def cache_root() -> Path:
    return Path(os.environ.get("COMPACTION_HARNESS_RUNTIMES") or Path.home() / ".cache/compaction-harness/runtimes")


def install_dir(adapter: RuntimeAdapter) -> Path:
    return cache_root() / f"{adapter.name}-{adapter.version}"


def install_command(adapter: RuntimeAdapter) -> str:
    return f"compaction-harness runtimes install {adapter.name}"


def executable(adapter: RuntimeAdapter) -> Path:
    """The runtime's binary: the npm install's, or for an adapter without `npm` the bin as given or on PATH.
    Missing: one line naming the command that installs it."""
    if adapter.npm:
        path = install_dir(adapter) / "node_modules" / ".bin" / adapter.bin
        if path.exists():
            return path
        raise HarnessError(f"runtime {adapter.pin} is not installed (looked in {path.parent}); "
                           f"install it with: {install_command(adapter)}")
    found = shutil.which(adapter.bin)
    if found is None:
        raise HarnessError(f"runtime {adapter.name}: {adapter.bin!r} is not on PATH (the adapter {adapter.source} "
                           "has no [install] npm package to install it from)")
    return Path(found)


def sandbox_reads(binary: Path) -> tuple[Path, ...]:
    """What a sandboxed runtime may read besides the system: the runtime cache, and a bin given as a path."""
    return (cache_root(), binary.parent, binary.resolve().parent)


def installed_version(adapter: RuntimeAdapter, binary: Path, sandboxed: bool = True) -> str:
    """`<bin> --version`, run as a drive runs the runtime: the scrubbed environment, a scratch home (removed
    after) and, `sandboxed`, the sandbox (which must then be usable: sandbox.check)."""
    argv = [str(binary), *adapter.version_args]
    if sandboxed:
        check()
    with tempfile.TemporaryDirectory(prefix=f"ch-version-{adapter.name}-") as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        box = Sandbox(Path(scratch), sandbox_reads(binary)) if sandboxed else None
        try:
            process = RuntimeProcess(argv, Path(scratch), version_environment(adapter, home, sandboxed), box)
            code, out = process.wait(120)
        except (OSError, RuntimeFailed) as exc:
            raise HarnessError(redact(f"runtime {adapter.name}: {' '.join(argv)} failed: {exc}")) from None
        said = out + " " + " ".join(process.stderr_tail)
    found = _VERSION.search(said)
    if found is None:
        raise HarnessError(redact(f"runtime {adapter.name}: no version in the output of {' '.join(argv)} "
                                  f"(exit {code}): {said.strip()[:200]!r}"))
    return found.group(0)


def check_version(adapter: RuntimeAdapter, binary: Path, allow_drift: bool, sandboxed: bool = True) -> str:
    """The version found; a version other than the pin is a usage error unless drift is allowed, and then a
    warning on the terminal (the run's configuration records the version found: harness.run.config)."""
    found = installed_version(adapter, binary, sandboxed)
    if found != adapter.version:
        if not allow_drift:
            raise HarnessError(f"runtime {adapter.name} is {found}, the adapter pins {adapter.version} "
                               f"({binary}); reinstall with {install_command(adapter)} or pass --allow-version-drift")
        print(f"warning: runtime {adapter.name} is {found}, not the pinned {adapter.version} "
              f"(--allow-version-drift): its prompts and defaults may differ; the run records {found}",
              file=sys.stderr)
    return found


def at_pin(adapter: RuntimeAdapter) -> Path | None:
    """The binary of a runtime already installed at its pin (or one without an npm package), else None."""
    if not adapter.npm:
        return executable(adapter)
    try:
        binary = executable(adapter)
        return binary if installed_version(adapter, binary, usable()) == adapter.version else None
    except HarnessError:
        return None


def install(adapter: RuntimeAdapter) -> Path:
    """`npm ci` of the pinned lockfile into the cache; returns the binary. Already there at its pin: nothing."""
    if (binary := at_pin(adapter)) is not None:
        return binary
    lock = LOCKFILES / adapter.name
    if not (lock / "package-lock.json").is_file():
        raise HarnessError(f"runtime {adapter.name}: no lockfile in {lock} (an adapter of your own with [install] "
                           "npm needs harness/runtimes/npm/NAME/package.json and package-lock.json)")
    if shutil.which("npm") is None:
        raise HarnessError("npm is not on PATH: install Node.js and npm (Debian: apt-get install -y nodejs npm)")
    target = install_dir(adapter)
    target.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(lock / name, target / name)
    done = _npm(target, "ci")
    if done.returncode != 0 and "EUSAGE" in done.stderr:
        # npm ci refuses a lock without every platform's optional package (opencode ships one per platform);
        # install from the same lock then, versions still pinned by it and by package.json
        done = _npm(target, "install", "--no-save")
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise HarnessError(f"npm ci for {adapter.pin} failed in {target}: {tail}")
    return executable(adapter)


def _npm(target: Path, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["npm", *command, "--no-audit", "--no-fund", "--loglevel=error"], cwd=target,
                          capture_output=True, text=True)


@dataclass(frozen=True)
class Installed:
    """A runtime ready to drive: its adapter, its binary and the version it reported."""

    adapter: RuntimeAdapter
    binary: Path
    version: str


def installed(name: str, allow_drift: bool = False, sandboxed: bool = True) -> Installed:
    """`--runtime NAME[@VERSION]` or an adapter path, found installed at its pin (one-line errors otherwise)."""
    from harness.runtimes.adapter import load

    adapter = load(name)
    binary = executable(adapter)
    return Installed(adapter, binary, check_version(adapter, binary, allow_drift, sandboxed))


def usable() -> bool:
    """Whether a sandbox can be made here (`runtimes install` checks versions in one when it can)."""
    try:
        check()
    except HarnessError:
        return False
    return True
