"""Which kind of request a runtime sent: a turn (the next step is due), a compaction (the summarizer under test
answers) or a side request (a session title, a memory extraction: answered aside). Each runtime declares its
signatures as data in signatures.toml; this module reads them and matches a request against them."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.models.base import ModelRequest

SIGNATURES_FILE = Path(__file__).with_name("signatures.toml")
KINDS = ("compaction", "side", "resume")
ALL = "all"


@dataclass(frozen=True)
class Pattern:
    """Where to look and what must be there: an opening, a substring, or a header's regex."""

    where: str  # "system" | "user" | "header:<name>"
    text: str
    anywhere: bool = False

    def describe(self) -> str:
        if self.where.startswith("header:"):
            return f"header {self.where[len('header:'):]} matching {self.text!r}"
        where = "system text" if self.where == "system" else "newest user text"
        return f"{where} {'containing' if self.anywhere else 'opening with'} {self.text!r}"

    def matches(self, system: str, user: str, headers: dict[str, str]) -> bool:
        if self.where.startswith("header:"):
            value = headers.get(self.where[len("header:"):], "")
            return bool(value) and re.search(self.text, value) is not None
        found = system if self.where == "system" else user
        return self.text in found if self.anywhere else found.lstrip().startswith(self.text)


@dataclass(frozen=True)
class Signatures:
    """The patterns of one or more runtimes, by kind."""

    names: tuple[str, ...]
    patterns: dict[str, tuple[Pattern, ...]]

    def classify(self, request: ModelRequest, headers: dict[str, str]) -> str:
        """"compaction", "side" or "turn", by signature alone: what else the request carries does not decide
        (Claude Code's summarization request offers its tools and puts its prompt after the last tool result)."""
        for kind in ("compaction", "side"):
            if self._any(kind, request, headers):
                return kind
        return "turn"

    def resumes(self, request: ModelRequest, headers: dict[str, str]) -> bool:
        """The newest message is the runtime's own hand-back after compacting (no recorded output to check)."""
        last = request.messages[-1] if request.messages else None
        if last is None or last.role != "user":
            return False
        return self._any("resume", request, headers, last.content)

    def _any(self, kind: str, request: ModelRequest, headers: dict[str, str], user: str | None = None) -> bool:
        system = request.system or ""
        user = newest_user_text(request) if user is None else user
        lowered = {k.lower(): v for k, v in headers.items()}
        return any(p.matches(system, user, lowered) for p in self.patterns.get(kind, ()))


    def describe(self, kind: str = "compaction") -> str:
        """The `kind` patterns a request was tried against, as a drift error names them."""
        found = self.patterns.get(kind, ())
        return "; ".join(p.describe() for p in found) if found else "none declared"


def newest_user_text(request: ModelRequest) -> str:
    users = [m for m in request.messages if m.role == "user"]
    return users[-1].content if users else ""


def runtime_names(path: Path = SIGNATURES_FILE) -> tuple[str, ...]:
    return tuple(_load(path))


def load_signatures(name: str = ALL, path: Path = SIGNATURES_FILE) -> Signatures:
    """The signatures of runtime `name`, or of every runtime declared (`all`, for a server that does not know
    which runtime will call it)."""
    table = _load(path)
    if name != ALL and name not in table:
        raise HarnessError(f"runtime signatures {name!r}: unknown; choose {ALL} or one of {', '.join(table)}")
    chosen = tuple(table) if name == ALL else (name,)
    return signatures_from({runtime: table[runtime] for runtime in chosen}, str(path))


def signatures_from(tables: dict[str, dict[str, Any]], where: str) -> Signatures:
    """Signatures from tables in this file's format, one per runtime (a runtime adapter carries its own)."""
    patterns: dict[str, list[Pattern]] = {kind: [] for kind in KINDS}
    for runtime, table in tables.items():
        for kind in KINDS:
            patterns[kind] += _patterns(table.get(kind) or {}, f"{where}: {runtime}.{kind}")
    return Signatures(tuple(tables), {kind: tuple(found) for kind, found in patterns.items()})


def _load(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise HarnessError(f"{path}: cannot read the runtime signatures: {exc}") from None


def _patterns(table: dict[str, Any], where: str) -> list[Pattern]:
    found: list[Pattern] = []
    for place in ("system", "user"):
        for entry in table.get(place) or ():
            if isinstance(entry, dict):
                found.append(Pattern(place, str(entry.get("contains", "")), anywhere=True))
            else:
                found.append(Pattern(place, str(entry)))
    for header in table.get("headers") or ():
        if not isinstance(header, dict) or "name" not in header or "pattern" not in header:
            raise HarnessError(f"{where}.headers: each entry needs a name and a pattern")
        found.append(Pattern(f"header:{str(header['name']).lower()}", str(header["pattern"])))
    unknown = set(table) - {"system", "user", "headers"}
    if unknown:
        raise HarnessError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (system, user, headers)")
    return [p for p in found if p.text]
