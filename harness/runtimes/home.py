"""A runtime's scratch home: its configuration files written from the adapter's templates and the environment
it runs with. The environment is built from nothing but PATH and the adapter's own variables, so no key or
setting of the user's leaks into a runtime under test, and no runtime reads the user's real home."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.atomic import write_atomic
from harness.errors import InputError
from harness.runtimes import node, trigger
from harness.runtimes.adapter import RuntimeAdapter, fill
from harness.runtimes.cache import cache_root

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
    filled.update(trigger_values(adapter, settings.window, settings.max_output))
    if adapter.node:
        filled["node_bin"] = str(node.bin_dir(cache_root(), adapter.node))
    switch = adapter.compaction_on if settings.compaction else adapter.compaction_off
    return {**filled, "compaction_setting": fill(switch, filled, f"{adapter.source}: compaction")}


def trigger_values(adapter: RuntimeAdapter, window: int, max_output: int) -> dict[str, str]:
    """`trigger` (tokens at which the adapter's rule compacts on a model of `window`) and each of its
    [compaction.values], as placeholders; none for an adapter that states no rule."""
    if adapter.trigger is None:
        return {}
    names = trigger.rule_names(window, max_output, adapter.assumed_window)
    names["trigger"] = trigger.evaluate(adapter.trigger, names)
    found = {"trigger": f"{round(names['trigger'])}", "assumed_window": str(names["assumed_window"])}
    for key, text in adapter.derived.items():
        try:
            found[key] = f"{trigger.evaluate(text, names):.6g}"
        except trigger.BadExpression as exc:
            raise InputError(adapter.source, None, f"compaction.values.{key}", f"at window {window}: {exc}") from None
    return found


def prepare(adapter: RuntimeAdapter, filled: dict[str, Any], workspace: Path,
            sandboxed: bool = False) -> dict[str, str]:
    """Write the config files; return the environment (PWD set: opencode reads its directory from it)."""
    for path_template, text_template in adapter.files.items():
        where = f"{adapter.source}: files"
        path = Path(fill(path_template, filled, where))
        write_atomic(path, fill(text_template, filled, where).lstrip("\n"))
    env = _passed(sandboxed)
    env.update({k: fill(v, filled, f"{adapter.source}: env.{k}") for k, v in adapter.env.items()})
    env["PWD"] = str(workspace)
    return env


def version_environment(adapter: RuntimeAdapter, home: Path, sandboxed: bool = True) -> dict[str, str]:
    """The environment of `<runtime> --version`: a drive's, as far as it is known before a drive (the adapter's
    variables that need only its home), and HOME that scratch home in any case: never the user's."""
    env = _passed(sandboxed)
    known = {"home": str(home), "workspace": str(home)}
    for name, template in adapter.env.items():
        try:
            env[name] = fill(template, known, f"{adapter.source}: env.{name}")
        except InputError:  # it needs a drive's value (the server's URL): not set for the version check
            continue
    env["HOME"] = str(home)
    return env


def _passed(sandboxed: bool) -> dict[str, str]:
    """What of the user's environment a runtime gets: PATH, locale, time zone; TMPDIR only outside the sandbox
    (inside, /tmp is the sandbox's own and the user's temporary folder is not in its view)."""
    names = [k for k in PASSED_THROUGH if not (sandboxed and k == "TMPDIR")]
    return {k: os.environ[k] for k in names if k in os.environ}
