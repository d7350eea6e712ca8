"""case.toml: the one reader (load, discover, validate) and the one writer of case files (DESIGN.md, "Case").

The reader turns `cases/<id>/case.toml` into a `Case` with errors that name the file and the field or probe.
The writer renders tables in a fixed order with values written as TOML basic strings, integers, booleans and
arrays; the importers and tools/casegen both write their case.toml through it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.probe_regex import risky_shape
from harness.atomic import write_atomic
from harness.cases.schema import KINDS, POINT, POOLS, Case, Probe
from harness.errors import HarnessError, InputError
from harness.redact import scrub
from harness.matching import normalise_item
from harness.session import Session, write_session
from harness.input_file import SETTINGS_BYTES
from harness.validate import encoded, inside, parse_toml, read_text, reject_unknown, safe_segment

CASE_FILE = "case.toml"
SESSION_FILE = "session.jsonl"
# Every key case.toml takes: a misspelt one is an error, never silently ignored.
TABLES = ("case", "model", "probe", "policy", "summary", "generator")
SUMMARY_KEYS = ("instruction",)
CASE_KEYS = ("id", "title", "pool", "session", "notes")
MODEL_KEYS = ("name", "context_window", "max_output_tokens")
PROBE_KEYS = ("id", "kind", "question", "all", "none", "anchor", "regex", "planted_at", "rubric", "at", "draft",
              "accept", "reject", "note")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_KIND_NAMES = {str: "a string", int: "an integer", dict: "a table", bool: "true or false"}

# ---------------------------------------------------------------------------------------------
# reading


def load_case(directory: str | Path) -> Case:
    """The case in `directory`, validated field by field (errors name the file and the field or probe)."""
    directory = Path(directory)
    path = directory / CASE_FILE
    data = _read_toml(path)
    where = str(path)
    reject_unknown(data, TABLES, where, "case.toml")
    case = _table(data, "case", where)
    model = _table(data, "model", where)
    reject_unknown(case, CASE_KEYS, where, "case")
    reject_unknown(model, MODEL_KEYS, where, "model")
    case_id = safe_segment(_get(case, "id", str, where, "case"), where, "case.id")
    if case_id != directory.name:
        raise InputError(where, None, "case.id", f"{case_id!r} must equal the folder name {directory.name!r}")
    pool = _get(case, "pool", str, where, "case")
    if pool not in POOLS:
        raise InputError(where, None, "case.pool", f"{pool!r} is not one of {', '.join(POOLS)}")
    raw_probes = data.get("probe", [])
    if not isinstance(raw_probes, list) or not all(isinstance(p, dict) for p in raw_probes):
        raise InputError(where, None, "probe", "probes are [[probe]] tables (two brackets), one per probe")
    probes = tuple(_probe(raw, where, n) for n, raw in enumerate(raw_probes, start=1))
    seen: set[str] = set()
    for probe in probes:
        if probe.id in seen:
            raise InputError(where, None, f"probe {probe.id}", "duplicate probe id")
        seen.add(probe.id)
    session_file = _optional(case, "session", str, where, "case", SESSION_FILE)
    inside(directory / session_file, directory, where, "case.session")
    settings = _optional(data, "policy", dict, where, "", {})
    summary = _optional(data, "summary", dict, where, "", {})
    reject_unknown(summary, SUMMARY_KEYS, where, "summary")
    instruction = _optional(summary, "instruction", str, where, "summary", None)
    if instruction is not None and not instruction.strip():
        raise InputError(where, None, "summary.instruction", "is empty: leave it out to use the shipped instruction")
    return Case(
        id=case_id,
        title=_optional(case, "title", str, where, "case", case_id),
        pool=pool,
        directory=directory,
        session_file=session_file,
        context_window=_positive(_get(model, "context_window", int, where, "model"), where, "model.context_window"),
        max_output_tokens=_positive(_optional(model, "max_output_tokens", int, where, "model", 16384), where,
                                    "model.max_output_tokens"),
        model_name=_optional(model, "name", str, where, "model", None),
        probes=probes,
        settings=dict(settings),
        summary_instruction=None if instruction is None else scrub(instruction),
    )


def validate_case(case: Case) -> list[str]:
    """Checks that need the session: it parses, and each probe's planted_at is inside it."""
    session = case.session
    problems = []
    for probe in case.probes:
        if not 0 <= probe.planted_at < len(session.messages):
            problems.append(f"{case.directory / CASE_FILE}: probe {probe.id}: planted_at {probe.planted_at} "
                            f"is outside the session's {len(session.messages)} messages")
        if probe.at.startswith("message:") and int(probe.at.split(":")[1]) > len(session.messages):
            problems.append(f"{case.directory / CASE_FILE}: probe {probe.id}: at {probe.at} is past the end")
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


