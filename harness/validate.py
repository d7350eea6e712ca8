"""The input boundary's shared checks: reading a user's file, shape checks with one-line errors, path
segments, and output targets checked before any work.

Every reader calls these at its entry so a decode, type or shape problem is an InputError naming the file,
the line or key, and the fix (exit 2), never a traceback from deep inside.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import tempfile
import tomllib
from pathlib import Path
from typing import Any, Iterable

from harness.errors import HarnessError, InputError
from harness.input_file import DATA_BYTES, read_input

# A case id, label or run id becomes a folder or file name: letters, digits, `.`, `_`, `-`, not `.` or `..`.
SAFE_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
MAX_JSON_DEPTH = 200  # deeper documents are not ones the harness writes; json.loads would recurse out


def read_text(path: str | Path, what: str, missing: str, limit: int = DATA_BYTES) -> str:
    """A user's file as UTF-8 text: a regular file of at most `limit` bytes (input_file.py); a missing file
    says `missing`, bad bytes name the offset."""
    return decode(read_input(path, what, missing, limit), str(path), what)


def decode(data: bytes, where: str, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(where, line, None, f"{what} is not UTF-8 (byte {exc.start}); save it as UTF-8") from None


def parse_json(text: str, where: str, what: str, line: int | None = None) -> Any:
    """JSON text, or a one-line error with the line; nesting beyond MAX_JSON_DEPTH is refused up front."""
    if depth_exceeds(text, MAX_JSON_DEPTH):
        raise InputError(where, line, None, f"{what} nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise InputError(where, at, None, f"{what} is not valid JSON (bad JSON at column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise InputError(where, line, None, f"{what} nests too deeply") from None
    except ValueError as exc:  # an integer past Python's 4,300-digit limit
        raise InputError(where, line, None, f"{what} holds a number too long to read ({str(exc).split(';')[0]})") \
            from None


def parse_toml(text: str, where: str, what: str) -> dict[str, Any]:
    """TOML text, or a one-line error naming the line: bad syntax, nesting past the reader's recursion, an
    integer past Python's 4,300-digit limit."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(where, None, None, f"{what} is not valid TOML (bad TOML: {exc})") from None
    except RecursionError:
        raise InputError(where, None, None, f"{what} nests too deeply to read") from None
    except ValueError as exc:
        raise InputError(where, None, None, f"{what} holds a number too long to read ({str(exc).split(';')[0]})") \
            from None


# A JSON string (to its closing quote, or to the end when it never closes), and anything not a bracket: what is
# left of a text once both are removed (in C) is its brackets outside strings.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def depth_exceeds(text: str, limit: int) -> bool:
    """A cheap bracket count (strings included, which only over-counts): JSON this deep is never ours. Past it,
    the deepest level outside strings, summed in C (a request body of a long session holds tens of thousands
    of brackets, and this runs on every request a runtime sends)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets), initial=0)) > limit


def read_json_file(path: str | Path, what: str, missing: str) -> Any:
    path = Path(path)
    return parse_json(read_text(path, what, missing), str(path), what)


def expect(value: Any, kind: type | tuple[type, ...], where: str, key: str, fix: str) -> Any:
    """`value` when it has the JSON/TOML type `kind` (a bool is never a number), else an InputError."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise InputError(where, None, key, fix)
    if not isinstance(value, kinds):
        raise InputError(where, None, key, fix)
    return value


def expect_keys(document: Any, required: Iterable[str], where: str, what: str) -> dict[str, Any]:
    """A JSON object holding every key of `required`."""
    if not isinstance(document, dict):
        raise InputError(where, None, None, f"{what} must be a JSON object, not {type(document).__name__}")
    for key in required:
        if key not in document:
            raise InputError(where, None, key, f"missing from {what}")
    return document


def reject_unknown(table: dict[str, Any], allowed: Iterable[str], where: str, name: str) -> None:
    """A misspelt key is an error naming it and the keys the table takes."""
    known = set(allowed)
    unknown = sorted(set(table) - known)
    if unknown:
        raise InputError(where, None, f"{name}.{unknown[0]}",
                         f"unknown key (the table takes {', '.join(sorted(known))})")


def finite_number(value: Any, where: str, key: str, *, low: float = 0.0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        bound = f"from {low:g}" + (f" to {high:g}" if math.isfinite(high) else " up")
        raise InputError(where, None, key, f"must be a number {bound}, not {value!r}")
    return float(value)


def safe_segment(text: Any, where: str, key: str) -> str:
    """An id that becomes a path segment: no separators, no `..`, nothing a file system treats specially."""
    if not isinstance(text, str) or not SAFE_SEGMENT.fullmatch(text) or len(text) > 200:
        raise InputError(where, None, key, f"{text!r} is not a safe name: use letters, digits, `.`, `_` and `-` "
                                           f"(not starting with `.`)")
    return text


def safe_name(text: str, option: str) -> str:
    """A name given on the command line that becomes a folder (a label, a run id)."""
    if not SAFE_SEGMENT.fullmatch(text) or len(text) > 200:
        raise HarnessError(f"{option} {text!r}: use letters, digits, `.`, `_` and `-` (not starting with `.`): "
                           f"it names a folder")
    return text


def inside(path: Path, folder: Path, where: str, key: str) -> Path:
    """`path` when it resolves inside `folder` (a case's session must live in its case folder)."""
    try:
        resolved, root = path.resolve(), folder.resolve()
    except (RuntimeError, OSError):  # Python 3.11-3.12 raise RuntimeError on a symlink loop, later ones OSError
        raise InputError(where, None, key, f"{path} is a symlink loop: point it at a file in the case folder") \
            from None
    if resolved != root and root not in resolved.parents:
        raise InputError(where, None, key, f"{path} is outside {folder}: keep the file in the case folder")
    return path


def writable_file(path: str | Path, option: str) -> Path:
    """An output file target, checked before any work: not a folder; its folder is made when missing."""
    target = Path(path)
    if target.is_dir():
        raise HarnessError(f"{option} {target}: is a folder; give a file name")
    _make_parent(target.parent, option, target)
    return target


def writable_folder(path: str | Path, option: str) -> Path:
    """An output folder target: made when missing; an existing file there is an error."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise HarnessError(f"{option} {target}: is a file; give a folder")
    _make_parent(target, option, target)
    return target


def _make_parent(folder: Path, option: str, target: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise HarnessError(f"{option} {target}: a part of the path is a file, not a folder") from None
    except OSError as exc:
        raise HarnessError(f"{option} {target}: cannot create the folder ({exc.strerror or exc})") from None
    try:  # a file can be made there (permissions, a read-only or pseudo file system), before any work
        descriptor, probe = tempfile.mkstemp(dir=folder, prefix=".write-check-")
        os.close(descriptor)
        os.unlink(probe)
    except OSError as exc:
        raise HarnessError(f"{option} {target}: cannot write in {folder} ({exc.strerror or exc})") from None


def encoded(text: str) -> bytes:
    """UTF-8 bytes of text a writer got from elsewhere: a lone surrogate (half an emoji) becomes its `\\udXXX`
    escape, which in JSON reads back as the same string, instead of stopping the write."""
    return text.encode("utf-8", "backslashreplace")
