"""A reply that is not what the wire promises (issue 33.2): an HTML page, an event stream where JSON was asked
or JSON of another shape, answered with 200 through the real SDKs over an in-process transport, is a failed
request of its role that costs only the probes that needed it (never an AttributeError blamed on case.toml),
and is never recorded; a recorded success of the wrong shape is a named miss on replay, and under
`--record-mode new` it is asked again and replaced in the cassette."""

from __future__ import annotations

import json

import pytest

from harness.cases import discover
from harness.failure import RequestFailed
from harness.models.anthropic import AnthropicClient
from harness.models.anthropic_compact import AnthropicCompactClient
from harness.models.base import ChatMessage, ModelRequest
from harness.models.emulator import Emulator, EmulatorTransport
from harness.models.openai_compact import OpenAICompactClient
from harness.models.registry import check_spec
from harness.models.reply import reply_problem
from harness.results.folder import RunFolder
from harness.run.config import RunConfig
from harness.run.matrix import run_cases
from test_failed_requests import EMULATED, PROBES, SESSION, emulate
from test_runner import make_case

HTML = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
STREAM = b'event: message_start\ndata: {"type": "message_start"}\n\n'
BAD_REPLIES = {
    "html": ("text/html", HTML, "HTML, not JSON (starts '<!DOCTYPE html>"),
    "stream": ("text/event-stream", STREAM, "an event stream where JSON was asked"),
    "no choices": ("application/json", b'{"id": "x", "object": "chat.completion"}', "no `choices` list"),
    "choice not object": ("application/json", b'{"choices": ["a"]}', "no `choices` list of objects"),
    "usage text": ("application/json",
                   b'{"choices": [{"message": {"content": "pnpm"}}], "usage": {"prompt_tokens": "many"}}',
                   "`usage.prompt_tokens` is not a whole number"),
    "list": ("application/json", b"[1, 2]", "JSON list, not an object"),
}


class BadReplies(Emulator):
    """The emulator answering the POSTs numbered in `bad` (1-based) with a 200 of `content`."""

    def __init__(self, bad: set[int], content_type: str, content: bytes) -> None:
        super().__init__()
        self.bad, self.content_type, self.content, self.posts = bad, content_type, content, 0

    def handle(self, method, path, body, headers=None):
        if method == "POST":
            self.posts += 1
            if self.posts in self.bad:
                return 200, {"content-type": self.content_type}, self.content
        return super().handle(method, path, body, headers)


@pytest.fixture
def cases(tmp_path):
    make_case(tmp_path / "cases", "multi", session=SESSION, probes=PROBES)
    return tmp_path / "cases"


def run_with(tmp_path, cases, out: str, cassettes: str, mode: str = "new", **config) -> dict:
    options = {"record_mode": mode, "cassettes": str(tmp_path / cassettes), "retries": 0, **config}
    return run_cases(discover(cases), RunConfig(**options), RunFolder(tmp_path / out), run_id="r")


@pytest.mark.parametrize("kind", sorted(BAD_REPLIES))
def test_a_bad_200_answer_costs_only_its_probe(tmp_path, cases, monkeypatch, kind):
    content_type, content, problem = BAD_REPLIES[kind]
    emulate(monkeypatch, BadReplies({1}, content_type, content))  # probe early's compacted answer
    run = run_with(tmp_path, cases, "out", "cassettes", answerer=EMULATED)
    case = run["cases"]["multi"]
    assert case["status"] == "ok"  # the case is not lost
    probes = {p["id"]: p for p in case["probes"]}
    compacted = probes["early"]["conditions"]["compacted"]
    assert compacted["failure"]["request"] == "answer"
    assert compacted["failure"]["error"].startswith(f"{EMULATED}: unreadable response: {problem}")
    assert compacted["retained"] is True and "answered" not in compacted
    assert probes["early"]["conditions"]["full"]["answered"] is True
    assert "failure" not in json.dumps(probes["late"])
    recorded = json.loads(next((tmp_path / "cassettes").rglob("*.json")).read_text())["interactions"]
    assert recorded and all(reply_problem(i["request"]["path"], json.dumps(i["response"]["body"]).encode()) is None
                            for i in recorded)  # the bad reply was not recorded


