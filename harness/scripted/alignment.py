"""Is a turn request the one the script expects? Its newest message must be the user prompt of the next step,
or the outputs of the previous step's calls (a runtime may wrap an output, as Codex's "Chunk ID: ...\\nOutput:\\n"
header does, and cut a long one: the output's head or its end must be in what came back). Otherwise the replay
has drifted and the case stops: `drift at step K: expected ..., got ...`."""

from __future__ import annotations

from harness.models.base import ChatMessage, ModelRequest
from harness.scripted.steps import Expected, ScriptStep

HEAD_CHARS = 200  # how much of an output must arrive intact: runtimes cut long outputs after their head


def drift(step: ScriptStep | None, total: int, request: ModelRequest) -> str | None:
    """None when `request` fits `step`; else the one-line drift message."""
    newest = request.messages[-1] if request.messages else None
    if step is None:
        return f"drift at step {total + 1}: expected no more turn requests (all {total} steps used), " \
               f"got {describe(newest)}; {request_head(request)}"
    problem = _mismatch(step.before, request.messages)
    if problem is None:
        return None
    expected, got = problem
    return f"drift at step {step.number}: expected {expected.describe()}, got {got}; {request_head(request)}"


def request_head(request: ModelRequest) -> str:
    """What a drifted request was, to place it by eye: classified a turn (no compaction or side signature
    matched it), its size, and its last text block (a summarization prompt after a tool result shows here)."""
    last = next((m for m in reversed(request.messages) if m.content.strip()), None)
    block = f"last text block from the {last.role} {_flat(last.content)}" if last else "no text"
    return f"the request (a turn: no compaction or side signature matched; {len(request.messages)} messages, " \
           f"{len(request.tools)} tools): {block}"


def _mismatch(before: tuple[Expected, ...], messages: tuple[ChatMessage, ...]) -> tuple[Expected, str] | None:
    newest = messages[-1] if messages else None
    if before[0].kind == "user":
        expected = before[0]
        if newest is None or newest.role != "user" or not carries(newest.content, expected.text):
            return expected, describe(newest)
        return None
    results = _trailing_results(messages)
    if not results:
        return before[-1], describe(newest)
    ids = {expected.call_id for expected in before}
    by_id = {r.tool_call_id: r for r in results}
    for position, expected in enumerate(before):
        result = by_id.get(expected.call_id)
        if result is None and position < len(results) and results[position].tool_call_id not in ids:
            result = results[position]  # a wire that drops call ids (Gemini's may): the result in call order
        if result is None:
            found = ", ".join(str(r.tool_call_id) for r in results)
            return expected, f"no result for that call (results for {found})"
        if not carries(result.content, expected.text):
            return expected, describe(result)
    return None


def _trailing_results(messages: tuple[ChatMessage, ...]) -> list[ChatMessage]:
    """The tool results after the newest assistant message, in order."""
    found: list[ChatMessage] = []
    for message in reversed(messages):
        if message.role == "assistant":
            break
        if message.role == "tool":
            found.insert(0, message)
    return found


def carries(received: str, recorded: str) -> bool:
    """The recorded text's head arrived, or its end (pi keeps a long output's last 50 KB); an empty
    recorded output matches whatever the runtime says for it."""
    text = recorded.strip()
    return not text or text[:HEAD_CHARS] in received or text[-HEAD_CHARS:] in received


def _flat(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")


def describe(message: ChatMessage | None) -> str:
    if message is None:
        return "a request with no messages"
    shown = _flat(message.content)
    if message.role == "tool":
        return f"a tool result for call {message.tool_call_id} {shown}"
    if message.role == "assistant":
        return f"an assistant message {shown}" + (" with calls" if message.tool_calls else "")
    return f"a user message {shown}"
