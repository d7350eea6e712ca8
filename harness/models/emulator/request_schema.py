"""What a request must look like before a wire reads it: the body parsed as strict JSON (no NaN, no number
past Python's digit limit, no nesting past MAX_DEPTH), then checked against the wire's JSON Schema for the
fields the emulator reads (types, ranges, required fields). A bad request is a 400 `EmulatorError` naming the
field (`messages[0].content: must be a string, an array or null`), which each wire returns in its own error
shape; fields the emulator never reads are not checked, as a provider's unknown-field rules are not emulated.

Typed lists (Responses input items, Messages content blocks, content parts) are tables: type -> schema, so
a new item type is one entry. A closed table refuses a type it does not list (Responses items, as the wire
always did); an open one checks the types it lists and lets the others through (an image block, a thinking
block: read by no wire)."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from harness.models.emulator.faults import EmulatorError
from harness.validate import depth_exceeds

MAX_DEPTH = 100  # no wire's request nests deeper (tool schemas included); deeper would recurse in the readers
MAX_INT = 2**31 - 1  # the APIs' token fields are 32-bit integers

STRING = {"type": "string"}
TEXT = {"type": ["string", "null"]}
BOOLEAN = {"type": "boolean"}
OBJECT = {"type": "object"}
TOKENS = {"type": "integer", "minimum": 1, "maximum": MAX_INT}
CACHE_CONTROL = {"type": "object", "properties": {"ttl": {"enum": ["5m", "1h"]}}}


def shape(required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    """An object with these properties (each checked only when present) and these required ones."""
    return {"type": "object", "required": list(required), "properties": properties}


def tagged(table: dict[str, dict[str, Any]], *, closed: bool, default: str | None = None,
           **common: Any) -> dict[str, Any]:
    """An object checked by the schema its `type` names in `table`; without a `type`, `default`'s schema
    (or `type` is required). `closed`: a type not in the table is refused. `common`: properties every type
    may carry, checked whatever the type."""
    type_rule: dict[str, Any] = {"enum": list(table)} if closed else STRING
    rules = [{"if": {"required": ["type"], "properties": {"type": {"const": name}}}, "then": schema}
             for name, schema in table.items()]
    if default is not None:
        rules.append({"if": {"not": {"required": ["type"]}}, "then": table[default]})
    return {"type": "object", "required": [] if default else ["type"], "properties": {"type": type_rule, **common},
            "allOf": rules}


def listed(items: dict[str, Any], nonempty: bool = False) -> dict[str, Any]:
    return {"type": "array", "items": items, **({"minItems": 1} if nonempty else {})}


# -- content shared by the wires: text parts (the OpenAI wires and Messages' text blocks read `text`)
TEXT_PART = shape(("text",), text=STRING, cache_control=CACHE_CONTROL)
OPENAI_PARTS = tagged({"text": TEXT_PART, "input_text": TEXT_PART, "output_text": TEXT_PART}, closed=False)
OPENAI_CONTENT = {"type": ["string", "array", "null"], "items": OPENAI_PARTS}
TOOLS = listed(OBJECT)

# -- Chat Completions
CHAT_CALL = shape(("function",), id=STRING, function=shape(("name",), name=STRING, arguments=STRING))
CHAT_MESSAGE = shape(("role",), role={"enum": ["system", "developer", "user", "assistant", "tool", "function"]},
                     content=OPENAI_CONTENT, tool_calls=listed(CHAT_CALL), tool_call_id=STRING)
CHAT = shape(("model", "messages"), model=STRING, messages=listed(CHAT_MESSAGE, nonempty=True), tools=TOOLS,
             max_tokens=TOKENS, max_completion_tokens=TOKENS, stream=BOOLEAN,
             stream_options=shape(include_usage=BOOLEAN))

# -- Anthropic Messages
TOOL_RESULT_CONTENT = {"type": ["string", "array", "null"], "items": tagged({"text": TEXT_PART}, closed=False)}
MESSAGES_BLOCKS = {
    "text": TEXT_PART,
    "tool_use": shape(("id", "name", "input"), id=STRING, name=STRING, input=OBJECT, cache_control=CACHE_CONTROL),
    "tool_result": shape(("tool_use_id",), tool_use_id=STRING, content=TOOL_RESULT_CONTENT, is_error=BOOLEAN,
                         cache_control=CACHE_CONTROL),
    "compaction": shape(content=TEXT, encrypted_content=TEXT, signature=STRING, cache_control=CACHE_CONTROL),
}
MESSAGES_BLOCK = tagged(MESSAGES_BLOCKS, closed=False, cache_control=CACHE_CONTROL)  # an image's breakpoint too
# a mid-conversation system message: Claude Code sends its environment so (it joins the system text)
MESSAGES_MESSAGE = shape(("role", "content"), role={"enum": ["user", "assistant", "system"]},
                         content={"type": ["string", "array"], "items": MESSAGES_BLOCK})
MESSAGES = shape(("model", "max_tokens", "messages"), model=STRING, max_tokens=TOKENS,
                 messages=listed(MESSAGES_MESSAGE, nonempty=True), stream=BOOLEAN, cache_control=CACHE_CONTROL,
                 system={"type": ["string", "array"],
                         "items": tagged({"text": TEXT_PART}, closed=False, cache_control=CACHE_CONTROL)},
                 tools=listed(shape(cache_control=CACHE_CONTROL)), compaction=shape(instructions=TEXT))

# -- OpenAI Responses: the input item table (items without a type are messages)
RESPONSES_ITEMS = {
    "message": shape(("role", "content"), role={"enum": ["user", "assistant", "system", "developer"]},
                     content=OPENAI_CONTENT),
    "function_call": shape(("call_id", "name", "arguments"), call_id=STRING, name=STRING, arguments=STRING),
    "function_call_output": shape(("call_id", "output"), call_id=STRING, output=OPENAI_CONTENT),
    "compaction": shape(("encrypted_content",), encrypted_content=STRING),
    "compaction_trigger": OBJECT,  # Codex's remote compaction: compact now, on the normal stream
    "reasoning": OBJECT,  # a runtime's own reasoning sent back: ignored
}
RESPONSES_INPUT = {"type": ["string", "array"], "minLength": 1, "minItems": 1,
                   "items": tagged(RESPONSES_ITEMS, closed=True, default="message")}
RESPONSES = shape(("model", "input"), model=STRING, input=RESPONSES_INPUT, instructions=TEXT, tools=TOOLS,
                  max_output_tokens={**TOKENS, "type": ["integer", "null"]}, stream=BOOLEAN)
COMPACT = shape(("model", "input"), model=STRING, input=RESPONSES_INPUT, instructions=TEXT)

# -- Gemini generateContent
GEMINI_PART = shape(text=STRING, thought=BOOLEAN, functionCall=shape(("name",), name=STRING, args=OBJECT, id=STRING),
                    functionResponse=shape(("name",), name=STRING, response=OBJECT, id=STRING))
GEMINI = shape(("contents",), contents=listed(shape(role={"enum": ["user", "model"]}, parts=listed(GEMINI_PART)),
                                              nonempty=True),
               systemInstruction=shape(parts=listed(shape(text=STRING))), tools=TOOLS,
               generationConfig=shape(maxOutputTokens=TOKENS))

ROUTE_SCHEMAS = {"openai": CHAT, "anthropic": MESSAGES, "responses": RESPONSES, "compact": COMPACT, "gemini": GEMINI}


def parse_body(body: bytes) -> Any:
    """The body as strict JSON (an empty body is an empty object), or a 400 saying what is wrong with it."""
    try:
        text = (body or b"{}").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _bad(f"body is not UTF-8 (byte {exc.start})") from None
    if depth_exceeds(text, MAX_DEPTH):
        raise _bad(f"body nests deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise _bad(f"body is not JSON: {exc}") from None
    except ValueError as exc:  # NaN/Infinity, or an integer past Python's 4,300-digit limit
        raise _bad(f"body is not JSON the API accepts: {str(exc).split(':')[0]}") from None
    except RecursionError:
        raise _bad("body nests too deeply") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def check_request(route: str, payload: Any) -> dict[str, Any]:
    """The payload when it has the shape `route`'s wire reads; else a 400 naming the first bad field."""
    if _valid(route, payload):
        return payload
    error = best_match(_validator(route).iter_errors(payload))
    if error is not None:
        field, problem = describe(error)
        raise EmulatorError(400, "invalid_request_error", f"{field}: {problem}",
                            param=None if field == "body" else field)
    return payload


