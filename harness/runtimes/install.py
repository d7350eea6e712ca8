"""Where a runtime lives and whether it is the pinned version. Shipped runtimes install with `npm ci` from the
lockfile beside their adapter (harness/runtimes/npm/NAME/), or with pip from a hashed one (pip_install.py), into
a cache the project owns, never into git: `$COMPACTION_HARNESS_RUNTIMES` or ~/.cache/compaction-harness/runtimes,
one folder per NAME-VERSION."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.runtimes import pip_install
from harness.runtimes.adapter import RuntimeAdapter

LOCKFILES = Path(__file__).parent / "npm"
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:[-+][\w.]+)?")


def cache_root() -> Path:
    return Path(os.environ.get("COMPACTION_HARNESS_RUNTIMES") or Path.home() / ".cache/compaction-harness/runtimes")


def install_dir(adapter: RuntimeAdapter) -> Path:
    # a pip runtime's venv is shared by its adapters (inspect-summary, inspect-edit, ...: one Inspect install)
    return cache_root() / f"{adapter.pip or adapter.name}-{adapter.version}"


def install_command(adapter: RuntimeAdapter) -> str:
    return f"compaction-harness runtimes install {adapter.name}"


def executable(adapter: RuntimeAdapter) -> Path:
    """The runtime's binary: the npm install's, or for an adapter without `npm` the bin as given or on PATH.
    Missing: one line naming the command that installs it."""
    if adapter.pip:
        found = pip_install.binary(install_dir(adapter), adapter.bin)
        if found is not None:
            return found
        raise HarnessError(f"runtime {adapter.pin} is not installed (looked in {install_dir(adapter)}); "
                           f"install it with: {install_command(adapter)}")
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


def installed_version(adapter: RuntimeAdapter, binary: Path) -> str:
    try:
        done = subprocess.run([str(binary), *adapter.version_args], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HarnessError(f"runtime {adapter.name}: {binary} {' '.join(adapter.version_args)} failed: {exc}") from None
    found = _VERSION.search(done.stdout + " " + done.stderr)
    if found is None:
        raise HarnessError(f"runtime {adapter.name}: no version in the output of {binary} "
                           f"{' '.join(adapter.version_args)}: {(done.stdout + done.stderr).strip()[:200]!r}")
    return found.group(0)


def check_version(adapter: RuntimeAdapter, binary: Path, allow_drift: bool) -> str:
    """The version found; a version other than the pin is a usage error unless drift is allowed."""
    found = installed_version(adapter, binary)
    if found != adapter.version and not allow_drift:
        raise HarnessError(f"runtime {adapter.name} is {found}, the adapter pins {adapter.version} "
                           f"({binary}); reinstall with {install_command(adapter)} or pass --allow-version-drift")
    return found


def install(adapter: RuntimeAdapter) -> Path:
    """`npm ci` of the pinned lockfile into the cache; returns the binary. Already there at its pin: nothing."""
    if not adapter.npm and not adapter.pip:
        return executable(adapter)
    try:
        binary = executable(adapter)
        if installed_version(adapter, binary) == adapter.version:
            return binary
    except HarnessError:
        pass
    if adapter.pip:
        return pip_install.install(adapter.pip, install_dir(adapter), adapter.bin)
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


def installed(name: str, allow_drift: bool = False) -> Installed:
    """`--runtime NAME[@VERSION]` or an adapter path, found installed at its pin (one-line errors otherwise)."""
    from harness.runtimes.adapter import load

    adapter = load(name)
    binary = executable(adapter)
    return Installed(adapter, binary, check_version(adapter, binary, allow_drift))
