"""Compaction latency without the model, tail selection and token counting throughput.

Run with `pytest tests/benchmarks`; figures go to results/benchmarks/ and compare between commits with
`--benchmark-compare`. `extra_info` carries sizes so throughput can be read from the saved JSON.
"""

from functools import lru_cache

import pytest

from harness.cases import discover
from harness.compaction.compactor import Compactor
from harness.models.builtin import BuiltinClient
from harness.policy import PolicyConfig, make_policy
from harness.policy.base import ContextView
from harness.policy.default import turn_first_tail
from harness.run.config import RunConfig, policy_config
from harness.session import Message, Session, ToolCall, message_text
from harness.compaction.summarizer import ModelSummarizer, PlaceholderSummarizer
from harness.tokens import MessageTokens, counter

CASE = "long-auth-refactor"  # 3 compactions under the default policy, about 340K o200k tokens
SMALL_CASE = "edge-32k-window"


@lru_cache(maxsize=None)
def case(case_id: str):
    return discover("cases", [case_id])[0]


# -- tail selection on long live contexts -------------------------------------------------------

@lru_cache(maxsize=None)
def long_session(turns: int, steps_per_turn: int) -> Session:
    messages = []
    for t in range(turns):
        messages.append(Message("user", f"request {t} " + "u" * 200))
        for s in range(steps_per_turn):
            messages.append(Message("assistant", "a" * 120, (ToolCall(f"c{t}-{s}", "bash", {"cmd": "ls"}),)))
            messages.append(Message("tool", "r" * 2000, tool_call_id=f"c{t}-{s}"))
    return Session(tuple(messages), "system")


def session_tokens(session: Session) -> int:
    """What a session holds by the harness's chars/4 estimate, system prompt included (the row labels)."""
    tokens = MessageTokens(counter("chars4"), session.messages)
    return tokens.text(session.system) + tokens.span(range(len(session.messages)))


TAILS = [(100, 4), (1_000, 4), (10_000, 4), (10, 5_000)]  # (turns, steps per turn): many turns; one huge turn
# each row's label, written out so that collecting the suite does not build these sessions on every worker;
# test_tail_labels_count_the_generated_sessions counts them from the sessions
TAIL_IDS = ["100turns-4steps-219Ktok", "1000turns-4steps-2193Ktok", "10000turns-4steps-21939Ktok",
            "10turns-5000steps-26751Ktok"]


def tail_id(turns: int, steps: int) -> str:
    return f"{turns}turns-{steps}steps-{round(session_tokens(long_session(turns, steps)) / 1000)}Ktok"


def test_tail_labels_count_the_generated_sessions():
    assert [tail_id(t, s) for t, s in TAILS] == TAIL_IDS


@pytest.mark.parametrize("turns,steps", TAILS, ids=TAIL_IDS)
def test_tail_selection(benchmark, turns, steps):
    session = long_session(turns, steps)
    tokens = MessageTokens(counter("chars4"), session.messages)
    session.turns  # segmenting is done once per session, not per compaction
    view = ContextView(session, 0, len(session.messages), tokens.__getitem__)
    config = PolicyConfig(context_window=200_000)
    benchmark.group = "tail selection (turn_first_tail)"
    benchmark.extra_info["messages"] = len(session.messages)
    benchmark.extra_info["history_tokens"] = session_tokens(session)
    plan = benchmark(turn_first_tail, config, view)
    assert plan.tail_start > 0


# -- the whole compaction path, harness time against model time ---------------------------------

def replay(case_id: str, summarizer):
    c = case(case_id)
    policy = make_policy("default", policy_config(c, RunConfig()))
    return Compactor(c.session, policy, summarizer).run()


@pytest.mark.parametrize("case_id", [SMALL_CASE, CASE])
def test_replay_placeholder(benchmark, case_id):
    """Harness overhead alone: the trigger on every send, tail selection, folding; a placeholder summary."""
    case(case_id).session.turns
    benchmark.group = "replay a shipped case"
    result = benchmark.pedantic(replay, (case_id, PlaceholderSummarizer()), rounds=3, iterations=1,
                                warmup_rounds=1)
    benchmark.extra_info.update(_latency(result))
    assert result.events


@pytest.mark.parametrize("case_id", [SMALL_CASE, CASE])
def test_replay_builtin_model(benchmark, case_id):
    """The same path with the builtin model writing the summaries; events split harness and model time."""
    benchmark.group = "replay a shipped case"
    result = benchmark.pedantic(replay, (case_id, ModelSummarizer(BuiltinClient(), "builtin")), rounds=3,
                                iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(_latency(result))
    assert result.events


def _latency(result) -> dict:
    events = result.events
    return {"compactions": len(events), "messages": len(result.session.messages),
            "history_tokens": session_tokens(result.session),
            "harness_s_per_compaction": sum(e.harness_time_s for e in events) / len(events),
            "model_s_per_compaction": sum(e.model_time_s for e in events) / len(events)}


# -- token counting throughput on a shipped session's text --------------------------------------

@lru_cache(maxsize=1)
def session_text() -> str:
    """About 400 KB of a real-shaped session (code, test output, logs, prose)."""
    text = "\n".join(message_text(m) for m in case(CASE).session.messages)
    return text[:400_000]


@pytest.mark.parametrize("name", ["chars4", "o200k", "cl100k"])
def test_token_counting(benchmark, name):
    tokens = counter(name)
    text = session_text()
    tokens.count_text("warm up")  # the BPE tables load once per process
    benchmark.group = "token counting, 400 KB of session text"
    benchmark.extra_info["chars"] = len(text)
    count = benchmark(tokens.count_text, text)
    benchmark.extra_info["tokens"] = count
    assert count > 50_000