@lru_cache(maxsize=None)
def _validator(route: str) -> Draft202012Validator:
    return Draft202012Validator(ROUTE_SCHEMAS[route])


# The field holding each wire's history. A runtime resends its whole history with every request, a few items
# longer each time: each item is checked once (by a digest of its text) and the rest of the request every time,
# which is what checking the whole request says (`items` checks each item on its own), at a fraction of the cost.
HISTORY = {"openai": "messages", "anthropic": "messages", "responses": "input", "compact": "input",
           "gemini": "contents"}
_CHECKED_MAX = 200_000  # digests kept; past it the set starts again
_checked: set[tuple[str, bytes]] = set()


@lru_cache(maxsize=None)
def _parts(route: str) -> tuple[Draft202012Validator, Draft202012Validator]:
    """(the route's schema with its history's items unchecked, the schema of one history item)."""
    schema = ROUTE_SCHEMAS[route]
    history = dict(schema["properties"][HISTORY[route]])
    item = history.pop("items")
    rest = {**schema, "properties": {**schema["properties"], HISTORY[route]: history}}
    return Draft202012Validator(rest), Draft202012Validator(item)


def _valid(route: str, payload: Any) -> bool:
    """Whether the payload satisfies the route's schema (False says nothing of why: the full check does)."""
    rest, item = _parts(route)
    if not rest.is_valid(payload):
        return False
    history = payload.get(HISTORY[route])
    if not isinstance(history, list):
        return True
    for entry in history:
        key = (route, hashlib.blake2b(json.dumps(entry, ensure_ascii=False).encode(), digest_size=16).digest())
        if key in _checked:
            continue
        if not item.is_valid(entry):
            return False
        if len(_checked) >= _CHECKED_MAX:
            _checked.clear()
        _checked.add(key)
    return True


