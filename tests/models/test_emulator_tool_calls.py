"""Tool calls on every wire through the real SDKs over the in-process transport (issue 27, "Done when", wire
part): the model calls the shell tool, the SDK parses the call (streamed and not), the output sent back gets
the next step; and the same over `serve` on a loopback socket."""

from __future__ import annotations

import json

import anthropic
import httpx2
import openai
import pytest
from agent_responder import COMMAND, SHELL_TOOL, CallThenText

from harness.models.emulator import Emulator, EmulatorServer, EmulatorTransport

OUTPUT = "SECRET-FACT: the deploy key rotates on Tuesdays."
CHAT_TOOLS = [{"type": "function", "function": SHELL_TOOL}]
RESPONSES_TOOLS = [{"type": "function", **SHELL_TOOL}, {"type": "web_search"}]  # the second is not a function
MESSAGES_TOOLS = [{"name": "bash", "description": SHELL_TOOL["description"], "input_schema": SHELL_TOOL["parameters"]}]
PROMPT = "Read notes.txt fully."
QUESTION = "The dev server port is 9090.\n\nQuestion: Which port does the dev server use?"


def sdks(emulator: Emulator) -> tuple[openai.OpenAI, anthropic.Anthropic]:
    http = httpx2.Client(transport=EmulatorTransport(emulator))
    return (openai.OpenAI(api_key="k", base_url="http://e.invalid/v1", http_client=http, max_retries=0),
            anthropic.Anthropic(api_key="k", base_url="http://e.invalid", http_client=http, max_retries=0))


def chat_followup(call_id: str, arguments: str, text: str | None = None) -> list[dict]:
    call = {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": arguments}}
    return [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": text, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": OUTPUT}]


def test_chat_completions_tool_call_then_text() -> None:
    responder = CallThenText()
    client, _ = sdks(Emulator(responder=responder))
    first = client.chat.completions.create(model="gpt-5", tools=CHAT_TOOLS,
                                           messages=[{"role": "user", "content": PROMPT}])
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    (call,) = choice.message.tool_calls
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == ("call_1", "bash", {"command": COMMAND})
    second = client.chat.completions.create(model="gpt-5", tools=CHAT_TOOLS,
                                            messages=chat_followup(call.id, call.function.arguments))
    assert second.choices[0].finish_reason == "stop"
    assert second.choices[0].message.content == f"The file says: {OUTPUT} (answer to call_1)"
    assert first.usage.completion_tokens > 0 and second.usage.prompt_tokens > first.usage.prompt_tokens
    assert responder.seen[0][0].tools == (SHELL_TOOL,)  # the tool reached the responder, provider-neutral


def test_chat_completions_streamed_text_then_call() -> None:
    client, _ = sdks(Emulator(responder=CallThenText(preamble="I will read the whole file with cat first.")))
    with client.chat.completions.stream(model="gpt-5", tools=CHAT_TOOLS,
                                        messages=[{"role": "user", "content": PROMPT}]) as stream:
        events = list(stream)
        final = stream.get_final_completion()
    assert sum(e.type == "content.delta" for e in events) >= 2  # the text came in pieces, before the call
    assert sum(e.type == "tool_calls.function.arguments.delta" for e in events) >= 2
    message = final.choices[0].message
    assert final.choices[0].finish_reason == "tool_calls"
    assert message.content == "I will read the whole file with cat first."
    assert json.loads(message.tool_calls[0].function.arguments) == {"command": COMMAND}
    chunks = list(client.chat.completions.create(
        model="gpt-5", tools=CHAT_TOOLS, stream=True,
        messages=chat_followup("call_1", message.tool_calls[0].function.arguments, message.content)))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == \
        f"The file says: {OUTPUT} (answer to call_1)"


