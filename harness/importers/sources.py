"""Readers of transcript sources shared by the formats: JSON and JSONL documents with located errors, tool
arguments as a JSON object, the text of typed content blocks, and a located-error raiser."""

from __future__ import annotations

import json
from typing import Any, Callable

from harness.errors import InputError
from harness.importers.report import ImportReport

def load_json(text: str, path: str, line: int | None = None) -> Any:
    """`json.loads`, except that what no JSON reader could hold (an integer past Python's 4,300 digits,
    nesting past the recursion limit) is an InputError naming the file; bad JSON still raises
    JSONDecodeError for the caller to word."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        raise InputError(path, line, None, f"holds a number too long to read ({str(exc).split(':')[0]})") from None
    except RecursionError:
        raise InputError(path, line, None, "nests too deeply to read") from None


def load_json_document(text: str, path: str, expected: str) -> Any:
    try:
        return load_json(text, path)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, None, f"bad JSON ({exc.msg}, column {exc.colno}); expected {expected}") from None


def load_jsonl(text: str, path: str, expected: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line; a line that is not a JSON object is an error."""
    out: list[tuple[int, dict[str, Any]]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = load_json(raw, path, number)
        except json.JSONDecodeError as exc:
            raise InputError(path, number, None, f"bad JSON ({exc.msg}, column {exc.colno}); expected {expected}") from None
        if not isinstance(record, dict):
            raise InputError(path, number, None, f"expected {expected}, found a JSON {type(record).__name__}")
        out.append((number, record))
    if not out:
        raise InputError(path, None, None, f"the file is empty; expected {expected}")
    return out


def parse_arguments(raw: Any, report: ImportReport) -> dict[str, Any]:
    """Tool arguments as a JSON object: OpenAI sends a JSON string; anything else is wrapped and counted."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or JSON no reader holds (a 5,000-digit number)
            report.tag("arguments kept as raw text (not JSON)")
            return {"raw": raw}
        if isinstance(value, dict):
            return value
        report.tag("arguments wrapped (JSON but not an object)")
        return {"value": value}
    report.tag("arguments wrapped (JSON but not an object)")
    return {"value": raw}


def block_text(content: Any, report: ImportReport, *, text_types: tuple[str, ...] = ("text", "input_text", "output_text")) -> str:
    """Text of a content value that is a string or a list of typed blocks; images and the like are counted."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") in text_types and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict):
            kind = str(block.get("type", "untyped"))
            report.leave_out(f"{kind} block")
            parts.append(f"[{kind} omitted]")
    return "\n".join(parts)


Fail = Callable[[int | None, str | None, str], None]


def failer(path: str) -> Fail:
    def fail(line: int | None, field_name: str | None, problem: str) -> None:
        raise InputError(path, line, field_name, problem)

    return fail