def describe(error: ValidationError) -> tuple[str, str]:
    """(the field as a path like `messages[0].content`, what is wrong), never echoing the value itself (it
    may be megabytes, or a secret)."""
    path = list(error.absolute_path)
    rule, expected = error.validator, error.validator_value
    if rule == "required":
        path.append(next(k for k in expected if k not in error.instance))
        problem = "field required"
    elif rule == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        problem = "must be " + " or ".join(_A.get(k, k) for k in kinds)
    elif rule in ("minimum", "maximum"):
        problem = f"must be {'at least' if rule == 'minimum' else 'at most'} {expected}"
    elif rule in ("enum", "const"):
        values = expected if rule == "enum" else [expected]
        shown = f"{error.instance!r} is not supported here; " if _short(error.instance) else ""
        problem = f"{shown}must be one of " + ", ".join(json.dumps(v) for v in values)
    elif rule in ("minItems", "minLength"):
        problem = "must not be empty"
    else:
        problem = f"does not satisfy {rule}"
    return _path(path) or "body", problem


_A = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
      "object": "an object", "array": "an array", "null": "null"}


def _short(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 60 and value.isprintable()


def _path(parts: list[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _bad(message: str) -> EmulatorError:
    return EmulatorError(400, "invalid_request_error", message)
