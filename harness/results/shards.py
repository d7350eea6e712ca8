"""A shard set to merge: every shard of one `run --shard I/N` split, each once, or unsharded runs only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.errors import HarnessError


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
