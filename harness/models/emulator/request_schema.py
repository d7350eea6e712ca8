"""What a request must look like before a wire reads it: the body parsed as strict JSON (no NaN, no number
past Python's digit limit), nesting no deeper than MAX_DEPTH, then checked against the wire's JSON Schema for the
fields the emulator reads (types, ranges, required fields). A bad request is a 400 `EmulatorError` naming the
field (`messages[0].content: must be a string, an array or null`), which each wire returns in its own error
shape; fields the emulator never reads are not checked, as a provider's unknown-field rules are not emulated.

Typed lists (Responses input items, Messages content blocks, content parts) are tables: type -> schema, so
a new item type is one entry. A closed table refuses a type it does not list (Responses items, as the wire
always did); an open one checks the types it lists and lets the others through (an image block, a thinking
block: read by no wire)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from harness.models.emulator.faults import EmulatorError
from harness.models.emulator.resent import Resent, depth_and_plain

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
    try:
        return json.loads(text, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise _bad(f"body is not JSON: {exc}") from None
    except ValueError as exc:  # NaN/Infinity, or an integer past Python's 4,300-digit limit
        raise _bad(f"body is not JSON the API accepts: {str(exc).split(':')[0]}") from None
    except RecursionError:  # the parser's own limit, far past ours (check_request checks ours)
        raise _too_deep() from None


def no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def check_request(route: str, payload: Any, resent: Resent | None = None) -> dict[str, Any]:
    """The payload when it nests at most MAX_DEPTH levels and has the shape `route`'s wire reads; else a 400
    naming the first bad field. With `resent`, what a recent request carried exactly (history items at the same
    places, other fields) is not looked at again, and is put back as the object first looked at (a runtime
    re-sends its whole history with every request)."""
    if not isinstance(payload, dict):
        _check(route, payload, payload, [])
        return payload
    resent = resent or Resent()  # a new one knows nothing: everything is looked at
    field = HISTORY[route]
    history = payload.get(field)
    skip = field if isinstance(history, list) and history else None
    history = history if skip else []
    known, reused = resent.reuse(route, history), resent.reuse_fields(route, payload, skip)
    fresh = history[len(known):]
    fields = {k: v for k, v in payload.items() if k != skip and k not in reused}
    # a field re-sent exactly was checked as it is: what the rest of the schema checks is each field on its
    # own and that the required ones are there
    view = {k: v for k, v in payload.items() if k not in reused or k in ROUTE_SCHEMAS[route]["required"]}
    looks = _check(route, view, fields, fresh)
    resent.remember(route, history, known + [plain for _, plain in looks[0]], payload, reused | looks[1], skip)
    return payload


def _check(route: str, payload: Any, fields: Any, fresh: list[Any]) -> tuple[list, dict[str, bool]]:
    """Check the payload, looking only at `fields` (its fields to look at, or the payload when it is no object)
    and at `fresh` history items (the others known good); returns what was looked at: each fresh item's and
    each field's (nesting past the limit, plain)."""
    looks = [depth_and_plain(item, MAX_DEPTH - 2) for item in fresh]  # the body and the history are 2 levels
    if isinstance(fields, dict):
        field_looks = {key: depth_and_plain(value, MAX_DEPTH - 1) for key, value in fields.items()}
    else:
        field_looks = {"": depth_and_plain(fields, MAX_DEPTH)}
    if any(deep for deep, _ in looks) or any(deep for deep, _ in field_looks.values()):
        raise _too_deep()
    if not _valid(route, payload, fresh):
        error = best_match(_validator(route).iter_errors(payload))
        if error is not None:
            field, problem = describe(error)
            raise EmulatorError(400, "invalid_request_error", f"{field}: {problem}",
                                param=None if field == "body" else field)
    return looks, {key: plain for key, (_, plain) in field_looks.items()}


@lru_cache(maxsize=None)
def _validator(route: str) -> Draft202012Validator:
    return Draft202012Validator(ROUTE_SCHEMAS[route])


# The field holding each wire's history: its items are checked on their own (what `items` says), so that a
# request need check only the items no recent request carried (`Resent`).
HISTORY = {"openai": "messages", "anthropic": "messages", "responses": "input", "compact": "input",
           "gemini": "contents"}


@lru_cache(maxsize=None)
def _parts(route: str) -> tuple[Draft202012Validator, Draft202012Validator]:
    """(the route's schema with its history's items unchecked, the schema of one history item)."""
    schema = ROUTE_SCHEMAS[route]
    history = dict(schema["properties"][HISTORY[route]])
    item = history.pop("items")
    rest = {**schema, "properties": {**schema["properties"], HISTORY[route]: history}}
    return Draft202012Validator(rest), Draft202012Validator(item)


def _valid(route: str, payload: Any, fresh: list[Any]) -> bool:
    """Whether the payload satisfies the route's schema, its history items other than `fresh` known good (False
    says nothing of why: the full check does)."""
    rest, item = _parts(route)
    return rest.is_valid(payload) and all(item.is_valid(entry) for entry in fresh)


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


def _too_deep() -> EmulatorError:
    return _bad(f"body nests deeper than {MAX_DEPTH} levels")


def _bad(message: str) -> EmulatorError:
    return EmulatorError(400, "invalid_request_error", message)
