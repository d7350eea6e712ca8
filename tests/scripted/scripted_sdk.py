"""Senders for scripted_agent.run_agent through the real SDKs over the emulator: Chat Completions (streamed or
not), Responses (streamed, as Codex sends it) and Anthropic Messages (streamed or not)."""

from __future__ import annotations

import json

import anthropic
import httpx2
import openai

from harness.models.emulator import EmulatorTransport


def _http(transport: httpx2.BaseTransport) -> httpx2.Client:
    return httpx2.Client(transport=transport)


def chat_sender(transport: httpx2.BaseTransport, model: str, *, stream: bool, url: str = "http://scripted.invalid"):
    client = openai.OpenAI(api_key="test-key", base_url=f"{url}/v1", http_client=_http(transport), max_retries=0)

    def send(messages: list[dict], tools: tuple[dict, ...]):
        kwargs = {"model": model, "messages": messages, "tools": [{"type": "function", "function": t} for t in tools]}
        if not stream:
            message = client.chat.completions.create(**kwargs).choices[0].message
            return message.content or "", [(c.id, c.function.name, json.loads(c.function.arguments))
                                           for c in message.tool_calls or []]
        text, calls = "", {}
        for chunk in client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **kwargs):
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for delta in choice.delta.tool_calls or []:
                    call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                    call["id"] = delta.id or call["id"]
                    call["name"] += (delta.function.name or "") if delta.function else ""
                    call["arguments"] += (delta.function.arguments or "") if delta.function else ""
        return text, [(c["id"], c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]
    return send


def responses_sender(transport: httpx2.BaseTransport, model: str):
    """Streamed Responses, stateless: the whole history as input items each time, as Codex sends it."""
    client = openai.OpenAI(api_key="test-key", base_url="http://scripted.invalid/v1", http_client=_http(transport),
                           max_retries=0)

    def send(messages: list[dict], tools: tuple[dict, ...]):
        items: list[dict] = []
        for m in messages[1:]:
            if m["role"] == "tool":
                items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
                continue
            if m.get("content"):
                items.append({"role": m["role"], "content": m["content"]})
            for c in m.get("tool_calls") or []:
                items.append({"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
                              "arguments": c["function"]["arguments"]})
        completed = None
        for event in client.responses.create(model=model, instructions=messages[0]["content"], input=items,
                                             tools=[{"type": "function", **t} for t in tools], stream=True,
                                             store=False):
            if event.type == "response.completed":
                completed = event.response
        assert completed is not None, "no response.completed event"
        text = "".join(p.text for o in completed.output if o.type == "message" for p in o.content
                       if p.type == "output_text")
        return text, [(o.call_id, o.name, json.loads(o.arguments)) for o in completed.output
                      if o.type == "function_call"]
    return send


def anthropic_sender(transport: httpx2.BaseTransport, model: str, *, stream: bool):
    client = anthropic.Anthropic(api_key="test-key", base_url="http://scripted.invalid", http_client=_http(transport),
                                 max_retries=0)

    def send(messages: list[dict], tools: tuple[dict, ...]):
        wire: list[dict] = []
        for m in messages[1:]:
            if m["role"] == "tool":
                block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
                if wire and wire[-1]["role"] == "user" and isinstance(wire[-1]["content"], list):
                    wire[-1]["content"].append(block)
                else:
                    wire.append({"role": "user", "content": [block]})
            elif m["role"] == "assistant":
                blocks = [{"type": "text", "text": m["content"]}] if m.get("content") else []
                blocks += [{"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                            "input": json.loads(c["function"]["arguments"])} for c in m.get("tool_calls") or []]
                wire.append({"role": "assistant", "content": blocks})
            else:
                wire.append({"role": "user", "content": m["content"]})
        kwargs = {"model": model, "max_tokens": 4096, "system": messages[0]["content"], "messages": wire,
                  "tools": [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
                            for t in tools]}
        if stream:
            with client.messages.stream(**kwargs) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**kwargs)
        text = "".join(b.text for b in message.content if b.type == "text")
        return text, [(b.id, b.name, dict(b.input)) for b in message.content if b.type == "tool_use"]
    return send


__all__ = ["EmulatorTransport", "anthropic_sender", "chat_sender", "responses_sender"]
