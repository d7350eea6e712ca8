"""A runtime that installs with pip (Inspect AI's agent): a venv of its own in the runtime cache, installed from
the pinned lockfile beside its adapter (harness/runtimes/pip/NAME/requirements.txt, every package with its
hashes), never into the harness's own environment. The venv counts as installed only once its marker file is
written, after pip succeeded; a failed install is removed, so nothing half-installed is ever driven."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from harness.errors import HarnessError

LOCKS = Path(__file__).parent / "pip"
MARKER = "installed-from-lock.txt"


def lockfile(name: str) -> Path:
    return LOCKS / name / "requirements.txt"


def binary(folder: Path, bin_name: str) -> Path | None:
    """The venv's executable, or None while the venv is not (wholly) installed."""
    path = folder / "venv" / "bin" / bin_name
    return path if path.exists() and (folder / MARKER).is_file() else None


def install(name: str, folder: Path, bin_name: str) -> Path:
    lock = lockfile(name)
    if not lock.is_file():
        raise HarnessError(f"pip runtime {name}: no lockfile {lock} (an adapter of your own with [install] pip "
                           "needs harness/runtimes/pip/NAME/requirements.txt, with hashes)")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        _run([sys.executable, "-m", "venv", str(folder / "venv")], "python -m venv")
        _run([str(folder / "venv" / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-input",
              "--disable-pip-version-check", "--require-hashes", "--no-deps", "-r", str(lock)], "pip install")
    except HarnessError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    (folder / MARKER).write_text(f"{lock}\n", encoding="utf-8")
    found = binary(folder, bin_name)
    if found is None:
        raise HarnessError(f"pip runtime {name}: installed, but {folder / 'venv' / 'bin' / bin_name} is not there")
    return found


def _run(argv: list[str], step: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise HarnessError(f"{step} failed ({argv[0]}): {tail}")
