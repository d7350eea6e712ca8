"""The `real` pool, checked against its ground: each case's raw Claude Code transcript in ../shared/real-sessions.

A real case ships `session.jsonl.gz` (imported), the repository's `LICENSE` and a `SOURCE.md` holding the
SOURCES.md header and the case's row (file, repo, commit, blob, licence). Every probe's `note` reads
`transcript line N: <what establishes it>`; N is a 1-based line of the raw file. For each probe:
- the raw line exists, is conversation (not a compact summary or boundary) and comes before the boundary of the
  compaction it is asked at, and every `all` item (one of its alternatives) is in its visible text (text, tool
  calls, tool results: never thinking);
- in the shipped session the items are in the messages up to `planted_at`, and `planted_at` is before the
  compaction point (and, where messages carry `meta.source_line`, it is the message the note's line became);
- its accept/reject self-tests hold.
The raw checks skip, saying why, when ../shared is absent (a clone without the data)."""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from harness.cases import Case, Probe, discover
from harness.cli.cases import case_problems
from harness.matching import Haystack, contains
from harness.probes import example_problems
from harness.session import Session, message_text

ROOT = Path(__file__).parents[1]
SHARED = ROOT.parent / "shared" / "real-sessions"
NOTE = re.compile(r"^transcript line (\d+): \S")
MIN_PROBES_PER_POINT = 10
MIN_KINDS_PER_POINT = 5
MIN_EXAMPLES = 3

REAL = [case for case in discover(ROOT / "cases") if case.pool == "real"]
PROBES = [(case, probe) for case in REAL for probe in case.probes]


def _ids(item: Any) -> str:
    return item.id if isinstance(item, (Case, Probe)) else str(item)


cases = pytest.mark.parametrize("case", REAL, ids=_ids)
probes = pytest.mark.parametrize("case,probe", PROBES, ids=[f"{c.id}/{p.id}" for c, p in PROBES])


# ---------------------------------------------------------------------------------------------
# provenance: SOURCE.md's row and the raw file it names


def source_row(case: Case) -> dict[str, str]:
    """The SOURCES.md row copied into the case's SOURCE.md, by column heading."""
    rows = [line for line in (case.directory / "SOURCE.md").read_text().splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    data = [r for r in rows[1:] if ".jsonl`" in r]
    assert len(data) == 1, f"{case.id}: SOURCE.md must hold exactly one SOURCES.md row"
    cells = [cell.strip().strip("`") for cell in data[0].strip("|").split("|")]
    return dict(zip(header, cells))


def raw_path(case: Case) -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the raw transcripts are not part of this checkout")
    return SHARED / source_row(case)["file"]


@lru_cache(maxsize=4)
def raw_entries(path: Path) -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(line) if line.strip() else {} for line in path.read_text().splitlines())


def boundary_lines(path: Path) -> list[int]:
    """1-based raw lines of the `compact_boundary` entries, in file order."""
    return [n for n, e in enumerate(raw_entries(path), 1) if e.get("subtype") == "compact_boundary"]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)] if value is not None else []


