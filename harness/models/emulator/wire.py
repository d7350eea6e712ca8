"""What the emulator's wires share: field checks, each provider's error body, text of content blocks, tool
definitions in the provider-neutral shape, and the prompt tokens of a request whose wire has no cache rules
of its own (Responses, Gemini). The wires themselves: chat.py, messages.py, responses.py, gemini.py.

Token counts: o200k for every model. Claude's tokenizer differs (Claude 4.7+ yields about 30% more tokens
for the same text per PROVIDERS.md; the ratio for other Claude models is unverified), so Anthropic figures
are an approximation of the real counts; Gemini's likewise.
"""

from __future__ import annotations

import json
from typing import Any

from harness.models import _tokens
from harness.models.base import ChatMessage, ModelRequest
from harness.models.emulator.faults import EmulatorError
from harness.models.emulator.resent import Made

# Google's error status names by HTTP status (google.rpc.Code as the Gemini API reports it).
GEMINI_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                 405: "UNIMPLEMENTED", 409: "ABORTED", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED",
                 500: "INTERNAL", 501: "UNIMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
                 529: "UNAVAILABLE"}


def require(payload: dict, key: str, kind: type, nonempty: bool = False) -> Any:
    value = payload.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) or (nonempty and not value):
        raise EmulatorError(400, "invalid_request_error",
                            f"{key}: field required ({'a non-empty ' if nonempty else ''}{kind.__name__})")
    return value


def error_response(err: EmulatorError, wire: str) -> tuple[int, dict[str, str], bytes]:
    """The error in `wire`'s own body shape ("anthropic", "gemini", else OpenAI's for chat and responses)."""
    if wire == "anthropic":
        error: dict[str, Any] = {"type": err.kind, "message": err.message}
        if err.code:
            error["details"] = {"error_code": err.code}
        body: dict[str, Any] = {"type": "error", "error": error}
    elif wire == "gemini":
        body = {"error": {"code": err.status, "message": err.message,
                          "status": GEMINI_STATUS.get(err.status, "UNKNOWN")}}
    else:
        body = {"error": {"message": err.message, "type": err.kind, "param": err.param, "code": err.code}}
    headers = {"content-type": "application/json"}
    if err.retry_after is not None:
        headers["retry-after"] = f"{err.retry_after:g}"
    elif err.status in (429, 500, 529):
        headers["x-should-retry"] = "true"
    return err.status, headers, json.dumps(body).encode()


def text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, dict):
            if block.get("type") in ("text", "input_text", "output_text"):
                parts.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                parts.append(text_of(block.get("content")))
        else:
            parts.append(str(block))
    return "\n".join(parts)


def json_object(text: Any) -> dict:
    """Call arguments as a dict: a JSON string parsed, a dict kept, anything else empty."""
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def neutral_tools(tools: Any) -> tuple[dict[str, Any], ...]:
    """Function tools of any wire as {"name", "description", "parameters"}: Chat's `function` wrapper,
    Responses' flat `type: function`, Messages' `input_schema`, Gemini's `functionDeclarations`. Tools
    that are not functions (web search, namespaces, a provider's built-ins) are left out."""
    out: list[dict[str, Any]] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if isinstance(tool.get("functionDeclarations"), list):
            out += [_neutral(d.get("name"), d.get("description"), d.get("parametersJsonSchema") or d.get("parameters"))
                    for d in tool["functionDeclarations"] if isinstance(d, dict)]
        elif isinstance(tool.get("function"), dict):
            f = tool["function"]
            out.append(_neutral(f.get("name"), f.get("description"), f.get("parameters")))
        elif tool.get("type") == "function" or "input_schema" in tool:
            out.append(_neutral(tool.get("name"), tool.get("description"),
                                tool.get("parameters") or tool.get("input_schema")))
    return tuple(t for t in out if t["name"])


def _neutral(name: Any, description: Any, parameters: Any) -> dict[str, Any]:
    return {"name": name if isinstance(name, str) else "", "description": description or "",
            "parameters": parameters if isinstance(parameters, dict) else {}}


def content_parts(request: ModelRequest, made: Made | None = None) -> list[str]:
    """The prompt's parts over its content, in order: each tool definition, the system prompt, then each
    message as `<|role|>text` plus its calls (name and arguments); each part after the first begins with a new
    line. `made`: each part made once per object it is made from (a re-sent message is the same object)."""
    made = made or Made()
    parts = tool_parts(request.tools, made)
    system = request.system or ""
    parts.append(made.get("system", system, lambda: "\n" + system) if parts else system)
    parts += [made.get("part", m, lambda m=m: "\n" + message_part(m)) for m in request.messages]
    return parts


def tool_parts(tools: Any, made: Made) -> list[str]:
    """Each tool definition as a prompt part (JSON, keys sorted), each after the first on a new line."""
    if not tools:
        return []
    return list(made.get("tool-parts", tools, lambda: [("\n" if i else "") + json.dumps(t, sort_keys=True)
                                                       for i, t in enumerate(tools)]))


def message_part(m: ChatMessage) -> str:
    calls = "".join(f"{c.name}{json.dumps(c.arguments, sort_keys=True)}" for c in m.tool_calls)
    return f"<|{m.role}|>{m.content}{calls}"


def content_tokens(request: ModelRequest, memo: dict[str, list[int]] | None = None,
                   made: Made | None = None) -> list[int]:
    """The tokens of `content_parts`: what a runtime's trigger should see grow. With `memo` each part is
    encoded once and reused (an agent re-sends its whole history every turn); a part boundary may then count a
    token apart from the whole prompt encoded at once."""
    parts = content_parts(request, made)
    return _tokens.encode("".join(parts)) if memo is None else encoded(parts, memo)


def encoded(parts: list[str], memo: dict[str, list[int]]) -> list[int]:
    """The parts' tokens in order, each part encoded once (`memo` is keyed by the text itself: a tokenization is
    a function of its text alone)."""
    tokens: list[int] = []
    for text in parts:
        found = memo.get(text)
        if found is None:
            found = memo[text] = _tokens.encode(text)
        tokens += found
    return tokens
