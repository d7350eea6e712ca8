"""The loopback servers answer every request (issue 44): `serve` (the emulator, builtin model) and `serve --script`
(the emulator with a case's replay as its responder), on each wire (Chat Completions, Responses, Messages,
Gemini). Malformed, wrong-shape, huge, deeply nested, huge-integer and NaN bodies, every field of a valid
request swapped for a value of another type or removed, arbitrary JSON (hypothesis), cut bodies and cut
streams, and 50 clients connecting at once: every request gets a well-formed reply in the wire's own shape
(a bad one a 4xx naming the field), the connection is never dropped, and the server logs nothing."""

from __future__ import annotations

import copy
import json
import random
import socket
import threading
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.models.emulator import Emulator, EmulatorServer
from harness.models.emulator.request_schema import MAX_DEPTH
from harness.models.emulator.serve import MAX_BODY_BYTES
from harness.scripted import open_replays, scripted_emulator

CASE = "cases/desktop-go-env-config"
TOOL = {"type": "object", "properties": {"cmd": {"type": "string"}}}
CHAT = {"model": "gpt-5", "max_tokens": 40, "stream": False, "stream_options": {"include_usage": True},
        "tools": [{"type": "function", "function": {"name": "bash", "description": "run", "parameters": TOOL}}],
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Which port?"},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "9090"}]}]}
RESPONSES = {"model": "gpt-5", "instructions": "Be brief.", "max_output_tokens": 40,
             "tools": [{"type": "function", "name": "bash", "parameters": TOOL}],
             "input": [{"role": "user", "content": [{"type": "input_text", "text": "Which port?"}]},
                       {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"},
                       {"type": "function_call_output", "call_id": "c1", "output": "9090"}]}
MESSAGES = {"model": "claude-haiku-4-5", "max_tokens": 40, "system": [{"type": "text", "text": "Be brief."}],
            "tools": [{"name": "bash", "input_schema": TOOL, "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
            "messages": [{"role": "user", "content": "Which port?"},
                         {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash",
                                                            "input": {"cmd": "ls"}}]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                       "content": "9090", "is_error": False}]}]}
GEMINI = {"systemInstruction": {"parts": [{"text": "Be brief."}]}, "generationConfig": {"maxOutputTokens": 40},
          "tools": [{"functionDeclarations": [{"name": "bash", "parameters": TOOL}]}],
          "contents": [{"role": "user", "parts": [{"text": "Which port?"}]},
                       {"role": "model", "parts": [{"functionCall": {"name": "bash", "args": {"cmd": "ls"}}}]},
                       {"role": "user", "parts": [{"functionResponse": {"name": "bash",
                                                                        "response": {"output": "9090"}}}]}]}
# wire -> (path, a valid body)
WIRES = {"chat": ("/v1/chat/completions", CHAT), "responses": ("/v1/responses", RESPONSES),
         "messages": ("/v1/messages", MESSAGES), "gemini": ("/v1beta/models/gemini-2.5-pro:generateContent", GEMINI)}
SUCCESS_KEY = {"chat": "choices", "responses": "output", "messages": "content", "gemini": "candidates"}
WRONG_VALUES: list[Any] = [None, -1, 0, 10**40, 1.5, True, "yes", "", [], {}, [1, 2], {"a": {"b": [None]}}]


# -- the servers


class Served:
    """A server on loopback and the lines it logged."""

    def __init__(self, emulator: Emulator) -> None:
        self.logged: list[str] = []
        self.server = EmulatorServer(0, emulator=emulator, log=self.logged.append).start()
        self.host, self.port = self.server.httpd.server_address[:2]


