"""The results folder: `results/<run-id>/run.json`, one file per case, written as cases finish.

run.json holds the configuration, per case the compaction events and per probe the answers and grades
for the compacted context and each control, and the aggregates. `cases/<key>.json` adds the compacted
contexts themselves. When a case finishes its file is written and run.json is rewritten at once, so an
interrupted run keeps everything that finished and can be resumed.

The folder keeps its case records in memory (on --resume it reads the existing case files once) with each
record's run.json text serialised once and the aggregates folded in as cases arrive: a rewrite of run.json
costs the same at case 190 as at case 19 apart from writing the bytes themselves.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from bisect import insort
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

from harness.atomic import write_atomic, write_with
from harness.errors import HarnessError, InputError
from harness.results.aggregate import Aggregator
from harness.results.claim import CLAIM_FILE, being_written, claim_folder
from harness.results.shape import check_case_file, check_run
from harness.results.schema import SCHEMA_VERSION, Aggregates, CaseRecord, RunHeader
from harness.validate import encoded, read_json_file, writable_folder
from harness.results.shards import check_complete, check_shard_set
from harness.results.versions import current

# Fields that differ between two identical runs: left out when runs are compared for equality.
VOLATILE_KEYS = frozenset({"merged_from", "created", "finished", "timings", "latency", "run_id", "out", "git_commit",
                           "elapsed_s", "wall_time_s", "harness_time_s", "model_time_s"})
INDENT = 1  # run.json and case files: one space per level
# What a run writes in its folder (run.json, case files, reports, its own cassettes and runtime logs, the
# instruction it was given): what `run --overwrite` removes, and nothing else.
RUN_OUTPUTS = ("run.json", "cases", "report.md", "report.html", "retention.png", "instruction.md", "cassettes",
               "runtime-logs", CLAIM_FILE)


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
    """One run's folder and, once opened (`create`) or read (`case_records`), its records in memory."""

    path: Path
    header: RunHeader | None = field(default=None, repr=False)
    _records: dict[str, CaseRecord] | None = field(default=None, repr=False)
    _documents: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # run.json form per key
    _texts: dict[str, bytes] = field(default_factory=dict, repr=False)  # the same, serialised once
    _aggregator: Aggregator = field(default_factory=Aggregator, repr=False)
    _order: list[str] = field(default_factory=list, repr=False)  # record keys in case-file order
    _claim: Any = field(default=None, repr=False)  # the open claim file, held while the run writes

    @property
    def run_file(self) -> Path:
        return self.path / "run.json"

    def case_file(self, case_id: str, repeat: int = 0) -> Path:
        suffix = f".r{repeat}" if repeat else ""
        return self.path / "cases" / f"{case_id}{suffix}.json"

    def clear(self) -> None:
        """The run this folder holds, removed (`run --overwrite`): only what a run writes (RUN_OUTPUTS), never
        other files; refused while a process writes it."""
        if being_written(self.path):
            raise HarnessError(f"{self.path}: another process is writing this run right now; --overwrite waits for "
                               "no one: let it finish or choose another --out")
        for name in RUN_OUTPUTS:
            found = self.path / name
            if found.is_dir() and not found.is_symlink():
                shutil.rmtree(found)
            elif found.exists() or found.is_symlink():
                found.unlink()

    def create(self, header: RunHeader, resume: bool) -> None:
        """Open the folder for writing: a new run, or (resume) the run it holds with its finished cases.
        The folder is claimed first (harness.results.claim), so two processes never write one run."""
        writable_folder(self.path, "--out")
        if self.run_file.exists() and not resume:
            raise HarnessError(f"{self.path} already holds a run: pass --resume to continue it, --overwrite to "
                               "replace it, or --out elsewhere")
        self._claim = claim_folder(self.path, resume)
        existing = RunHeader.from_json(read_run(self.path)) if resume and self.run_file.exists() else None
        if existing is not None and existing.configuration.to_json() != header.configuration.to_json():
            raise HarnessError(f"{self.path}: --resume with a different configuration than the run it holds")
        (self.path / "cases").mkdir(parents=True, exist_ok=True)
        self.header = existing or header
        self._load(self._read_case_files())  # what the folder holds counts, as when run.json was rebuilt from it
        if existing is None:
            self.write_run()

    def finished_cases(self) -> set[tuple[str, int]]:
        """Cases --resume skips: evaluated, with no request failed (a failed one is asked again)."""
        return {(r.case, r.repeat) for r in self.case_records() if r.complete}

    def case_records(self) -> list[CaseRecord]:
        """The records in case-file order (read from disk once if the folder was not opened)."""
        if self._records is None:
            self._load(self._read_case_files())
        assert self._records is not None
        return [self._records[key] for key in self._order]

    def add(self, record: CaseRecord, *, write_case: bool = True, write_run: bool = True) -> None:
        """A finished case: its file, then run.json with it (both atomic)."""
        if write_case:
            write_json(self.case_file(record.case, record.repeat), record.to_json())
        self._remember(record)
        if write_run:
            self.write_run()

    def document(self, finished: str | None = None, aggregates: Aggregates | None = None) -> dict[str, Any]:
        """run.json as a dict, equal to the file's JSON (`aggregates` when they were just computed)."""
        return {**self._header_json(), "cases": {key: self._documents[key] for key in self._order},
                "aggregates": aggregates or self._aggregator.result(final=bool(finished)),
                **({"finished": finished} if finished else {})}

    def write_run(self, finished: str | None = None, aggregates: Aggregates | None = None) -> None:
        """Write run.json from the records in memory, never re-reading the case files. Each case's text was
        serialised once when it arrived; here it is only streamed out, with the header and aggregates."""
        keys = self._order
        head = [f" {_dumps(name)}: {_nested(value, 1)}" for name, value in self._header_json().items()]
        tail = [f" {_dumps(name)}: {_nested(value, 1)}" for name, value in
                (("aggregates", aggregates or self._aggregator.result(final=bool(finished))),
                 *((("finished", finished),) if finished else ()))]

        def fill(out: BinaryIO) -> None:
            out.write(encoded("{\n" + ",\n".join(head) + ',\n "cases": ' + ("{\n" if keys else "{}")))
            for position, key in enumerate(keys):  # no joined copy of every case's text
                out.write(self._texts[key])
                out.write(b",\n" if position < len(keys) - 1 else b"\n }")
            out.write(encoded(",\n" + ",\n".join(tail) + "\n}\n"))

        write_with(self.run_file, fill)

    def finish(self) -> dict[str, Any]:
        """The run finished: run.json written with its finishing time, returned as a dict."""
        finished = now()
        aggregates = self._aggregator.result(final=True)  # the resampled intervals are the costly part: once
        self.write_run(finished, aggregates)
        self.release()
        return self.document(finished, aggregates)

    def release(self) -> None:
        """Give up the folder's claim (the run finished or stopped); reading it stays possible."""
        if self._claim is not None:
            self._claim.close()
            self._claim = None

    # -- internals

    def _header_json(self) -> dict[str, Any]:
        if self.header is None:
            raise HarnessError(f"{self.path}: the run folder was not opened")
        return self.header.to_json()

    def _read_case_files(self) -> list[CaseRecord]:
        return [read_case_file(p) for p in sorted((self.path / "cases").glob("*.json"))]

    def _load(self, records: list[CaseRecord]) -> None:
        self._records, self._documents, self._texts, self._aggregator, self._order = {}, {}, {}, Aggregator(), []
        for record in records:
            self._remember(record)

    def _remember(self, record: CaseRecord) -> None:
        if self._records is None:
            self._records = {}
        document = record.to_json(contexts=False)
        if record.key not in self._records:
            insort(self._order, record.key, key=_file_order)
        self._records[record.key] = record
        self._documents[record.key] = document
        self._texts[record.key] = encoded(f"  {_dumps(record.key)}: {_nested(document, 2)}")
        self._aggregator.add(record)


