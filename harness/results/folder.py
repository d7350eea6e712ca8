"""The results folder: `results/<run-id>/run.json`, one file per case, written as cases finish.

run.json holds the configuration, per case the compaction events and per probe the answers and grades
for the compacted context and each control, and the aggregates. `cases/<id>.json` adds the compacted
contexts themselves. A case file is written the moment the case finishes and run.json is rewritten
from the case files, so an interrupted run keeps everything that finished and can be resumed.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

SCHEMA_VERSION = 1
# Fields that differ between two identical runs: left out when runs are compared for equality.
VOLATILE_KEYS = frozenset({"merged_from", "created", "finished", "timings", "latency", "run_id", "out", "git_commit", "elapsed_s",
                           "wall_time_s", "harness_time_s", "model_time_s"})


def harness_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("compaction-harness")
    except PackageNotFoundError:
        return "unknown"


def git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=5, cwd=Path(__file__).parent).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class RunFolder:
    path: Path

    @property
    def run_file(self) -> Path:
        return self.path / "run.json"

    def case_file(self, case_id: str, repeat: int = 0) -> Path:
        suffix = f".r{repeat}" if repeat else ""
        return self.path / "cases" / f"{case_id}{suffix}.json"

    def create(self, header: dict[str, Any], resume: bool) -> None:
        if self.run_file.exists() and not resume:
            raise HarnessError(f"{self.path} already holds a run: pass --resume to continue it or --out elsewhere")
        if resume and self.run_file.exists():
            existing = read_run(self.path)
            if existing["configuration"] != header["configuration"]:
                raise HarnessError(f"{self.path}: --resume with a different configuration than the run it holds")
        (self.path / "cases").mkdir(parents=True, exist_ok=True)
        if not self.run_file.exists():
            write_json(self.run_file, {**header, "cases": {}, "aggregates": {}})

    def finished_cases(self) -> set[tuple[str, int]]:
        done = set()
        for path in (self.path / "cases").glob("*.json"):
            record = json.loads(path.read_text())
            if record.get("status") == "ok":
                done.add((record["case"], record.get("repeat", 0)))
        return done

    def write_case(self, record: dict[str, Any]) -> None:
        write_json(self.case_file(record["case"], record.get("repeat", 0)), record)

    def case_records(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text()) for p in sorted((self.path / "cases").glob("*.json"))]


def write_json(path: Path, data: Any) -> None:
    """Write through a temporary file so a crash never leaves half a document."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")
    partial.replace(path)


def read_json(path: Path, what: str, missing: str) -> Any:
    """A JSON document a user pointed at, or a one-line error saying what was expected."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        raise HarnessError(f"{path}: {missing}") from None
    except json.JSONDecodeError as exc:
        raise HarnessError(f"{path}: {what} is not valid JSON ({exc.msg} at line {exc.lineno})") from None


def read_run(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    run_file = path / "run.json" if path.is_dir() else path
    data = read_json(run_file, "the run", "no run here (expected a results folder with run.json)")
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        found = data.get("schema_version") if isinstance(data, dict) else None
        raise HarnessError(f"{run_file}: schema_version {found!r}, this harness reads {SCHEMA_VERSION}")
    return data


def strip_volatile(data: Any) -> Any:
    """A run without the fields that differ between identical runs (times, ids, commit)."""
    if isinstance(data, dict):
        return {k: strip_volatile(v) for k, v in data.items() if k not in VOLATILE_KEYS}
    if isinstance(data, list):
        return [strip_volatile(v) for v in data]
    return data


def merge_runs(paths: list[str | Path], out: str | Path, aggregate) -> dict[str, Any]:
    """Join shard results into one run that gates and compares exactly like an unsharded one."""
    import shutil

    if not paths:
        raise HarnessError("merge needs at least one run folder")
    runs = [(Path(p), read_run(p)) for p in paths]
    configuration = runs[0][1]["configuration"]
    for path, run in runs[1:]:
        if run["configuration"] != configuration:
            raise HarnessError(f"{path}: its configuration differs from {runs[0][0]}; merge shards of one run only")
    target = RunFolder(Path(out))
    if target.run_file.exists():
        raise HarnessError(f"{out} already holds a run: merge into a new folder")
    seen: dict[str, Path] = {}
    (target.path / "cases").mkdir(parents=True, exist_ok=True)
    for path, _ in runs:
        for case_file in sorted((path / "cases").glob("*.json")):
            if case_file.name in seen:
                raise HarnessError(f"{case_file.stem} is in both {seen[case_file.name]} and {path}: shards overlap")
            seen[case_file.name] = path
            shutil.copyfile(case_file, target.path / "cases" / case_file.name)
    first = runs[0][1]
    header = {k: v for k, v in first.items() if k not in ("cases", "aggregates", "shard", "finished")}
    header["run_id"] = target.path.name
    header["merged_from"] = [run["run_id"] for _, run in runs]
    write_json(target.run_file, {**header, "cases": {}, "aggregates": {}})
    return rebuild_run(target, aggregate, finished=True)


def rebuild_run(folder: RunFolder, aggregate, finished: bool = False) -> dict[str, Any]:
    """run.json from the case files: the one place the run document is assembled."""
    run = read_run(folder.path)
    records = folder.case_records()
    run["cases"] = {_record_key(r): {k: v for k, v in r.items() if k != "contexts"} for r in records}
    run["aggregates"] = aggregate(records)
    if finished:
        run["finished"] = now()
    write_json(folder.run_file, run)
    return run


def _record_key(record: dict[str, Any]) -> str:
    return record["case"] + (f".r{record['repeat']}" if record.get("repeat") else "")
