"""Real sessions hold what a runtime cannot be given as it happened: interrupts, user messages nothing answers,
back-to-back notifications, a trailing user message, queued prompts, sub-agent and parallel calls, huge and
empty outputs, a session that opens with the assistant or ends on tool outputs. Generated sessions of every
such shape (each one a valid session file) are replayed by a small agent that behaves like a runtime: every
step is used exactly once, nothing drifts, every output comes back byte for byte, and each departure is listed.
The real pool's own scripts are checked the same way."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from harness.cases import load_case
from harness.models.builtin import BuiltinClient
from harness.models.emulator.chat import request_from_openai
from harness.models.emulator.reply import exchange
from harness.scripted import ScriptedModel, load_signatures, script_from_session, write_workspace
from harness.scripted.departures import EMPTY_PROMPT, KINDS
from harness.session import Session, dumps_session, parse_session, Message, ToolCall
from scripted_agent import BASH

TAGS = ("prompt", "interrupt", "command", "task-notification", "meta", "shell", "queued")
REAL = sorted(p for p in Path("cases").glob("real-*") if p.is_dir())


def _user(rng: random.Random, n: int) -> Message:
    tag = rng.choice(TAGS)
    text = {"interrupt": "[Request interrupted by user for tool use]", "command": "<command-name>/compact</command-name>",
            "task-notification": f"<task-notification>\n<task-id>t{n}</task-id>\n</task-notification>",
            }.get(tag, rng.choice(["", f"please do thing {n}", f"/skills {n}", f"  spaced {n}  "]))
    meta = {"tag": tag} if tag not in ("prompt", "queued") else ({"queued": True} if tag == "queued" else None)
    return Message("user", text, meta=meta)


def _output(rng: random.Random, n: int) -> str:
    return rng.choice(["", f"out {n}", f"line {n}\n" * rng.randint(1, 40), "x" * 120_000 + f" end {n}",
                       f"naïve ✓ {n}\r\n\ttab"])


def awkward_session(seed: int) -> Session:
    """A random valid session built from the shapes real transcripts hold."""
    rng = random.Random(seed)
    messages: list[Message] = []
    n = 0
    for _ in range(rng.randint(1, 14)):
        n += 1
        kind = rng.choice(["users", "users", "text", "calls", "calls", "calls"])
        if kind == "users":
            messages += [_user(rng, n + k) for k in range(rng.choice([1, 1, 1, 2, 3]))]
        elif kind == "text":
            messages.append(Message("assistant", rng.choice(["", f"thinking aloud {n}", f"done {n}"])))
        else:
            ids = [rng.choice([f"c{n}_{k}", "dup"]) + ("" if k == 0 else f"_{k}") for k in range(rng.choice([1, 1, 2, 3]))]
            calls = tuple(ToolCall(i, rng.choice(["Bash", "Read", "Task", "Edit"]), {"arg": i}) for i in ids)
            messages.append(Message("assistant", rng.choice(["", f"calling {n}"]), calls))
            results = [Message("tool", _output(rng, n), tool_call_id=i) for i in ids]
            rng.shuffle(results)  # results may come back in any order
            messages += results
    return parse_session(dumps_session(Session(tuple(messages), "system")).splitlines())  # a valid session file


def _cat(command: str, workspace: Path) -> str:
    assert command.startswith("cat .replay/") and " " not in command[4:], command
    return (workspace / command[4:]).read_bytes().decode("utf-8")


def drive_like_a_runtime(script, model: ScriptedModel, workspace: Path) -> dict[str, str]:
    """Each prompt in turn; run every call the model gives (reading its fixture, as `cat` would) until a reply
    without calls ends the turn. Returns the outputs it sent back, by call id, in order."""
    messages: list[dict] = [{"role": "system", "content": "agent"}]
    sent: list[tuple[str, str]] = []
    for prompt in script.prompts:
        messages.append({"role": "user", "content": prompt})
        for _ in range(len(script.steps) + 1):
            payload = {"model": "m", "messages": messages, "tools": [{"type": "function", "function": BASH}]}
            request = request_from_openai(payload, 4096)
            request = type(request)(**{**request.__dict__, "tools": (BASH,)})
            reply = model(request, exchange("openai", "/v1/chat/completions", payload, None, False))
            message: dict = {"role": "assistant", "content": reply.text}
            if reply.tool_calls:
                message["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                    "name": c.name, "arguments": json.dumps(c.arguments)}} for c in reply.tool_calls]
            messages.append(message)
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                output = _cat(call.arguments["command"], workspace)
                sent.append((call.id, output))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
    return sent


def _replayed(session: Session, tmp_path: Path):
    script = script_from_session(session)
    workspace = write_workspace(script, tmp_path / "ws")
    model = ScriptedModel(script, signatures=load_signatures("all"), summarizer=BuiltinClient(), workspace=workspace)
    return script, model, drive_like_a_runtime(script, model, workspace)


@pytest.mark.parametrize("seed", range(120))
def test_an_awkward_session_drives_to_its_end_and_lists_what_it_could_not_reproduce(seed, tmp_path):
    session = awkward_session(seed)
    script, model, sent = _replayed(session, tmp_path)
    outcome = model.outcome()
    assert outcome.stopped is None and outcome.used == outcome.steps and outcome.exit_code == 0
    assert sent == [(c.id, c.output) for c in script.calls]  # every output, byte for byte, in order
    messages = session.messages
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    answered = [i for i in users if any(m.role == "assistant" for m in messages[i + 1:])]
    listed = {(d.kind, d.position) for d in script.departures}
    assert {d.kind for d in script.departures} <= set(KINDS)
    # every user message is sent (a prompt, or joined to one) or listed as trailing; none is lost unsaid
    for i in users:
        if i in answered:
            assert any(messages[i].content.strip() in p for p in script.prompts) or \
                (not messages[i].content.strip() and EMPTY_PROMPT in script.prompts)
        else:
            assert ("trailing", i) in listed
    for i in answered:  # a user message followed by another user message is joined to the prompt after it
        if i + 1 < len(messages) and messages[i + 1].role == "user":
            assert ("unanswered", i) in listed
    first_user = users[0] if users else len(messages)
    leading = [i for i, m in enumerate(messages[:first_user]) if m.role == "assistant"]
    assert bool(leading) == any(d.kind == "leading" for d in script.departures)
    sub_agents = [c.id for m in messages[first_user:] for c in m.tool_calls if c.name == "Task"]
    assert len(sub_agents) == sum(1 for d in script.departures if d.kind == "sub-agent")
    assert len(script.prompts) == len(script.prompt_positions)


def test_the_generator_makes_every_awkward_shape():
    """The seeds above cover every shape the test is about (else it would pass by never meeting one)."""
    kinds = {d.kind for seed in range(120) for d in script_from_session(awkward_session(seed)).departures}
    assert kinds >= {"unanswered", "trailing", "closed", "queued", "leading", "sub-agent", "calls", "empty"}


def test_interrupt_then_prompt_becomes_one_prompt_and_the_interrupted_turn_is_closed():
    session = Session((Message("user", "run the tests"),
                       Message("assistant", "", (ToolCall("a", "Bash", {"command": "pytest"}),)),
                       Message("tool", "collecting...", tool_call_id="a"),
                       Message("user", "[Request interrupted by user for tool use]", meta={"tag": "interrupt"}),
                       Message("user", "use -x"),
                       Message("assistant", "ok"),
                       Message("user", "<task-notification>done</task-notification>", meta={"tag": "task-notification"})),
                      None)
    script = script_from_session(session)
    assert script.prompts == ("run the tests", "[Request interrupted by user for tool use]\n\nuse -x")
    assert script.prompt_positions == (0, 3)
    assert [s.text for s in script.steps] == ["", "(turn ended)", "ok"]
    assert [(d.kind, d.position) for d in script.departures] == [
        ("calls", 1), ("closed", 3), ("unanswered", 3), ("trailing", 6)]


@pytest.mark.parametrize("case_dir", REAL, ids=lambda p: p.name)
def test_each_real_pool_case_drives_to_its_end(case_dir, tmp_path):
    case = load_case(case_dir)
    script, model, sent = _replayed(case.session, tmp_path)
    outcome = model.outcome()
    assert outcome.stopped is None and outcome.used == outcome.steps > 50
    assert sent == [(c.id, c.output) for c in script.calls]
    recorded = [c.id for m in case.session.messages for c in m.tool_calls]
    assert [c.id for c in script.calls] == recorded  # every recorded call is replayed, none twice
    trailing = {d.position for d in script.departures if d.kind == "trailing"}
    users = [i for i, m in enumerate(case.session.messages) if m.role == "user"]
    assert all(i in trailing or i >= script.prompt_positions[0] for i in users)


def test_a_compaction_made_by_hand_is_listed():
    from harness.session import CompactionRecord

    session = Session((Message("user", "go"), Message("assistant", "ok"), Message("user", "more"),
                       Message("assistant", "done")), None,
                      (CompactionRecord("summary", 2, 2, "claude-code", meta={"trigger": "manual"}),
                       CompactionRecord("summary", 3, 3, "claude-code", meta={"trigger": "auto"})))
    assert [(d.kind, d.position) for d in script_from_session(session).departures] == [("manual-compaction", 2)]
