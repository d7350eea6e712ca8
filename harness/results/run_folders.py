"""Where a command's RUN argument points: one run folder (or its run.json), or the folder of a run with
several configurations (`run --policy A --policy B --out DIR`), which holds one run folder per configuration
beside comparison.json."""

from __future__ import annotations

import json
from pathlib import Path

from harness.errors import HarnessError


def run_folders(path: str | Path) -> list[Path]:
    """The run folders `path` stands for: itself when it holds run.json (or is one), else its sub-folders that
    do, limited to the runs its comparison.json names when it has one (a shared parent such as results/)."""
    path = Path(path)
    if path.is_file() or (path / "run.json").exists():
        return [path]
    found = sorted(run_file.parent for run_file in path.glob("*/run.json"))
    compared = _compared_run_ids(path / "comparison.json")
    if compared is not None:
        found = [folder for folder in found if _run_id(folder / "run.json") in compared]
    if not found:
        raise HarnessError(f"{path}: no run here (expected a results folder with run.json, or the folder of a run "
                           f"with several configurations)")
    return found


def _compared_run_ids(path: Path) -> set[str] | None:
    try:
        return {column["run"] for column in json.loads(path.read_text(encoding="utf-8"))["runs"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _run_id(path: Path) -> str | None:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("run_id")
    except (OSError, ValueError, AttributeError):
        return None
