"""The scratch workspace a replay runs in: each recorded output in `.replay/<id>.txt`, byte for byte, and the
case's own files (a `files/` folder beside case.toml) when it has them.

A case is data from anyone's transcript, and a runtime reads some paths of its working folder as configuration
or code (pi's `.pi/extensions/*.ts`, opencode's `opencode.json` MCP servers, git's hooks): those are left out of
the copy, as are links (a link inside the case is copied as the file it names; one out of the case, or to a
folder, is never followed) and anything but plain files and folders. What was left out is returned, each with
why, for the drive's record. Copied files lose their modes: nothing in the workspace is executable."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterable

from harness.atomic import write_atomic
from harness.errors import HarnessError
from harness.scripted.steps import Script

CASE_FILES = "files"
# Every path a known runtime reads from its working folder as configuration, extension, hook, MCP entry or
# instructions (shared/RUNTIMES.md; each shipped adapter's [workspace] config lists its own). Refused for every
# runtime: a case written for one may be driven by another, and runtimes read each other's files (opencode
# reads .claude/, pi CLAUDE.md). Instruction files (AGENTS.md and kin) run nothing, but they become part of the
# runtime's own prompt: what is measured is the runtime's prompt, not one a case supplies, and a real summarizer
# under test would read them. A trailing "/" names a folder; names match any path component, in any case.
RUNTIME_CONFIG = (
    ".git/",  # hooks and config (core.fsmonitor, core.hooksPath) run commands for any runtime that runs git
    ".pi/", ".agents/", "AGENTS.md", "AGENTS.override.md",
    ".codex/",
    "opencode.json", "opencode.jsonc", ".opencode/",
    ".claude/", ".mcp.json", "CLAUDE.md", "CLAUDE.local.md",
    ".gemini/", "GEMINI.md",
    ".qwen/", "QWEN.md",
    ".env",  # Inspect (python-dotenv) reads it from the folder it starts in and above: keys, base URLs, settings
)


def write_workspace(script: Script, workspace: str | Path, case_dir: str | Path | None = None,
                    refused: Iterable[str] = RUNTIME_CONFIG) -> Path:
    """Write the fixtures into `workspace` (created if absent) and return it; see `prepare_workspace`."""
    return prepare_workspace(script, workspace, case_dir, refused)[0]


def prepare_workspace(script: Script, workspace: str | Path, case_dir: str | Path | None = None,
                      refused: Iterable[str] = RUNTIME_CONFIG) -> tuple[Path, tuple[str, ...]]:
    """The workspace, and what of the case's files was left out (`path: why`). Existing files of the same name
    are replaced: a workspace is scratch, rewritten for every replay."""
    root = Path(workspace)
    left_out: list[str] = []
    try:
        root.mkdir(parents=True, exist_ok=True)
        if case_dir is not None:
            left_out = copy_case_files(Path(case_dir) / CASE_FILES, root, refused)
        for call in script.calls:
            write_atomic(root / call.fixture, call.output.encode("utf-8"))  # bytes: no newline translation
    except OSError as exc:
        raise HarnessError(f"workspace {root}: cannot write the fixtures: {exc.strerror or exc}") from None
    return root, tuple(left_out)


def copy_case_files(source: Path, root: Path, refused: Iterable[str] = RUNTIME_CONFIG) -> list[str]:
    """Copy the case's files into `root`, never following a link out of `source`; returns what was left out."""
    if source.is_symlink():
        return [f"{CASE_FILES}/: a link (to {os.readlink(source)}), not followed"]
    if not source.is_dir():
        return []
    names = {name.rstrip("/").lower() for name in refused}
    inside = source.resolve()
    left_out: list[str] = []
    for folder, dirs, files in os.walk(source):
        here = Path(folder)
        for name in sorted(dirs):  # os.walk lists a link to a folder here; it is never descended into
            path = here / name
            why = _refused(name, names) or ("a link to a folder, not followed" if path.is_symlink() else None)
            if why:
                dirs.remove(name)
                left_out.append(f"{path.relative_to(source)}/: {why}")
            else:
                (root / path.relative_to(source)).mkdir(exist_ok=True)
        for name in sorted(files):
            path = here / name
            why = _refused(name, names) or _copy(path, root / path.relative_to(source), inside)
            if why:
                left_out.append(f"{path.relative_to(source)}: {why}")
    return left_out


def _refused(name: str, names: set[str]) -> str | None:
    return "a runtime reads it as configuration or code" if name.lower() in names else None


def _copy(path: Path, target: Path, inside: Path) -> str | None:
    """Copy one entry as a plain file; the reason when it is not copied."""
    if path.is_symlink():
        real = path.resolve()
        if not real.is_relative_to(inside):
            return f"a link out of the case (to {os.readlink(path)}), not followed"
        if not real.is_file():
            return "a link to something other than a file, not followed"
        path = real
    elif not path.is_file():
        return "not a plain file"
    if target.is_symlink() or target.exists():
        target.unlink()
    shutil.copyfile(path, target, follow_symlinks=False)
    return None