def _block_text(block: dict[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind == "text":
        return [block.get("text", "")]
    if kind == "tool_use":
        return [block.get("name", ""), *_strings(block.get("input"))]
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            return [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return _strings(content)
    return []  # thinking and redacted thinking are never visible conversation


def visible_text(entry: dict[str, Any]) -> str:
    """What the line says in the conversation: user and assistant text, tool calls and results."""
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    return "\n".join(s for block in content or () if isinstance(block, dict) for s in _block_text(block))


def note_line(probe: Probe) -> int:
    found = NOTE.match(probe.note or "")
    assert found, f"{probe.id}: note must read 'transcript line N: <what establishes it>', got {probe.note!r}"
    return int(found.group(1))


def point_number(probe: Probe) -> int:
    assert probe.at.startswith("compaction:"), f"{probe.id}: a real probe is asked at a compaction:N point"
    return int(probe.at.split(":")[1])


def _git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@cases
def test_case_ships_its_provenance_and_licence(case: Case) -> None:
    row = source_row(case)
    assert {"file", "repo", "commit", "blob", "license"} <= row.keys()
    assert case.session_file == "session.jsonl.gz" and (case.directory / "session.jsonl.gz").is_file()
    licence = case.directory / "LICENSE"
    assert licence.is_file() and row["license"].split()[0] in (case.directory / "SOURCE.md").read_text()
    raw = raw_path(case)
    assert _git_blob_id(raw.read_bytes()) == row["blob"], f"{raw} is not blob {row['blob']}"
    assert licence.read_bytes() == (raw.parent / "LICENSE").read_bytes()


@cases
def test_session_holds_the_recorded_compactions(case: Case) -> None:
    """The shipped session keeps every real compaction of the transcript, each with its real summary."""
    raw = raw_path(case)
    entries = raw_entries(raw)
    lines = boundary_lines(raw)
    assert len(case.session.compactions) == len(lines)
    for record, line in zip(case.session.compactions, lines):
        summary = visible_text(entries[line])  # the isCompactSummary entry right after the boundary
        assert entries[line].get("isCompactSummary") and record.content.strip() == summary.strip()


@cases
def test_every_real_compaction_point_has_probes_across_kinds(case: Case) -> None:
    count = len(case.session.compactions)
    assert count >= 1 and all(1 <= point_number(p) <= count for p in case.probes)
    for number in range(1, count + 1):
        at = [p for p in case.probes if p.at == f"compaction:{number}"]
        assert len(at) >= MIN_PROBES_PER_POINT, f"compaction:{number} has {len(at)} probes"
        assert len({p.kind for p in at}) >= MIN_KINDS_PER_POINT, f"compaction:{number}: too few kinds"


@cases
def test_cases_validate_is_clean(case: Case) -> None:
    assert case_problems(case) == []


# ---------------------------------------------------------------------------------------------
# each probe against the raw transcript and the shipped session


@probes
def test_probe_fact_is_on_its_raw_line(case: Case, probe: Probe) -> None:
    raw = raw_path(case)
    entries = raw_entries(raw)
    line = note_line(probe)
    assert 1 <= line <= len(entries), f"{probe.id}: line {line} is outside {raw.name}"
    entry = entries[line - 1]
    assert entry.get("type") in ("user", "assistant") and not entry.get("isCompactSummary"), (
        f"{probe.id}: line {line} is not conversation (a summary or bookkeeping entry)")
    assert line < boundary_lines(raw)[point_number(probe) - 1], f"{probe.id}: line {line} is after {probe.at}"
    assert probe.all, f"{probe.id}: a real probe names its expected facts in `all`"
    text = Haystack(visible_text(entry))
    missing = [item for item in probe.all if not any(contains(text, a) for a in item)]
    assert not missing, f"{probe.id}: {missing} not in the visible text of line {line}"


def _compaction_position(session: Session, probe: Probe) -> int:
    return session.compactions[point_number(probe) - 1].position


@probes
def test_probe_fact_is_in_the_shipped_session_before_its_point(case: Case, probe: Probe) -> None:
    session = case.session
    position = _compaction_position(session, probe)
    assert probe.planted_at < position, f"{probe.id}: planted_at {probe.planted_at} is not before {probe.at}"
    text = Haystack("\n".join(message_text(m) for m in session.messages[:probe.planted_at + 1]))
    missing = [item for item in probe.all if not any(contains(text, a) for a in item)]
    assert not missing, f"{probe.id}: {missing} not in messages 0..{probe.planted_at}"


def _source_lines(session: Session) -> list[int | None]:
    """Each message's first raw line, from `meta.source_line` (an int, or a list for merged lines)."""
    lines: list[int | None] = []
    for message in session.messages:
        value = (message.meta or {}).get("source_line")
        lines.append(min(value) if isinstance(value, list) and value else value)
    return lines


@probes
def test_planted_at_is_the_message_of_the_note_line(case: Case, probe: Probe) -> None:
    lines = _source_lines(case.session)
    if not any(lines):
        pytest.skip("the session's messages carry no meta.source_line (imported before it existed)")
    line = note_line(probe)
    # the message a raw line became: the last one that starts at or before it (merged assistant lines)
    index = max(i for i, start in enumerate(lines) if start is not None and start <= line)
    assert index == probe.planted_at, f"{probe.id}: transcript line {line} is message {index}, not {probe.planted_at}"


@probes
def test_probe_self_tests_hold(case: Case, probe: Probe) -> None:
    assert len(probe.accept) >= MIN_EXAMPLES and len(probe.reject) >= MIN_EXAMPLES
    assert example_problems(probe) == []