def case_tables(directory: str | Path) -> dict[str, Any]:
    """The raw tables of a folder's case.toml, with the reader's errors, for tables `Case` does not carry
    (such as the generator's [generator])."""
    return _read_toml(Path(directory) / CASE_FILE)


def session_file_of(directory: str | Path) -> Path:
    """The session file a case folder names, read without validating the rest (for a case still being
    written, such as one just imported); `session.jsonl` when the folder has no case.toml yet."""
    directory = Path(directory)
    path = directory / CASE_FILE
    if not path.exists():
        return directory / SESSION_FILE
    table = _read_toml(path).get("case", {})
    return directory / table.get("session", SESSION_FILE)


def _table(data: dict, name: str, where: str) -> dict:
    table = data.get(name)
    if not isinstance(table, dict):
        raise InputError(where, None, f"[{name}]", "missing table")
    return table


def _optional(table: dict, key: str, kind: type, where: str, prefix: str, default: Any) -> Any:
    if key not in table:
        return default
    value = table[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        name = f"{prefix}.{key}" if prefix else f"[{key}]"
        raise InputError(where, None, name, f"must be {_KIND_NAMES.get(kind, kind.__name__)}, not {value!r}")
    return value


def _positive(value: int, where: str, key: str) -> int:
    if value < 1:
        raise InputError(where, None, key, f"must be 1 or more, not {value}")
    return value


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
    anchor = raw.get("anchor", [])
    if not isinstance(anchor, list) or not all(isinstance(i, str) and normalise_item(i) for i in anchor):
        fail("`anchor` must be a list of non-empty strings (the words that name what the probe asks about; "
             "`word*` for any ending)")
    regex = raw.get("regex")
    if regex is not None:
        if not isinstance(regex, str):
            fail("`regex` must be a string")
        try:
            compiled = re.compile(regex)
        except re.error as exc:
            fail(f"bad regex: {exc}")
        if compiled.search("") is not None:
            fail(f"regex {regex!r} matches an empty answer, so it would pass any answer")
        if risk := risky_shape(regex):
            fail(f"`regex` {regex!r}: {risk}")
    if not items and regex is None:
        fail("needs `all` or `regex`: something to check the answer against")
    for item in [*(a for i in items for a in ([i] if isinstance(i, str) else i)), *none]:
        if not normalise_item(item):
            fail(f"matcher item {item!r} is empty once normalised (case, quotes, punctuation): it would match anything")
    examples = {}
    for key in ("accept", "reject"):
        values = raw.get(key, [])
        if not isinstance(values, list) or not all(isinstance(v, str) and v.strip() for v in values):
            fail(f"`{key}` must be a list of non-empty answer strings")
        examples[key] = tuple(values)
    planted = raw.get("planted_at")
    if not isinstance(planted, int) or isinstance(planted, bool) or planted < 0:
        fail("planted_at must be a message index (0 or more)")
    at = raw.get("at", "end")
    if not isinstance(at, str) or not POINT.match(at):
        fail(f"at {at!r} must be `end`, `compaction:N` or `message:M`")
    for key in ("note", "rubric"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            fail(f"`{key}` must be a string")
    if not isinstance(raw.get("draft", False), bool):
        fail(f"`draft` must be true or false, not {raw['draft']!r}")
    unknown = set(raw) - set(PROBE_KEYS)
    if unknown:
        fail(f"unknown field {sorted(unknown)[0]!r}")
    return Probe(
        id=raw["id"], kind=raw["kind"], question=raw["question"],
        all=tuple((i,) if isinstance(i, str) else tuple(i) for i in items),
        none=tuple(none), anchor=tuple(anchor), regex=regex, planted_at=planted, rubric=raw.get("rubric"), at=at,
        draft=raw.get("draft", False), note=raw.get("note"), **examples,
    )


def _is_item(item: Any) -> bool:
    if isinstance(item, str):
        return bool(item)
    return isinstance(item, list) and bool(item) and all(isinstance(a, str) and a for a in item)


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise HarnessError(f"{path}: no case.toml here (a case is a folder with case.toml and session.jsonl)")
    return parse_toml(read_text(path, "case.toml", "cannot read case.toml", SETTINGS_BYTES), str(path), "case.toml")


# ---------------------------------------------------------------------------------------------
# writing


def toml_string(value: str) -> str:
    """A TOML basic string (JSON escapes are valid TOML escapes for what json.dumps emits). TOML has no escape
    for a lone surrogate (half an emoji), so one becomes U+FFFD instead of a file no reader takes."""
    return json.dumps(_LONE_SURROGATE.sub("\ufffd", value), ensure_ascii=False)


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


def toml_table(name: str, fields: Mapping[str, Any], *, array: bool = False) -> str:
    """`[name]` (or `[[name]]`) and one `key = value` line per field in the given order; None is left out."""
    header = f"[[{name}]]" if array else f"[{name}]"
    return "\n".join([header] + [f"{key} = {toml_value(value)}" for key, value in fields.items() if value is not None])


def case_toml(*, case_id: str, title: str, pool: str, context_window: int, max_output_tokens: int,
              model_name: str | None = None, session_file: str = SESSION_FILE, notes: str | None = None,
              tables: Mapping[str, Mapping[str, Any]] | None = None, probes: Sequence[Mapping[str, Any]] = (),
              comments: Sequence[str] = (), trailer: str = "") -> str:
    """A case.toml: comment lines, [case], [model], any further `tables` (such as [generator]), one
    [[probe]] per probe (fields in the order given), then `trailer` (free text, such as help comments)."""
    blocks = ["\n".join(f"# {line}" for line in comments)] if comments else []
    blocks.append(toml_table("case", {"id": case_id, "title": title, "pool": pool, "session": session_file,
                                      "notes": notes}))
    blocks.append(toml_table("model", {"name": model_name, "context_window": context_window,
                                       "max_output_tokens": max_output_tokens}))
    blocks += [toml_table(name, fields) for name, fields in (tables or {}).items()]
    blocks += [toml_table("probe", probe, array=True) for probe in probes]
    text = "\n\n".join(blocks) + "\n"
    return f"{text}\n{trailer}" if trailer else text


def write_case_files(directory: str | Path, session: Session, toml_text: str, *, overwrite: bool = False) -> Path:
    """Write `session.jsonl` and `case.toml` into `directory`; returns the case.toml path. An existing
    case.toml is kept unless `overwrite`."""
    out = Path(directory)
    toml_path = out / CASE_FILE
    if toml_path.exists() and not overwrite:
        raise HarnessError(f"{toml_path} already exists; choose another --out or remove it first")
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_session(out / SESSION_FILE, session)
        write_atomic(toml_path, encoded(toml_text))
    except OSError as exc:
        raise HarnessError(f"{out}: cannot write the case: {exc.strerror}") from None
    return toml_path
