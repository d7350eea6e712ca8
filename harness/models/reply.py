"""What the wire promises a successful reply is: a JSON object of its endpoint's shape.

A 2xx body that is not (an HTML error page from a proxy, an event stream where JSON was asked, JSON of
another shape) is said here once, for the adapters (such a reply is a failed request of its role, costing
only what needed it) and for the cassette (such a body is never recorded, and an old one is asked again).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

from harness.failure import RequestFailed

PREVIEW_CHARS = 60


def reply_problem(path: str, content: bytes) -> str | None:
    """Why `content`, a 2xx body of a request to `path`, is not the JSON object its endpoint promises."""
    start = content.lstrip()[:PREVIEW_CHARS].decode("utf-8", "replace")
    if start.startswith(("event:", "data:")):
        return f"an event stream where JSON was asked (starts {' '.join(start.split())!r})"
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, an integer past 4,300 digits, nested too deep
        kind = "HTML" if start[:1] == "<" else "text"
        return f"{kind}, not JSON (starts {' '.join(start.split())!r})" if start else "an empty body, not JSON"
    if not isinstance(body, dict):
        return f"JSON {type(body).__name__}, not an object"
    return _shape_problem(path.split("?", 1)[0].rstrip("/"), body)


def checked_reply(spec: str, response: httpx2.Response) -> dict[str, Any]:
    """The reply's JSON object, or RequestFailed (of whatever role the caller is) saying what came instead."""
    problem = reply_problem(response.request.url.path, response.content)
    if problem is not None:
        raise RequestFailed(f"{spec}: unreadable response: {problem}")
    return json.loads(response.content)


def _shape_problem(path: str, body: dict[str, Any]) -> str | None:
    if path.endswith("/chat/completions"):
        return _chat_problem(body) or _usage_problem(body.get("usage"))
    if path.endswith("/messages"):
        return _blocks_problem(body.get("content"), "content") or _usage_problem(body.get("usage"))
    if path.endswith(("/responses", "/responses/compact")):
        return _output_problem(body.get("output")) or _usage_problem(body.get("usage"))
    return None  # another endpoint: a JSON object is all it promises here


def _chat_problem(body: dict[str, Any]) -> str | None:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return "no `choices` list of objects"
    message = choices[0].get("message")
    if message is not None and not isinstance(message, dict):
        return "`choices[0].message` is not an object"
    if not _text_or_none((message or {}).get("content")) or not _text_or_none(choices[0].get("finish_reason")):
        return "`choices[0].message.content` or `finish_reason` is not text"
    return None


def _blocks_problem(blocks: Any, where: str) -> str | None:
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        return f"no `{where}` list of objects"
    if not all(_text_or_none(b.get("text")) and _text_or_none(b.get("type")) for b in blocks):
        return f"a `{where}` block whose type or text is not text"
    return None


def _output_problem(output: Any) -> str | None:
    if not isinstance(output, list) or not all(isinstance(o, dict) for o in output):
        return "no `output` list of objects"
    for item in output:
        content = item.get("content")
        if item.get("type", "message") == "message" and not isinstance(content, str) and content is not None:
            if problem := _blocks_problem(content, "output[].content"):
                return problem
    return None


def _usage_problem(usage: Any) -> str | None:
    """Token counts are whole numbers (or null) wherever they sit: cost code adds them."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        return "`usage` is not an object"
    for key, value in usage.items():
        nested = value if isinstance(value, list) else [value] if isinstance(value, dict) else None
        if nested is not None:
            if not all(isinstance(v, dict) and _usage_problem(v) is None for v in nested):
                return f"`usage.{key}` holds a count that is not a whole number"
        elif key.endswith("_tokens") and not _count(value):
            return f"`usage.{key}` is not a whole number"
    return None


def _count(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)
