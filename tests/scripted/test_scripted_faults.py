"""Faults on summarization requests (`--summary-fault`), as a runtime's own SDK meets them: through the real OpenAI
and Anthropic SDKs over the emulator, in each wire's own shape; only summarization requests are faulted, the
first N of them; the observer and the request log say which request got which fault."""

from __future__ import annotations

import json
import time

import anthropic
import httpx2
import openai
import pytest

from harness.errors import HarnessError
from harness.models.builtin import BuiltinClient
from harness.models.emulator import Emulator, EmulatorServer, EmulatorTransport
from harness.runtimes.observe import Observer
from harness.scripted import ScriptedModel, load_signatures, script_from_session
from harness.scripted.faults import SummaryFault, parse_summary_fault
from harness.scripted.log import RequestLog
from harness.session import Message, Session
from test_scripted_compaction import CODEX_PROMPT, PI_SYSTEM, PI_USER

PI_MESSAGES = [{"role": "system", "content": PI_SYSTEM}, {"role": "user", "content": PI_USER}]


def _served(fault: SummaryFault | None, log: RequestLog | None = None) -> tuple[Emulator, Observer]:
    script = script_from_session(Session((Message("user", "hi"), Message("assistant", "hello")), None))
    model = ScriptedModel(script, signatures=load_signatures(), summarizer=BuiltinClient(), log=log, fault=fault)
    observer = Observer(model)
    return Emulator(responder=observer), observer


def _chat(emulator: Emulator) -> openai.OpenAI:
    return openai.OpenAI(api_key="k", base_url="http://scripted.invalid/v1", max_retries=0,
                         http_client=httpx2.Client(transport=EmulatorTransport(emulator)))


def _streamed(client: openai.OpenAI) -> tuple[str, str | None]:
    """(text, finish reason) of a streamed Chat Completions summarization request, as pi sends it."""
    text, finish = "", None
    for chunk in client.chat.completions.create(model="m", messages=PI_MESSAGES, stream=True,
                                                stream_options={"include_usage": True}):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    return text, finish


def test_a_500_is_the_chat_wires_server_error_and_only_summarization_requests_get_it():
    emulator, observer = _served(parse_summary_fault("500"))
    client = _chat(emulator)
    with pytest.raises(openai.InternalServerError) as raised:
        _streamed(client)
    assert raised.value.status_code == 500 and "injected" in str(raised.value)
    turn = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert turn.choices[0].message.content == "hello"  # a turn request is never faulted
    assert [(s.kind, s.fault) for s in observer.seen] == [("compaction", "500"), ("turn", None)]


def test_empty_is_a_well_formed_reply_with_no_text_and_cut_stops_halfway_with_the_length_finish():
    whole, finish = _streamed(_chat(_served(None)[0]))
    assert whole and finish == "stop"
    assert _streamed(_chat(_served(parse_summary_fault("empty"))[0])) == ("", "stop")
    cut, finish = _streamed(_chat(_served(parse_summary_fault("cut"))[0]))
    assert finish == "length" and 0 < len(cut) < len(whole) * 0.75 and whole.startswith(cut.strip()[:200])


def test_only_the_first_n_are_faulted_and_identical_retries_share_a_digest():
    emulator, observer = _served(parse_summary_fault("500:2"))
    client = _chat(emulator)
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            _streamed(client)
    assert _streamed(client)[0]  # the third gets its summary
    assert [s.fault for s in observer.seen] == ["500", "500", None]
    assert len({s.digest for s in observer.seen}) == 1 and observer.seen[2].reply


def test_responses_and_messages_wires_get_their_own_shapes():
    emulator, _ = _served(parse_summary_fault("cut"))
    responses = openai.OpenAI(api_key="k", base_url="http://scripted.invalid/v1", max_retries=0,
                              http_client=httpx2.Client(transport=EmulatorTransport(emulator)))
    done = responses.responses.create(model="m", input=[{"role": "user", "content": CODEX_PROMPT}])
    assert done.status == "incomplete" and done.incomplete_details.reason == "max_output_tokens"
    emulator, _ = _served(parse_summary_fault("500"))
    messages = anthropic.Anthropic(api_key="k", base_url="http://scripted.invalid", max_retries=0,
                                   http_client=httpx2.Client(transport=EmulatorTransport(emulator)))
    with pytest.raises(anthropic.InternalServerError) as raised:
        messages.messages.create(model="m", max_tokens=2000, system=PI_SYSTEM,
                                 messages=[{"role": "user", "content": PI_USER}])
    assert raised.value.body["error"]["type"] == "api_error"


def test_a_timeout_holds_the_connection_then_closes_it_with_nothing_sent(tmp_path, loopback):
    log = RequestLog(tmp_path / "requests.jsonl")
    emulator, observer = _served(parse_summary_fault("timeout:1", hold_s=0.5), log)
    with EmulatorServer(0, emulator=emulator) as server:
        client = openai.OpenAI(api_key="k", base_url=f"{server.url}/v1", max_retries=0, timeout=30)
        started = time.monotonic()
        with pytest.raises(openai.APIConnectionError):
            client.chat.completions.create(model="m", messages=PI_MESSAGES)
        assert 0.5 <= time.monotonic() - started < 10  # held, then closed: the client did not wait its 30 s
        assert client.chat.completions.create(model="m", messages=PI_MESSAGES).choices[0].message.content
    log.close()
    assert [s.fault for s in observer.seen] == ["timeout", None]
    notes = [json.loads(line)["note"] for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    assert notes == ["injected fault: timeout", None]


@pytest.mark.parametrize("spec, message", [("slow", "KIND is one of timeout, 500, empty, cut"),
                                           ("500:0", r"N \(after the colon\) is a whole number"),
                                           ("cut:x", r"N \(after the colon\) is a whole number")])
def test_a_bad_fault_is_named(spec, message):
    with pytest.raises(HarnessError, match=message):
        parse_summary_fault(spec)


def test_a_fault_spec_reads_back():
    assert parse_summary_fault("empty").spec == "empty" and parse_summary_fault("timeout:3").spec == "timeout:3"
    assert parse_summary_fault("timeout:3").count == 3 and parse_summary_fault("500").count is None


def test_a_client_hanging_up_prints_no_traceback_but_a_server_error_still_does(loopback, capsys):
    with EmulatorServer(0) as server:
        for error in (ConnectionResetError(104, "Connection reset by peer"), ValueError("a server bug")):
            try:
                raise error
            except Exception:
                server.httpd.handle_error(None, ("127.0.0.1", 1))
    err = capsys.readouterr().err
    assert "ConnectionResetError" not in err and "ValueError: a server bug" in err
