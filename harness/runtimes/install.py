"""Where a runtime lives and whether it is the pinned version. Shipped runtimes install with `npm ci` from the
lockfile beside their adapter (harness/runtimes/npm/NAME/), or with pip from a hashed one (pip_install.py), into
a cache the project owns, never into git: `$COMPACTION_HARNESS_RUNTIMES` or ~/.cache/compaction-harness/runtimes,
one folder per NAME-VERSION. Another published npm release (`NAME@VERSION`) gets its lockfile resolved by npm into
its own folder and kept there; a runtime that needs another Node gets it beside it (node.py).
The version check is a runtime process like any other: the scrubbed environment, a scratch home, the sandbox."""

from __future__ import annotations

import json
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
from harness.runtimes import node, pip_install
from harness.runtimes.adapter import RuntimeAdapter
from harness.runtimes.cache import cache_root
from harness.runtimes.home import version_environment
from harness.runtimes.process import RuntimeFailed, RuntimeProcess
from harness.runtimes.sandbox import Sandbox, check

LOCKFILES = Path(__file__).parent / "npm"
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:[-+][\w.]+)?")


def install_dir(adapter: RuntimeAdapter) -> Path:
    # a pip runtime's venv is shared by its adapters (inspect-summary, inspect-edit, ...: one Inspect install)
    return cache_root() / f"{adapter.pip or adapter.installed_as}-{adapter.version}"


def install_command(adapter: RuntimeAdapter) -> str:
    name = adapter.installed_as
    return f"compaction-harness runtimes install {name if adapter.lockfile_shipped else f'{name}@{adapter.version}'}"


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


def node_path(adapter: RuntimeAdapter) -> str:
    """PATH for the runtime: its pinned Node's bin folder first, when its adapter names one."""
    return node.path_with(cache_root(), adapter.node, os.environ.get("PATH", os.defpath))


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
            env = {**version_environment(adapter, home, sandboxed), "PATH": node_path(adapter)}
            process = RuntimeProcess(argv, Path(scratch), env, box)
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
    """The binary of a runtime already installed at its pin (or one installed by neither npm nor pip), else None."""
    if not adapter.npm and not adapter.pip:
        return executable(adapter)
    if adapter.node:
        node.install(cache_root(), adapter.node, _npm)
    try:
        binary = executable(adapter)
        return binary if installed_version(adapter, binary, usable()) == adapter.version else None
    except HarnessError:
        return None


def install(adapter: RuntimeAdapter) -> Path:
    """`npm ci` of the pinned lockfile into the cache; returns the binary. Already there at its pin: nothing."""
    if (binary := at_pin(adapter)) is not None:
        return binary
    if adapter.pip:
        return pip_install.install(adapter.pip, install_dir(adapter), adapter.bin)
    if shutil.which("npm") is None:
        raise HarnessError("npm is not on PATH: install Node.js and npm (Debian: apt-get install -y nodejs npm)")
    target = install_dir(adapter)
    target.mkdir(parents=True, exist_ok=True)
    if adapter.lockfile_shipped:
        lock = LOCKFILES / adapter.installed_as
        if not (lock / "package-lock.json").is_file():
            raise HarnessError(f"runtime {adapter.name}: no lockfile in {lock} (an adapter of your own with [install] "
                               "npm needs harness/runtimes/npm/NAME/package.json and package-lock.json)")
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(lock / name, target / name)
    else:
        resolve_lockfile(adapter, target)
    done = _npm(target, "ci")
    if done.returncode != 0 and "EUSAGE" in done.stderr:
        # npm ci refuses a lock without every platform's optional package (opencode ships one per platform);
        # install from the same lock then, versions still pinned by it and by package.json
        done = _npm(target, "install", "--no-save")
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise HarnessError(f"npm ci for {adapter.pin} failed in {target}: {tail}")
    return executable(adapter)


def resolve_lockfile(adapter: RuntimeAdapter, target: Path) -> None:
    """package.json naming exactly `adapter.version`, and its lockfile resolved by npm (nothing installed yet):
    kept in the cache folder, so the install is `npm ci` of a lock as for a shipped pin."""
    manifest = {"name": f"harness-runtime-{adapter.name}", "private": True,
                "dependencies": {adapter.npm: adapter.version}}
    (target / "package.json").write_text(json.dumps(manifest) + "\n", encoding="utf-8")
    done = _npm(target, "install", "--package-lock-only")
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-2:])
        raise HarnessError(f"{adapter.pin}: npm could not resolve {adapter.npm}@{adapter.version} ({tail}); "
                           f"published versions: npm view {adapter.npm} versions")


def _npm(target: Path, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["npm", *command, "--no-audit", "--no-fund", "--loglevel=error"], cwd=target,
                          capture_output=True, text=True)


def published(adapter: RuntimeAdapter) -> list[str]:
    """The versions npm's registry lists for the adapter's package, oldest first (one `npm view` call)."""
    if not adapter.npm:
        return []
    done = subprocess.run(["npm", "view", adapter.npm, "versions", "--json"], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-2:])
        raise HarnessError(f"npm view {adapter.npm} versions failed: {tail}")
    found = json.loads(done.stdout or "[]")
    return [found] if isinstance(found, str) else list(found)


def newer(versions: list[str], than: str) -> list[str]:
    """The release versions (no pre-release tag) above `than`, in order."""
    def key(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split("."))
    plain = [v for v in versions if re.fullmatch(r"\d+\.\d+\.\d+", v)]
    return sorted((v for v in plain if key(v) > key(than)), key=key) if re.fullmatch(r"\d+\.\d+\.\d+", than) else []


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