def test_responses_streamed_function_call_then_the_output_gets_the_next_step() -> None:
    responder = CallThenText(preamble="Reading it.")
    client, _ = sdks(Emulator(responder=responder))
    with client.responses.stream(model="gpt-5", tools=RESPONSES_TOOLS, input=PROMPT) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert {"response.output_text.delta", "response.function_call_arguments.delta",
            "response.function_call_arguments.done", "response.content_part.done"} <= set(kinds)
    assert [e.sequence_number for e in events] == list(range(len(events)))
    message, call = final.output
    assert message.content[0].text == "Reading it." and final.status == "completed"
    assert (call.type, call.call_id, call.name, json.loads(call.arguments)) == \
        ("function_call", "call_1", "bash", {"command": COMMAND})
    assert responder.seen[0][0].tools == (SHELL_TOOL,)  # web_search is no function tool: left out
    followup = [{"role": "user", "content": [{"type": "input_text", "text": PROMPT}]},
                {"type": "reasoning", "id": "rs_1", "summary": []},  # sent back by runtimes: ignored
                {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
                {"type": "function_call_output", "call_id": call.call_id, "output": OUTPUT}]
    raw = list(client.responses.create(model="gpt-5", tools=RESPONSES_TOOLS, input=followup, stream=True))
    done = raw[-1]
    assert done.type == "response.completed" and done.response.output_text == \
        f"The file says: {OUTPUT} (answer to call_1)"
    assert done.response.usage.input_tokens > final.usage.input_tokens


def test_responses_not_streamed_and_the_builtin_streams_too() -> None:
    client, _ = sdks(Emulator(responder=CallThenText()))
    plain = client.responses.create(model="gpt-5", tools=RESPONSES_TOOLS, input=PROMPT)
    assert [o.type for o in plain.output] == ["function_call"] and plain.output[0].call_id == "call_1"
    builtin, _ = sdks(Emulator())  # no responder: the builtin answers a streamed request (Codex's) in text
    with builtin.responses.stream(model="gpt-5", input=QUESTION) as stream:
        final = stream.get_final_response()
    assert final.status == "completed" and final.output_text
    assert final.output_text == builtin.responses.create(model="gpt-5", input=QUESTION).output_text


def test_responses_input_roles_and_instructions() -> None:
    responder = CallThenText()
    client, _ = sdks(Emulator(responder=responder))
    client.responses.create(model="gpt-5", instructions="Be terse.", tools=RESPONSES_TOOLS, input=[
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": PROMPT}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "On it."}]},
        {"type": "message", "role": "user", "content": "Go on."}])
    request = responder.seen[0][0]
    assert request.system == "Be terse.\nYou are Codex."
    assert [(m.role, m.content) for m in request.messages] == [("user", PROMPT), ("assistant", "On it."),
                                                               ("user", "Go on.")]
    with pytest.raises(openai.BadRequestError, match=r"input\[0\]\.type: 'image_generation_call' is not supported here"):
        client.responses.create(model="gpt-5", input=[{"type": "image_generation_call", "id": "x"}])


def messages_followup(call: anthropic.types.ToolUseBlock) -> list[dict]:
    return [{"role": "user", "content": PROMPT},
            {"role": "assistant", "content": [{"type": "tool_use", "id": call.id, "name": call.name,
                                               "input": call.input}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": OUTPUT}]}]


def test_messages_tool_use_streamed_and_not() -> None:
    responder = CallThenText(preamble="Reading.", call_id="toolu_1")
    _, client = sdks(Emulator(responder=responder))
    first = client.messages.create(model="claude-sonnet-4-6", max_tokens=1000, tools=MESSAGES_TOOLS,
                                   messages=[{"role": "user", "content": PROMPT}])
    assert first.stop_reason == "tool_use" and [b.type for b in first.content] == ["text", "tool_use"]
    call = first.content[1]
    assert (call.id, call.name, call.input) == ("toolu_1", "bash", {"command": COMMAND})
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=1000, tools=MESSAGES_TOOLS,
                                messages=[{"role": "user", "content": PROMPT}]) as stream:
        events = list(stream)
        streamed = stream.get_final_message()
    assert any(e.type == "input_json" for e in events)  # the SDK assembled input_json_delta pieces
    assert streamed.stop_reason == "tool_use" and streamed.content[1].input == {"command": COMMAND}
    assert responder.seen[0][0].tools == (SHELL_TOOL,)
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=1000, tools=MESSAGES_TOOLS,
                                messages=messages_followup(call)) as stream:
        answer = stream.get_final_message()
    assert answer.stop_reason == "end_turn" and answer.content[0].text == \
        f"The file says: {OUTPUT} (answer to toolu_1)"


def test_a_cut_reply_makes_no_call() -> None:
    """Over the output limit the text is cut and the calls it had not finished are dropped."""
    client, _ = sdks(Emulator(responder=CallThenText(preamble="word " * 50)))
    cut = client.chat.completions.create(model="gpt-5", tools=CHAT_TOOLS, max_completion_tokens=5,
                                         messages=[{"role": "user", "content": PROMPT}])
    assert cut.choices[0].finish_reason == "length" and cut.choices[0].message.tool_calls is None


def test_streamed_responses_over_serve_on_loopback(loopback: None) -> None:
    with EmulatorServer(port=0, emulator=Emulator(responder=CallThenText())) as server, httpx2.Client() as http:
        client = openai.OpenAI(api_key="k", base_url=f"{server.url}/v1", http_client=http, max_retries=0)
        with client.responses.stream(model="gpt-5", tools=RESPONSES_TOOLS, input=PROMPT) as stream:
            final = stream.get_final_response()
        call = final.output[0]
        answer = client.responses.create(model="gpt-5", tools=RESPONSES_TOOLS, input=[
            {"role": "user", "content": PROMPT},
            {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": OUTPUT}])
    assert call.name == "bash" and json.loads(call.arguments) == {"command": COMMAND}
    assert answer.output_text == f"The file says: {OUTPUT} (answer to call_1)"


def test_a_cut_streamed_response_ends_incomplete() -> None:
    emulator = Emulator(responder=CallThenText(preamble="word " * 50))
    client, _ = sdks(emulator)
    events = list(client.responses.create(model="gpt-5", tools=RESPONSES_TOOLS, input=PROMPT, stream=True,
                                          max_output_tokens=5))
    last = events[-1]
    assert last.type == "response.incomplete" and last.response.incomplete_details.reason == "max_output_tokens"
    assert [o.type for o in last.response.output] == ["message"]  # the unfinished call is not sent
