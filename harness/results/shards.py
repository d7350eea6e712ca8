"""A shard set to merge: every shard of one `run --shard I/N` split, each once, or unsharded runs only,
each of them whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.results.claim import being_written

PARTIAL_HINT = "pass --allow-partial to merge what is there"


def check_complete(path: Path, run: dict[str, Any]) -> None:
    """Refuse a run that is not whole, naming what is missing: a shard still running or killed midway, a
    case file deleted, a `cases/` folder replaced by a file. Merged, it would gate as if those cases passed
    nothing and failed nothing."""
    if being_written(path):
        raise HarnessError(f"{path}: a running process is still writing this run; wait for it to finish, or "
                           f"{PARTIAL_HINT}")
    if not run.get("finished"):
        raise HarnessError(f"{path}: the run did not finish (killed or interrupted; {len(run['cases'])} case(s) "
                           f"written): `run --resume` it, or {PARTIAL_HINT}")
    cases = path / "cases"
    if not cases.is_dir():
        raise HarnessError(f"{cases}: not a folder of case files (the run is damaged); {PARTIAL_HINT}")
    missing = [key for key in run["cases"] if not (cases / f"{key}.json").is_file()]
    if missing:
        raise HarnessError(f"{cases}: {len(missing)} case file(s) of run.json missing (first: {missing[0]}.json); "
                           f"{PARTIAL_HINT}")


def check_shard_set(runs: list[tuple[Path, dict[str, Any]]]) -> None:
    """Refuse a partial or mixed shard set, naming what is missing: a merge of 2 of 3 shards would gate and
    compare as if the third shard's cases did not exist."""
    shards = [(path, run.get("shard")) for path, run in runs]
    sharded = [(path, shard) for path, shard in shards if shard]
    if not sharded:
        return
    unsharded = [str(path) for path, shard in shards if not shard]
    if unsharded:
        raise HarnessError(f"{unsharded[0]} is not a shard, but the other runs are: merge the shards of one run")
    counts = {int(shard.partition("/")[2]) for _, shard in sharded}
    if len(counts) != 1:
        raise HarnessError(f"the runs come from different splits ({', '.join(sorted({shard for _, shard in sharded}))}): "
                           f"merge the shards of one run")
    count = counts.pop()
    seen: dict[int, Path] = {}
    for path, shard in sharded:
        index = int(shard.partition("/")[0])
        if index in seen:
            raise HarnessError(f"shard {shard} is given twice ({seen[index]} and {path}): shards overlap")
        seen[index] = path
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in seen]
    if missing:
        raise HarnessError(f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing: merge needs all "
                           f"{count} shards of the run (got {', '.join(f'{i}/{count}' for i in sorted(seen))})")
