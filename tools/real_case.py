"""Build (or rebuild) a `real` case from a raw Claude Code transcript in ../shared/real-sessions.

    .venv/bin/python tools/real_case.py entireio__cli/72-0c20f08988-0.jsonl real-entireio-7200 \
        [--probes FILE.toml] [--title T] [--notes N] [--max-output 32000]

It imports the transcript with the harness's own importer, writes `session.jsonl.gz`, copies the repository's
LICENSE, writes SOURCE.md (the SOURCES.md header and the file's row) and writes case.toml with the probes of
FILE.toml (default: the case's existing case.toml). Each probe's `note` names its raw transcript line
("transcript line N: ..."); its `planted_at` is recomputed here as the message that line became, so the probes
follow the importer when it changes: through `meta.source_line` where the importer writes it, otherwise by the
ids the line carries (assistant `message.id`, `tool_use_id`, the user entry's timestamp)."""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.atomic import write_atomic  # noqa: E402
from harness.cases import case_toml  # noqa: E402
from harness.importers import import_transcript  # noqa: E402
from harness.session import Session, dumps_session  # noqa: E402

SHARED = ROOT.parent / "shared" / "real-sessions"
NOTE = re.compile(r"^transcript line (\d+): ")
PROBE_FIELDS = ("id", "kind", "question", "all", "none", "regex", "planted_at", "at", "rubric", "accept", "reject",
                "note")


def source_rows(file: str) -> tuple[list[str], str]:
    """SOURCES.md's table header (heading and rule) and the row of `file`."""
    lines = (SHARED / "SOURCES.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| file |"))
    row = next(line for line in lines if line.startswith(f"| `{file}` |"))
    return lines[start:start + 2], row


def source_md(file: str, licence: str) -> str:
    header, row = source_rows(file)
    repo = file.split("/")[0].replace("__", "/")
    return "\n".join([
        f"# Source of this case", "",
        f"`session.jsonl.gz` is imported (by `tools/real_case.py`, with `compaction-harness`'s claude-code importer)",
        f"from a native Claude Code transcript that the Entire CLI committed to the public repository {repo}",
        "(branch `entire/checkpoints/v1`); the raw file is `../shared/real-sessions/" + file + "` in this project's",
        "workspace, checked against the blob id below. Its row in ../shared/real-sessions/SOURCES.md:", "",
        *header, row, "",
        f"Licence: {licence}; the repository's `LICENSE` is copied beside this file unchanged.", ""])


def raw_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) if line.strip() else {} for line in path.read_text().splitlines()]


def _by_ids(session: Session, entry: dict[str, Any]) -> int | None:
    """The message a raw entry became, found by the ids it carries (for sessions without meta.source_line)."""
    message = entry.get("message") or {}
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    if entry.get("type") == "assistant":
        ids = [i for i, m in enumerate(session.messages) if m.role == "assistant" and m.id == message.get("id")]
        return ids[0] if ids else None
    results = [b.get("tool_use_id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        ids = [i for i, m in enumerate(session.messages) if m.role == "tool" and m.tool_call_id == results[0]]
        return ids[0] if ids else None
    ids = [i for i, m in enumerate(session.messages) if m.role == "user" and m.ts == entry.get("timestamp")]
    return ids[0] if len(ids) == 1 else None


def message_of_line(session: Session, entries: list[dict[str, Any]], line: int) -> int:
    starts = [(m.meta or {}).get("source_line") for m in session.messages]
    starts = [min(s) if isinstance(s, list) and s else s for s in starts]
    if any(starts):
        return max(i for i, s in enumerate(starts) if s is not None and s <= line)
    index = _by_ids(session, entries[line - 1])
    if index is None:
        raise SystemExit(f"transcript line {line}: no imported message carries its ids")
    return index


def probes_of(path: Path) -> list[dict[str, Any]]:
    return tomllib.loads(path.read_text()).get("probe", [])


def placed(probe: dict[str, Any], session: Session, entries: list[dict[str, Any]]) -> dict[str, Any]:
    found = NOTE.match(probe.get("note", ""))
    if not found:
        raise SystemExit(f"probe {probe.get('id')}: note must start with 'transcript line N: '")
    probe = {**probe, "planted_at": message_of_line(session, entries, int(found.group(1)))}
    return {key: probe[key] for key in PROBE_FIELDS if probe.get(key) not in (None, [])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", help="path under ../shared/real-sessions, e.g. entireio__cli/72-0c20f08988-0.jsonl")
    parser.add_argument("case_id")
    parser.add_argument("--probes", type=Path, help="a TOML file of [[probe]] tables (default: the case.toml)")
    parser.add_argument("--title")
    parser.add_argument("--notes")
    parser.add_argument("--window", type=int, default=200000)
    parser.add_argument("--max-output", type=int, default=32000)
    args = parser.parse_args(argv)
    raw = SHARED / args.file
    out = ROOT / "cases" / args.case_id
    old = tomllib.loads((out / "case.toml").read_text()) if (out / "case.toml").exists() else {}
    probes = probes_of(args.probes) if args.probes else old.get("probe", [])
    session, report, meta = import_transcript(raw, "claude-code", window=args.window)
    entries = raw_entries(raw)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "session.jsonl.gz", gzip.compress(dumps_session(session).encode(), mtime=0))
    shutil.copyfile(raw.parent / "LICENSE", out / "LICENSE")
    _, row = source_rows(args.file)
    licence = [c.strip() for c in row.strip("|").split("|")][6]
    write_atomic(out / "SOURCE.md", source_md(args.file, licence))
    comments = [f"Imported from ../shared/real-sessions/{args.file} by tools/real_case.py (claude-code importer).",
                *(f"  {line}" for line in report.lines() if not line.startswith("format:")),
                "planted_at is recomputed from each probe's note (its transcript line) by tools/real_case.py."]
    case = old.get("case", {})
    text = case_toml(case_id=args.case_id, title=args.title or case.get("title") or meta.title, pool="real",
                     session_file="session.jsonl.gz", notes=args.notes or case.get("notes"),
                     model_name=old.get("model", {}).get("name") or meta.model, context_window=args.window, max_output_tokens=args.max_output,
                     comments=comments, probes=[placed(p, session, entries) for p in probes])
    write_atomic(out / "case.toml", text)
    print(f"{out}: {len(session.messages)} messages, {len(session.compactions)} compactions, {len(probes)} probes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
