"""The Responses wire streamed: the SSE event sequence the API sends and the openai SDK's stream parser
(and `responses.stream()`) accepts, built from a finished response body. Every event carries its type (also
as the SSE event name) and a `sequence_number` from 0:
  response.created, response.in_progress (the response with no output yet), then per output item
  response.output_item.added, for a message response.content_part.added, response.output_text.delta...,
  response.output_text.done, response.content_part.done; for a function call
  response.function_call_arguments.delta..., response.function_call_arguments.done; then
  response.output_item.done; last response.completed (response.incomplete for a cut reply) with the body.
Runtimes such as Codex read the result only from the final event."""

from __future__ import annotations

from itertools import count
from typing import Any, Callable

from harness.models.emulator.streaming import event, pieces

Send = Callable[..., str]  # one event by type and fields, numbered in order


def responses_stream(body: dict[str, Any]) -> bytes:
    numbers = count()

    def send(kind: str, **fields: Any) -> str:
        return event({"type": kind, "sequence_number": next(numbers), **fields}, kind)

    pending = {**body, "status": "in_progress", "incomplete_details": None, "output": [], "usage": None}
    events = [send("response.created", response=pending), send("response.in_progress", response=pending)]
    for index, item in enumerate(body["output"]):
        if item["type"] == "function_call":
            events += _call_events(send, index, item)
        elif item["type"] == "compaction":  # opaque: added and done whole, no deltas
            events += [send("response.output_item.added", output_index=index, item=item),
                       send("response.output_item.done", output_index=index, item=item)]
        else:
            events += _message_events(send, index, item)
    final = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    events.append(send(final, response=body))
    return "".join(events).encode()


def _message_events(send: Send, index: int, item: dict[str, Any]) -> list[str]:
    where = {"item_id": item["id"], "output_index": index}
    out = [send("response.output_item.added", output_index=index,
                item={**item, "status": "in_progress", "content": []})]
    for part_index, part in enumerate(item["content"]):
        at = {**where, "content_index": part_index}
        out.append(send("response.content_part.added", **at, part={**part, "text": ""}))
        out += [send("response.output_text.delta", **at, delta=p, logprobs=[]) for p in pieces(part["text"])]
        out.append(send("response.output_text.done", **at, text=part["text"], logprobs=[]))
        out.append(send("response.content_part.done", **at, part=part))
    out.append(send("response.output_item.done", output_index=index, item=item))
    return out


def _call_events(send: Send, index: int, item: dict[str, Any]) -> list[str]:
    where = {"item_id": item["id"], "output_index": index}
    out = [send("response.output_item.added", output_index=index,
                item={**item, "arguments": "", "status": "in_progress"})]
    out += [send("response.function_call_arguments.delta", **where, delta=p) for p in pieces(item["arguments"])]
    out.append(send("response.function_call_arguments.done", **where, name=item["name"], arguments=item["arguments"]))
    out.append(send("response.output_item.done", output_index=index, item=item))
    return out
