"""Writing an imported case: `session.jsonl` and `case.toml` (DESIGN.md, "Case")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.importers.base import CaseMeta, ImportReport
from harness.session import Session, write_session

PROBE_HELP = """\
# Probes: none yet. Add one [[probe]] table per question (kinds: goal, constraint, artifact, decision, error,
# recall, update, progress, continuation); `compaction-harness cases probe-draft CASE` proposes candidates.
# planted_at = index of the message where the fact was last established (non-system messages from 0,
# compaction lines excluded). Every `all` item must appear in the answer (an item may be a list of
# alternatives); no `none` item may.
#
# [[probe]]
# id = "bug-file"
# kind = "artifact"
# question = "Which file did the agent modify to fix the bug?"
# all = ["path/to/file.py"]
# none = []
# planted_at = 23
"""


def toml_string(value: str) -> str:
    """A TOML basic string (JSON escapes are valid TOML escapes for what json.dumps emits)."""
    return json.dumps(value, ensure_ascii=False)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def case_toml(case_id: str, meta: CaseMeta, report: ImportReport | None = None, session_file: str = "session.jsonl") -> str:
    lines = [f"# Imported from {meta.source} ({meta.format}) by `compaction-harness cases import`."]
    if report is not None:
        lines += [f"#   {line}" for line in report.lines() if not line.startswith("format:")]
    lines += [
        "",
        "[case]",
        f"id = {toml_string(case_id)}",
        f"title = {toml_string(meta.title)}",
        f"pool = {toml_string(meta.pool)}",
        f"session = {toml_string(session_file)}",
        "",
        "[model]",
    ]
    if meta.model:
        lines.append(f"name = {toml_string(meta.model)}")
    lines += [f"context_window = {meta.context_window}", f"max_output_tokens = {meta.max_output_tokens}", ""]
    return "\n".join(lines) + "\n" + PROBE_HELP


def write_case(out_dir: str | Path, session: Session, report: ImportReport, meta: CaseMeta, *,
               overwrite: bool = False) -> Path:
    """Write `session.jsonl` and `case.toml` into out_dir (the case id is the folder name); returns case.toml."""
    out = Path(out_dir)
    toml_path = out / "case.toml"
    if toml_path.exists() and not overwrite:
        raise HarnessError(f"{toml_path} already exists; choose another --out or remove it first")
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_session(out / "session.jsonl", session)
        toml_path.write_text(case_toml(out.resolve().name, meta, report), encoding="utf-8")
    except OSError as exc:
        raise HarnessError(f"{out}: cannot write the case: {exc.strerror}") from None
    return toml_path
