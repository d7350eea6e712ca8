"""The transcripts `calibrate` reads: any importable one, a session.jsonl under any name or a case folder;
and the cache TTL the runtime chose, from the raw transcript's 5m/1h split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.input_file import gunzip, read_input
from harness.session import Session


def recorded_ttl_of(path: str) -> str | None:
    """The TTL the runtime's writes went to, from the raw transcript's 5m/1h split (Claude Code records it
    in usage.cache_creation; the canonical session keeps only the totals): the one most tokens went to."""
    split = {"5m": 0, "1h": 0}
    try:
        data = read_input(path, "a transcript", "cannot read transcript")
        text = (gunzip(data, path, "transcript") if path.endswith(".gz") else data).decode("utf-8", "replace")
    except InputError:  # the transcript's own reader names what is wrong with it
        return None
    for line in text.splitlines():
        creation = _creation(line)
        split["5m"] += int(creation.get("ephemeral_5m_input_tokens") or 0)
        split["1h"] += int(creation.get("ephemeral_1h_input_tokens") or 0)
    if not any(split.values()):
        return None
    return max(split, key=lambda k: split[k])


def _creation(line: str) -> dict[str, Any]:
    try:
        entry = json.loads(line)
    except json.JSONDecodeError:
        return {}
    message = entry.get("message") if isinstance(entry, dict) else None
    usage = message.get("usage") if isinstance(message, dict) else None
    creation = usage.get("cache_creation") if isinstance(usage, dict) else None
    return creation if isinstance(creation, dict) else {}


def _canonical(path: Path) -> bool:
    """A session.jsonl under another name: its first line is a message with a top-level role."""
    if not path.is_file():  # a FIFO or a device is not sniffed (opening one could wait for ever); its reader refuses it
        return False
    try:
        with open(path, encoding="utf-8") as handle:
            first = next((line for line in handle if line.strip()), "")
        record = json.loads(first)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(record, dict) and "role" in record and "type" not in record


def load(path: str) -> tuple[Session, str]:
    """A session.jsonl(.gz), a case folder or any transcript the importers read; and the model it names."""
    from harness.session import read_session

    p = Path(path)
    if p.is_dir():
        p = next((p / name for name in ("session.jsonl", "session.jsonl.gz") if (p / name).exists()), p)
    if p.name in ("session.jsonl", "session.jsonl.gz") or _canonical(p):
        return read_session(p), "claude"
    from harness.importers import import_transcript

    session, report, meta = import_transcript(str(p), window=200_000)  # the window plays no part here
    return session, meta.model or "claude"