@pytest.fixture(scope="module", params=["serve", "serve --script"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    if request.param == "serve":
        emulator = Emulator()
    else:
        emulator = scripted_emulator(open_replays([CASE], tmp_path_factory.mktemp("script")))
    served = Served(emulator)
    yield served
    served.server.stop()


# -- one exchange over a raw socket (so nothing in a client library hides a dropped connection)


def exchange(served: Served, path: str, body: bytes, headers: dict[str, str] | None = None,
             cut_body: bool = False) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of one request on a fresh connection; a reset or closed connection fails."""
    head = {"host": "127.0.0.1", "content-type": "application/json", "content-length": str(len(body)),
            **(headers or {})}
    data = (f"POST {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items()) + "\r\n").encode()
    with socket.create_connection((served.host, served.port), timeout=60) as connection:
        connection.sendall(data + (body[: len(body) // 2] if cut_body else body))
        if cut_body:
            connection.shutdown(socket.SHUT_WR)
        return read_reply(connection)


def read_reply(connection: socket.socket) -> tuple[int, dict[str, str], bytes]:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(65536)
        assert chunk, f"connection closed without a reply (got {received[:200]!r})"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers["content-length"])
    while len(body) < length:
        chunk = connection.recv(65536)
        assert chunk, "connection closed in the middle of the reply"
        body += chunk
    return int(lines[0].split()[1]), headers, body[:length]


def assert_well_formed(wire: str, status: int, headers: dict[str, str], body: bytes) -> dict[str, Any] | None:
    """A success in the wire's shape (JSON or an event stream), or a 4xx in the wire's error shape; the
    error body is returned."""
    assert status < 500, (status, body[:300])
    if status == 200:
        if headers["content-type"] == "text/event-stream":
            events = [line[6:] for line in body.decode().splitlines() if line.startswith("data: ")]
            assert events and all(e == "[DONE]" or isinstance(json.loads(e), dict) for e in events)
        else:
            assert SUCCESS_KEY[wire] in json.loads(body)
        return None
    error = json.loads(body)
    if wire == "messages":
        assert error["type"] == "error" and isinstance(error["error"]["message"], str) and error["error"]["type"]
    elif wire == "gemini":
        assert error["error"]["code"] == status and error["error"]["status"] and error["error"]["message"]
    else:
        assert isinstance(error["error"]["message"], str) and error["error"]["type"]
    return error


def message_of(wire: str, error: dict[str, Any]) -> str:
    return error["error"]["message"]


def assert_quiet(served: Served, capfd: pytest.CaptureFixture[str]) -> None:
    assert served.logged == []
    assert "Traceback" not in capfd.readouterr().err


# -- the bodies


def paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key and index path in a JSON document."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield (*at, key)
        yield from paths(child, (*at, key))


def replaced(document: Any, path: tuple[Any, ...], value: Any, delete: bool = False) -> Any:
    out = copy.deepcopy(document)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return out


def damaged(body: dict[str, Any], count: int, seed: int) -> list[bytes]:
    """`count` copies of a valid body, each with one field swapped for a value of another type or removed."""
    rng = random.Random(seed)
    every = list(paths(body))
    out = []
    for _ in range(count):
        path = rng.choice(every)
        delete = rng.random() < 0.2
        out.append(json.dumps(replaced(body, path, rng.choice(WRONG_VALUES), delete)).encode())
    return out


@pytest.mark.parametrize("wire", WIRES)
def test_named_bad_bodies_are_a_4xx_in_the_wire_shape(served: Served, wire: str, capfd, loopback: None) -> None:
    path, valid = WIRES[wire]
    first = next(iter(valid))  # a field every wire's body starts with (model, or Gemini's systemInstruction)
    bad = {b"{": "body is not JSON", b"[1, 2]": "body: must be an object", b"null": "body: must be an object",
           b'"text"': "body: must be an object", b"[" * 5000 + b"]" * 5000: f"nests deeper than {MAX_DEPTH}",
           b'{"n": ' + b"9" * 5000 + b"}": "body is not JSON the API accepts",
           json.dumps({**valid, "x": float("nan")}).encode(): "NaN is not a JSON number",
           json.dumps({**valid, "x": float("inf")}).encode(): "Infinity is not a JSON number",
           b"\xff\xfe{}": "body is not UTF-8",
           json.dumps({**valid, first: [1]}).encode(): f"{first}: must be"}
    for body, words in bad.items():
        status, headers, reply = exchange(served, path, body)
        error = assert_well_formed(wire, status, headers, reply)
        assert status == 400 and error is not None and words in message_of(wire, error), (body[:80], reply)
    assert_quiet(served, capfd)


# A field of the wrong type in each wire's valid body, and the field the 400 must name.
WRONG_FIELDS = {
    "chat": [(("max_tokens",), -1, "max_tokens: must be at least 1"), (("stream",), "yes", "stream: must be a boolean"),
             (("messages", 1, "role"), "robot", "messages[1].role: 'robot' is not supported here"),
             (("messages", 2, "tool_calls", 0, "function"), None, "messages[2].tool_calls[0].function: must be"),
             (("messages",), [], "messages: must not be empty"), (("model",), 5, "model: must be a string")],
    "responses": [(("max_output_tokens",), 0, "max_output_tokens: must be at least 1"),
                  (("input", 1, "arguments"), {"a": 1}, "input[1].arguments: must be a string"),
                  (("input", 2, "call_id"), None, "input[2].call_id: must be a string"),
                  (("input",), "", "input: must not be empty"), (("stream",), 1, "stream: must be a boolean")],
    "messages": [(("max_tokens",), 10**40, "max_tokens: must be at most 2147483647"),
                 (("messages", 1, "content", 0, "input"), "ls", "messages[1].content[0].input: must be an object"),
                 (("tools", 0, "cache_control", "ttl"), "2h", "tools[0].cache_control.ttl: '2h' is not supported"),
                 (("system",), 7, "system: must be a string or an array"),
                 (("messages", 0, "role"), "tool", "messages[0].role: 'tool' is not supported here"),
                 (("messages", 0, "content"), [{"type": "image", "source": {}, "cache_control": {"ttl": "2h"}}],
                  "messages[0].content[0].cache_control.ttl: '2h' is not supported")],
    "gemini": [(("generationConfig", "maxOutputTokens"), 1.5, "generationConfig.maxOutputTokens: must be an integer"),
               (("contents", 1, "parts", 0, "functionCall", "args"), [1], "contents[1].parts[0].functionCall.args: must"),
               (("contents",), {}, "contents: must be an array"), (("contents", 0, "parts"), "hi", "parts: must be")],
}


@pytest.mark.parametrize("wire", WIRES)
def test_a_field_of_the_wrong_type_is_a_400_naming_it(served: Served, wire: str, capfd, loopback: None) -> None:
    path, valid = WIRES[wire]
    for field, value, words in WRONG_FIELDS[wire]:
        status, headers, reply = exchange(served, path, json.dumps(replaced(valid, field, value)).encode())
        error = assert_well_formed(wire, status, headers, reply)
        assert status == 400 and error is not None and words in message_of(wire, error), (field, reply)
    assert_quiet(served, capfd)


@pytest.mark.parametrize("wire", WIRES)
def test_every_field_damaged_gets_a_well_formed_reply(served: Served, wire: str, capfd, loopback: None) -> None:
    path, valid = WIRES[wire]
    statuses = set()
    for body in damaged(valid, 60, seed=44):
        status, headers, reply = exchange(served, path, body)
        assert_well_formed(wire, status, headers, reply)
        statuses.add(status)
    assert 400 in statuses  # the damage is seen, not only answered
    assert_quiet(served, capfd)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                           max_leaves=20)


@pytest.mark.parametrize("wire", WIRES)
def test_arbitrary_json_and_random_fields_get_a_well_formed_reply(served: Served, wire: str, loopback: None) -> None:
    path, valid = WIRES[wire]
    keys = st.sampled_from(sorted({p[0] for p in paths(valid)}))

    @settings(max_examples=30, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(document=JSON_VALUES | st.dictionaries(keys, JSON_VALUES).map(lambda d: {**valid, **d}))
    def check(document: Any) -> None:
        status, headers, reply = exchange(served, path, json.dumps(document).encode())
        assert_well_formed(wire, status, headers, reply)

    check()
    assert served.logged == []


@pytest.mark.parametrize("wire", WIRES)
def test_huge_and_cut_bodies(served: Served, wire: str, capfd, loopback: None) -> None:
    path, valid = WIRES[wire]
    huge = json.dumps(replaced(valid, ("model",) if "model" in valid else ("systemInstruction",), "x" * 2_000_000))
    status, headers, reply = exchange(served, path, huge.encode())
    assert_well_formed(wire, status, headers, reply)
    status, headers, reply = exchange(served, path, b"{}", headers={"content-length": str(MAX_BODY_BYTES + 1)})
    assert status == 413 and "more than" in message_of(wire, assert_well_formed(wire, status, headers, reply))
    status, headers, reply = exchange(served, path, json.dumps(valid).encode(), cut_body=True)
    assert status == 400 and "cut short" in message_of(wire, assert_well_formed(wire, status, headers, reply))
    status, headers, reply = exchange(served, path, b"{}", headers={"content-length": "-5"})
    assert status == 400 and "content-length" in message_of(wire, assert_well_formed(wire, status, headers, reply))
    assert_quiet(served, capfd)


def test_a_client_that_hangs_up_mid_stream_leaves_the_server_answering(served: Served, capfd,
                                                                        loopback: None) -> None:
    body = json.dumps({**CHAT, "stream": True, "max_tokens": 400}).encode()
    for _ in range(5):
        with socket.create_connection((served.host, served.port), timeout=60) as connection:
            connection.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: {len(body)}\r\n\r\n"
                               .encode() + body)
            connection.recv(50)  # the first bytes of the reply, then gone
    status, headers, reply = exchange(served, "/v1/chat/completions", json.dumps(CHAT).encode())
    assert_well_formed("chat", status, headers, reply)
    assert_quiet(served, capfd)


def test_fifty_concurrent_clients_all_get_a_reply(served: Served, capfd, loopback: None) -> None:
    """50 clients connect at the same moment (a barrier), half with valid bodies, half with bad ones: none is
    reset (the standard library's backlog of 5 resets some), each reply is well-formed."""
    wires = list(WIRES)
    start = threading.Barrier(50)
    failures: list[str] = []

    def client(number: int) -> None:
        wire = wires[number % len(wires)]
        path, valid = WIRES[wire]
        body = json.dumps(valid).encode() if number % 2 else b"[1, 2]"
        try:
            start.wait(timeout=30)
            status, headers, reply = exchange(served, path, body)
            assert_well_formed(wire, status, headers, reply)
        except Exception as exc:  # noqa: BLE001 (every failure is collected and reported)
            failures.append(f"client {number}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    assert_quiet(served, capfd)


def test_an_error_of_the_responder_is_a_500_in_the_wire_shape_logged_in_one_line(loopback: None, capfd) -> None:
    def broken(request, seen):
        raise KeyError("something the responder did not expect")

    served = Served(Emulator(responder=broken))
    try:
        for wire, (path, valid) in WIRES.items():
            status, headers, reply = exchange(served, path, json.dumps(valid).encode())
            assert status == 500
            error = json.loads(reply)
            assert "internal error in the emulator (KeyError)" in json.dumps(error)
            assert (error["type"] == "error") if wire == "messages" else ("error" in error)
        status, _, _ = exchange(served, *WIRES["chat"][:1], json.dumps(CHAT).encode())  # still answering
    finally:
        served.server.stop()
    assert status == 500 and len(served.logged) == 5
    assert all("\n" not in line and "internal error (KeyError" in line for line in served.logged)
    assert "Traceback" not in capfd.readouterr().err


def test_what_real_runtimes_send_passes_the_check(loopback: None, capfd) -> None:
    """The check refuses what no runtime sends, not what one does: Claude Code's mid-conversation system message
    (its environment) on Messages, and Codex's remote-compaction trigger item on Responses (with the schema entry
    for either removed, this is a 400)."""
    served = Served(Emulator())
    try:
        claude = {**MESSAGES, "messages": [MESSAGES["messages"][0], {"role": "system", "content": "cwd: /w"},
                                           *MESSAGES["messages"][1:]]}
        codex = {**RESPONSES, "input": [*RESPONSES["input"], {"type": "compaction_trigger"}]}
        for wire, body in (("messages", claude), ("responses", codex)):
            status, headers, reply = exchange(served, WIRES[wire][0], json.dumps(body).encode())
            assert status == 200 and assert_well_formed(wire, status, headers, reply) is None, (wire, reply[:300])
    finally:
        served.server.stop()
    assert_quiet(served, capfd)


def test_a_growing_history_is_checked_item_by_item_once_and_a_bad_item_still_named(monkeypatch) -> None:
    """A runtime resends its whole history each request: only the items not seen before are checked, and a bad
    one among them is named as the whole-request check names it."""
    from harness.models.emulator import request_schema as rs
    from harness.models.emulator.resent import Resent

    resent = Resent()
    rest, item = rs._parts("openai")
    seen: list[Any] = []

    class Counting:
        def is_valid(self, entry: Any) -> bool:
            seen.append(entry)
            return item.is_valid(entry)

    monkeypatch.setattr(rs, "_parts", lambda route: (rest, Counting()))
    first = copy.deepcopy(CHAT)
    assert rs.check_request("openai", first, resent) is first and len(seen) == len(first["messages"])
    longer = copy.deepcopy(CHAT)
    longer["messages"].append({"role": "user", "content": "and now?"})
    seen.clear()
    rs.check_request("openai", longer, resent)
    assert seen == [{"role": "user", "content": "and now?"}]
    longer["messages"].append({"role": "user", "content": 7})
    with pytest.raises(rs.EmulatorError, match=r"messages\[5\]\.content: must be a string"):
        rs.check_request("openai", longer, resent)
