"""Cases: `cases/<id>/case.toml` + `session.jsonl`, with the probes asked of the compacted context."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, InputError
from harness.session import Session, read_session

POOLS = ("desktop", "long", "autonomous", "edge")
KINDS = ("goal", "constraint", "artifact", "decision", "error", "recall", "update", "progress", "continuation")
POINT = re.compile(r"^(end|compaction:[1-9]\d*|message:\d+)$")


@dataclass(frozen=True)
class Probe:
    id: str
    kind: str
    question: str
    all: tuple[tuple[str, ...], ...]  # each item: its alternatives
    none: tuple[str, ...] = ()
    regex: str | None = None
    planted_at: int = 0
    rubric: str | None = None
    at: str = "end"
    draft: bool = False


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    pool: str
    directory: Path
    session_file: str
    context_window: int
    max_output_tokens: int
    model_name: str | None
    probes: tuple[Probe, ...]
    settings: dict[str, Any] = field(default_factory=dict)  # optional [policy] overrides

    @cached_property
    def session(self) -> Session:
        return read_session(self.directory / self.session_file)

    @property
    def points(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.at for p in self.probes)) or ("end",)


def load_case(directory: str | Path) -> Case:
    directory = Path(directory)
    path = directory / "case.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError:
        raise HarnessError(f"{path}: no case.toml here (a case is a folder with case.toml and session.jsonl)") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(str(path), None, None, f"bad TOML: {exc}") from None
    where = str(path)
    case = _table(data, "case", where)
    model = _table(data, "model", where)
    case_id = _get(case, "id", str, where, "case")
    if case_id != directory.name:
        raise InputError(where, None, "case.id", f"{case_id!r} must equal the folder name {directory.name!r}")
    pool = _get(case, "pool", str, where, "case")
    if pool not in POOLS:
        raise InputError(where, None, "case.pool", f"{pool!r} is not one of {', '.join(POOLS)}")
    probes = tuple(_probe(raw, where, n) for n, raw in enumerate(data.get("probe", []), start=1))
    seen: set[str] = set()
    for probe in probes:
        if probe.id in seen:
            raise InputError(where, None, f"probe {probe.id}", "duplicate probe id")
        seen.add(probe.id)
    return Case(
        id=case_id,
        title=case.get("title", case_id),
        pool=pool,
        directory=directory,
        session_file=case.get("session", "session.jsonl"),
        context_window=_get(model, "context_window", int, where, "model"),
        max_output_tokens=model.get("max_output_tokens", 16384),
        model_name=model.get("name"),
        probes=probes,
        settings=dict(data.get("policy", {})),
    )


def validate_case(case: Case) -> list[str]:
    """Checks that need the session: it parses, and each probe's planted_at is inside it."""
    session = case.session
    problems = []
    for probe in case.probes:
        if not 0 <= probe.planted_at < len(session.messages):
            problems.append(f"{case.directory / 'case.toml'}: probe {probe.id}: planted_at {probe.planted_at} "
                            f"is outside the session's {len(session.messages)} messages")
        if probe.at.startswith("message:") and int(probe.at.split(":")[1]) > len(session.messages):
            problems.append(f"{case.directory / 'case.toml'}: probe {probe.id}: at {probe.at} is past the end")
    return problems


def discover(root: str | Path = "cases", selection: list[str] | None = None) -> list[Case]:
    """Every case under `root`, or those named in `selection` (ids, folders, or glob patterns)."""
    root = Path(root)
    if not root.is_dir():
        raise HarnessError(f"{root}: no cases folder (pass --cases-dir or run from the project folder)")
    folders = sorted(p.parent for p in root.glob("*/case.toml"))
    if selection:
        chosen = []
        for name in selection:
            given = Path(name)
            if (given / "case.toml").exists():
                chosen.append(given)
                continue
            matches = [f for f in folders if f.match(name) or f.name == name]
            if not matches:
                raise HarnessError(f"no case matches {name!r} under {root}")
            chosen.extend(matches)
        folders = list(dict.fromkeys(chosen))
    return [load_case(f) for f in folders]


def _table(data: dict, name: str, where: str) -> dict:
    table = data.get(name)
    if not isinstance(table, dict):
        raise InputError(where, None, f"[{name}]", "missing table")
    return table


def _get(table: dict, key: str, kind: type, where: str, prefix: str):
    value = table.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(where, None, f"{prefix}.{key}", f"required, must be {kind.__name__}")
    return value


def _probe(raw: dict, where: str, number: int) -> Probe:
    name = f"probe {raw.get('id', f'#{number}')}"

    def fail(problem: str):
        raise InputError(where, None, name, problem)

    if not isinstance(raw.get("id"), str) or not raw["id"]:
        fail("needs an id")
    if raw.get("kind") not in KINDS:
        fail(f"kind {raw.get('kind')!r} is not one of {', '.join(KINDS)}")
    if not isinstance(raw.get("question"), str) or not raw["question"].strip():
        fail("needs a question")
    items = raw.get("all", [])
    if not isinstance(items, list) or not all(_is_item(i) for i in items):
        fail("`all` must be a list of strings or lists of alternative strings")
    none = raw.get("none", [])
    if not isinstance(none, list) or not all(isinstance(i, str) and i for i in none):
        fail("`none` must be a list of strings")
    regex = raw.get("regex")
    if regex is not None:
        try:
            re.compile(regex)
        except (re.error, TypeError) as exc:
            fail(f"bad regex: {exc}")
    if not items and regex is None:
        fail("needs `all` or `regex`: something to check the answer against")
    planted = raw.get("planted_at")
    if not isinstance(planted, int) or isinstance(planted, bool) or planted < 0:
        fail("planted_at must be a message index (0 or more)")
    at = raw.get("at", "end")
    if not isinstance(at, str) or not POINT.match(at):
        fail(f"at {at!r} must be `end`, `compaction:N` or `message:M`")
    unknown = set(raw) - {"id", "kind", "question", "all", "none", "regex", "planted_at", "rubric", "at", "draft"}
    if unknown:
        fail(f"unknown field {sorted(unknown)[0]!r}")
    return Probe(
        id=raw["id"], kind=raw["kind"], question=raw["question"],
        all=tuple((i,) if isinstance(i, str) else tuple(i) for i in items),
        none=tuple(none), regex=regex, planted_at=planted, rubric=raw.get("rubric"), at=at,
        draft=bool(raw.get("draft", False)),
    )


def _is_item(item: Any) -> bool:
    if isinstance(item, str):
        return bool(item)
    return isinstance(item, list) and bool(item) and all(isinstance(a, str) and a for a in item)