@pytest.mark.parametrize("spec", [EMULATED, "anthropic:claude-sonnet-4-6@emulator"])
def test_an_html_summarizer_reply_keeps_the_earlier_probes(tmp_path, cases, monkeypatch, spec):
    emulate(monkeypatch, BadReplies({2}, "text/html", HTML))  # the second summarizer call
    run = run_with(tmp_path, cases, "out", "cassettes", summarizer=spec)
    probes = {p["id"]: p for p in run["cases"]["multi"]["probes"]}
    assert run["cases"]["multi"]["status"] == "ok"
    assert probes["early"]["valid"] and probes["early"]["conditions"]["compacted"]["retained"] is True
    assert probes["late"]["failure"]["request"] == "summarizer" and probes["late"]["failure"]["compaction"] == 2
    assert "HTML, not JSON" in probes["late"]["failure"]["error"]


@pytest.mark.parametrize("broken", ["<html>gateway error</html>", {"id": "x"}, {"choices": [{"message": 7}]}])
def test_a_recorded_body_of_the_wrong_shape_is_a_named_miss_then_re_recorded_under_new(
        tmp_path, cases, monkeypatch, broken):
    emulator = BadReplies(set(), "", b"")
    emulate(monkeypatch, emulator)
    assert run_with(tmp_path, cases, "first", "cassettes", answerer=EMULATED)["cases"]["multi"]["status"] == "ok"
    cassette = next((tmp_path / "cassettes").rglob("*.json"))
    document = json.loads(cassette.read_text())
    recorded = len(document["interactions"])
    document["interactions"][0]["response"]["body"] = broken  # an older harness kept a broken 200
    cassette.write_text(json.dumps(document))

    replay = run_with(tmp_path, cases, "replay", "cassettes", mode="none", answerer=EMULATED)["cases"]["multi"]
    assert replay["status"] == "error"
    assert f"cassette {cassette} (case 'multi'): interactions[0] (request " in replay["error"]
    assert "holds a reply of the wrong shape" in replay["error"] and "--record-mode new" in replay["error"]

    emulator.posts = 0
    again = run_with(tmp_path, cases, "again", "cassettes", mode="new", answerer=EMULATED)["cases"]["multi"]
    assert again["status"] == "ok" and emulator.posts == 1  # only the broken one was asked again
    fixed = json.loads(cassette.read_text())["interactions"]
    assert len(fixed) == recorded and broken not in [i["response"]["body"] for i in fixed]
    emulator.posts = 0
    final = run_with(tmp_path, cases, "final", "cassettes", mode="none", answerer=EMULATED)["cases"]["multi"]
    assert final["status"] == "ok" and emulator.posts == 0


@pytest.mark.parametrize("spec, kind", [("openai-compact:gpt-5@emulator", "compact"),
                                        ("anthropic-compact:claude-sonnet-4-6@emulator", "compact"),
                                        ("openai-compact:gpt-5@emulator", "complete"),
                                        ("anthropic:claude-sonnet-4-6@emulator", "complete")])
@pytest.mark.parametrize("reply", ["html", "stream", "list"])
def test_every_adapter_calls_a_bad_200_a_failed_request(spec, kind, reply):
    """The provider-compaction adapters and the Messages adapter, each through its real SDK."""
    content_type, content, problem = BAD_REPLIES[reply]
    adapter = {"openai-compact": OpenAICompactClient, "anthropic-compact": AnthropicCompactClient,
               "anthropic": AnthropicClient}[spec.partition(":")[0]]
    parsed = check_spec(spec)
    client = adapter(parsed, api_key="test-key", transport=EmulatorTransport(BadReplies({1}, content_type, content)),
                     max_retries=0)
    messages = (ChatMessage("user", "Use pnpm, not npm."),)
    with pytest.raises(RequestFailed, match=f"^{spec}: unreadable response: {problem[:12]}"):
        if kind == "compact":
            client.compact(None, messages)
        else:
            client.complete(ModelRequest(parsed.model, None, messages, 64))
