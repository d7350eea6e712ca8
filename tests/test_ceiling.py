"""The ceiling within the answerer's window: the full history when it fits, else the oracle (the messages that
establish the probe's facts, with their tool calls and results, in order, under the window)."""

from __future__ import annotations

import json

from harness.cases import discover, load_case
from harness.cases.schema import Probe
from harness.results.folder import RunFolder
from harness.run.ceiling import AnswererWindow, CeilingBuilder, steps
from harness.run.config import RunConfig
from harness.run.matrix import run_cases
from harness.session import read_session
from harness.tokens import MessageTokens, counter

from test_runner import SESSION


def builder(tmp_path, window: int) -> tuple[CeilingBuilder, object]:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in SESSION) + "\n")
    session = read_session(path)
    sizes = MessageTokens(counter("o200k"), session.messages)
    return CeilingBuilder(session, sizes, AnswererWindow(window, 512)), session


def probe(**fields) -> Probe:
    return Probe(**{"id": "p", "kind": "recall", "question": "q?", **fields})


def test_the_full_history_is_the_ceiling_when_it_fits(tmp_path):
    ceiling = builder(tmp_path, 100_000)[0].for_probe(probe(all=(("9090",),), planted_at=4), end=8)
    assert ceiling.kind == "full" and ceiling.indices == tuple(range(8))


def test_past_the_window_the_oracle_holds_the_facts_messages_with_their_calls_and_results_in_order(tmp_path):
    small, session = builder(tmp_path, 2000)
    ceiling = small.for_probe(probe(all=(("9090",), ("src/server/config.ts",)), planted_at=4), end=8)
    assert ceiling.kind == "oracle"
    # planted_at (the user's change to 9090) and the messages that state the items, the edit with its result;
    # the 2,400-token read of config.ts (message 2) does not fit, so its step (1 and 2) is left out whole;
    # the chosen messages open with an assistant's, so the user message that began its turn goes first
    assert ceiling.indices == (0, 3, 4, 5, 6, 7)
    assert [session.messages[i].role for i in ceiling.indices] == ["user", "assistant", "user", "assistant", "tool",
                                                                   "assistant"]
    assert ceiling.left_out == 1 and small.window.fits(ceiling.tokens)


def test_an_oracle_that_starts_with_the_assistant_gets_the_turns_user_message(tmp_path):
    small, session = builder(tmp_path, 2000)
    ceiling = small.for_probe(probe(all=(("Done: the server",),), planted_at=7), end=8)
    assert ceiling.indices == (4, 7) and session.messages[4].role == "user"


def test_a_fact_whose_only_message_does_not_fit_leaves_an_empty_oracle(tmp_path):
    ceiling = builder(tmp_path, 2000)[0].for_probe(probe(all=(("filler line",),), planted_at=2), end=8)
    assert ceiling.kind == "oracle" and ceiling.empty


def test_tool_results_stay_with_the_call_that_asked_for_them(tmp_path):
    _, session = builder(tmp_path, 2000)
    assert steps(session.messages) == [(0,), (1, 2), (3,), (4,), (5, 6), (7,)]


def test_a_long_case_switches_to_the_oracle_and_no_request_exceeds_a_128k_answerer(tmp_path):
    """long-auth-refactor holds 353K tokens by its end; a 128K answerer (gpt-4o behind the emulator, which
    rejects any request over the window with OpenAI's own error) is asked every probe on every condition."""
    case = load_case("cases/long-auth-refactor")
    config = RunConfig(answerer="openai:gpt-4o@emulator", record_mode="all", cassettes=str(tmp_path / "cassettes"))
    run = run_cases([case], config, RunFolder(tmp_path / "out"), run_id="r")
    record = run["cases"]["long-auth-refactor"]
    assert record["status"] == "ok", record.get("error")  # a rejected request would have failed the case
    probes = record["probes"]
    assert {p["ceiling"] for p in probes} == {"oracle"}
    assert all(p["ceiling_tokens"] <= 128_000 for p in probes)
    assert not [p["id"] for p in probes for g in p["conditions"].values() if g.get("error")]
    assert all(p["valid"] for p in probes), [p["id"] for p in probes if not p["valid"]]
    answerer = run["aggregates"]["cost_by_role"]["answerer"]
    assert answerer["source"] == "modelled" and answerer["calls"] == 3 * len(probes)


def test_a_point_shares_one_oracle_and_a_probe_it_cannot_hold_gets_its_own(tmp_path):
    small, session = builder(tmp_path, 2000)
    port = probe(id="port", all=(("9090",),), planted_at=4)
    read = probe(id="read", all=(("filler line",),), planted_at=2)
    shared = small.for_point([port, read], end=8)
    assert shared.shows(port) and not shared.shows(read)  # the 2,400-token read fits no 2,000-token window
    assert small.oracle([read], 8).empty
