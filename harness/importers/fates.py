"""What became of each entry of a single-document transcript (a message, a trajectory step), for the import
report's account of the whole file (issue 21, item 5).

The importer opens each source entry on the builder (`SessionBuilder.entry`); the items it feeds are tagged
with that entry, and once the session is built an entry's fate follows from its items: kept when one of them is
in the session (a tool result only when it found its call), skipped otherwise. An importer that knows the reason
an entry is skipped names it (`SessionBuilder.skip_entry`). Claude Code and Codex account per line themselves.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Hashable

KEPT, TAGGED, REDACTED, SYSTEM = "kept", "kept, tagged as noise", "kept, secret redacted", "kept (system)"
NOISE = "skipped as noise"
ORPHAN = "skipped (tool result with no matching call)"
NOTHING_BEFORE = "skipped (compaction record with nothing before it)"


@dataclass
class EntryLedger:
    """Entries in source order, what each was told (a skip reason, the system prompt) and what it kept."""

    order: list[Hashable] = field(default_factory=list)
    seen: set[Hashable] = field(default_factory=set)
    named: dict[Hashable, str] = field(default_factory=dict)  # fates given outright by the importer
    redacted: set[Hashable] = field(default_factory=set)
    kept: dict[Hashable, bool] = field(default_factory=dict)  # entry -> some item of it is in the session
    tagged: set[Hashable] = field(default_factory=set)  # entries kept as a message tagged as noise
    dropped: dict[Hashable, str] = field(default_factory=dict)  # entry -> why its (only) items were dropped

    def open(self, key: Hashable) -> None:
        if key in self.seen:
            raise ValueError(f"source entry {key!r} opened twice")  # an importer bug: each entry is counted once
        self.seen.add(key)
        self.order.append(key)

    def item(self, key: Hashable | None, in_session: bool, *, tagged: bool = False, why: str = ORPHAN) -> None:
        """One item of entry `key` after the build: in the session or dropped (`why`)."""
        if key is None:
            return
        if in_session:
            self.kept[key] = True
            if tagged:
                self.tagged.add(key)
        elif not self.kept.get(key):
            self.kept[key] = False
            self.dropped[key] = why

    def fates(self) -> Counter:
        out: Counter = Counter()
        for key in self.order:
            out[self._fate(key)] += 1
        return out

    def _fate(self, key: Hashable) -> str:
        if key in self.named:
            return self.named[key]
        if self.kept.get(key):
            if key in self.tagged:
                return TAGGED
            return REDACTED if key in self.redacted else KEPT
        return self.dropped.get(key, NOISE)  # nothing of it was fed: empty, legacy or not mapped
