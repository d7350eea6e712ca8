"""A runtime's scratch home: its configuration files written from the adapter's templates and the environment
it runs with. The environment is built from nothing but PATH and the adapter's own variables, so no key or
setting of the user's leaks into a runtime under test, and no runtime reads the user's real home."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.atomic import write_atomic
from harness.runtimes.adapter import RuntimeAdapter, fill

PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")


@dataclass(frozen=True)
class Settings:
    """What the case and the run decide about one runtime session."""

    base_url: str
    model: str
    window: int
    max_output: int
    compaction: bool = True
    values: tuple[tuple[str, str], ...] = ()  # the adapter's settings with the run's over them


def values(adapter: RuntimeAdapter, binary: Path, home: Path, workspace: Path, settings: Settings) -> dict[str, Any]:
    filled = {**dict(settings.values), "bin": str(binary), "home": str(home), "workspace": str(workspace),
              "base_url": settings.base_url, "model": settings.model, "window": settings.window,
              "max_output": settings.max_output, "adapter_dir": str(Path(adapter.source).parent)}
    if adapter.assumed_window:
        filled["trigger_share"] = f"{adapter.trigger_at * settings.window / adapter.assumed_window:.6g}"
    switch = adapter.compaction_on if settings.compaction else adapter.compaction_off
    return {**filled, "compaction_setting": fill(switch, filled, f"{adapter.source}: compaction")}


def prepare(adapter: RuntimeAdapter, filled: dict[str, Any], workspace: Path) -> dict[str, str]:
    """Write the config files; return the environment (PWD set: opencode reads its directory from it)."""
    for path_template, text_template in adapter.files.items():
        where = f"{adapter.source}: files"
        path = Path(fill(path_template, filled, where))
        write_atomic(path, fill(text_template, filled, where).lstrip("\n"))
    env = {k: os.environ[k] for k in PASSED_THROUGH if k in os.environ}
    env.update({k: fill(v, filled, f"{adapter.source}: env.{k}") for k, v in adapter.env.items()})
    env["PWD"] = str(workspace)
    return env
