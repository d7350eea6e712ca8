"""The scratch workspace a replay runs in: each recorded output in `.replay/<id>.txt`, byte for byte, and the
case's own files (a `files/` folder beside case.toml) when it has them."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.errors import HarnessError
from harness.scripted.steps import Script

CASE_FILES = "files"


def write_workspace(script: Script, workspace: str | Path, case_dir: str | Path | None = None) -> Path:
    """Write the fixtures into `workspace` (created if absent) and return it. Existing files of the same name
    are replaced: a workspace is scratch, rewritten for every replay."""
    root = Path(workspace)
    try:
        root.mkdir(parents=True, exist_ok=True)
        if case_dir is not None and (Path(case_dir) / CASE_FILES).is_dir():
            shutil.copytree(Path(case_dir) / CASE_FILES, root, dirs_exist_ok=True)
        for call in script.calls:
            path = root / call.fixture
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(call.output.encode("utf-8"))  # bytes: no newline translation, no encoding guess
    except OSError as exc:
        raise HarnessError(f"workspace {root}: cannot write the fixtures: {exc.strerror or exc}") from None
    return root