def _file_order(key: str) -> str:
    return f"{key}.json"  # the case files' names sort the cases, as a directory listing would


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=INDENT, ensure_ascii=False)


def _nested(value: Any, depth: int) -> str:
    """`value` serialised as it reads `depth` levels deep in an indented document (JSON strings never hold
    a raw newline, so indenting every line is safe)."""
    return _dumps(value).replace("\n", "\n" + " " * (INDENT * depth))


def _write_text(path: Path, text: str) -> None:
    write_atomic(path, encoded(text))


def write_json(path: Path, data: Any) -> None:
    _write_text(path, json.dumps(data, indent=INDENT, ensure_ascii=False, sort_keys=False) + "\n")


def read_json(path: Path, what: str, missing: str) -> Any:
    """A JSON document a user pointed at, or a one-line error saying what was expected."""
    if not Path(path).is_file():
        raise HarnessError(f"{path}: {missing}")
    return read_json_file(path, what, missing)


def read_case_file(path: Path) -> CaseRecord:
    """One case file of a run folder, checked (a truncated one names itself and the fix)."""
    return check_case_file(read_json_file(path, "the case file", "cannot read the case file"), str(path))


def read_run(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    run_file = path / "run.json" if path.is_dir() else path
    data = read_json(run_file, "the run", "no run here (expected a results folder with run.json)")
    if not isinstance(data, dict):
        raise HarnessError(f"{run_file}: not a run (expected a JSON object with schema_version)")
    return check_run(current(data, str(run_file), "run it again with this harness"), str(run_file))


def strip_volatile(data: Any) -> Any:
    """A run without the fields that differ between identical runs (times, ids, commit)."""
    if isinstance(data, dict):
        return {k: strip_volatile(v) for k, v in data.items() if k not in VOLATILE_KEYS}
    if isinstance(data, list):
        return [strip_volatile(v) for v in data]
    return data


def merge_runs(paths: list[str | Path], out: str | Path, *, allow_partial: bool = False) -> dict[str, Any]:
    """Join shard results into one run that gates and compares exactly like an unsharded one. A shard that
    is not whole is refused unless `allow_partial` (then what it holds is merged)."""
    if not paths:
        raise HarnessError("merge needs at least one run folder")
    runs = [(Path(p), read_run(p)) for p in paths]
    check_shard_set(runs)
    for path, run in runs if not allow_partial else ():
        check_complete(path if path.is_dir() else path.parent, run)
    configuration = runs[0][1]["configuration"]
    for path, run in runs[1:]:
        if run["configuration"] != configuration:
            raise HarnessError(f"{path}: its configuration differs from {runs[0][0]}; merge shards of one run only")
    target = RunFolder(Path(out))
    if target.run_file.exists():
        raise HarnessError(f"{out} already holds a run: merge into a new folder")
    case_files = _case_files([path for path, _ in runs])  # every one checked before the merged run exists
    first = RunHeader.from_json(runs[0][1])
    target.create(replace(first, run_id=target.path.name, shard=None,
                          merged_from=tuple(run["run_id"] for _, run in runs)), resume=False)
    for case_file in case_files:
        record = read_case_file(case_file)
        write_atomic(target.path / "cases" / case_file.name, case_file.read_bytes())  # the shard's bytes
        target.add(record, write_case=False, write_run=False)
    return target.finish()


def _case_files(shards: list[Path]) -> list[Path]:
    """Every shard's case files, each holding the case it is named for, none in two shards."""
    seen: dict[str, Path] = {}
    for path in shards:
        for case_file in sorted((path / "cases").glob("*.json")):
            if case_file.name in seen:
                raise HarnessError(f"{case_file.stem} is in both {seen[case_file.name]} and {path}: shards overlap")
            seen[case_file.name] = path
            _check_named(case_file, read_case_file(case_file))
    return [path / "cases" / name for name, path in seen.items()]


def _check_named(case_file: Path, record: CaseRecord) -> None:
    if f"{record.key}.json" != case_file.name:
        raise InputError(str(case_file), None, "case", f"holds the record of {record.key!r}, not of "
                                                      f"{case_file.stem!r} (a copied or edited file); run that "
                                                      f"shard again with --resume after deleting it")
