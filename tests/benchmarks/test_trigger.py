"""Decision latency per send against history length: running totals vs a whole-history re-estimate.

Run with `pytest tests/benchmarks`; figures go to results/benchmarks/ and compare between commits
with `--benchmark-compare`.
"""

import pytest

from harness.compaction.compactor import Compactor
from harness.policy import PolicyConfig, make_policy
from harness.session import Message, Session, ToolCall, message_text
from harness.compaction.summarizer import PlaceholderSummarizer
from harness.tokens import counter

# (messages, tokens per message): 1K to 1M tokens of history, 10 to 100,000 messages
SIZES = [(10, 100), (100, 100), (1_000, 100), (10_000, 100), (100_000, 10)]
IDS = [f"{m}msg-{m * t // 1000}Ktok" for m, t in SIZES]


def history(messages: int, tokens_each: int) -> Session:
    body = "x" * (4 * tokens_each)
    out = []
    for i in range(messages):
        if i % 2 == 0:
            out.append(Message("assistant", body[:-40], (ToolCall(f"c{i}", "bash", {"cmd": "ls"}),)))
        else:
            out.append(Message("tool", body, tool_call_id=f"c{i - 1}"))
    return Session((Message("user", "go"),) + tuple(out), "system")


def replayed(messages: int, tokens_each: int) -> Compactor:
    """A compactor that has replayed the whole history (nothing fires: the window is huge)."""
    session = history(messages, tokens_each)
    policy = make_policy("default", PolicyConfig(context_window=10**12))
    compactor = Compactor(session, policy, PlaceholderSummarizer(), true_counter=counter("chars4"))
    compactor.run()
    return compactor


@pytest.mark.parametrize("messages,tokens_each", SIZES, ids=IDS)
def test_trigger_check_running_total(benchmark, messages, tokens_each):
    compactor = replayed(messages, tokens_each)
    end = len(compactor.session.messages)
    benchmark.group = "trigger check per send"
    benchmark(compactor.send, end)
    assert not compactor.replay.events


@pytest.mark.parametrize("messages,tokens_each", SIZES, ids=IDS)
def test_trigger_check_whole_history_reestimate(benchmark, messages, tokens_each):
    """What peer runtimes do: re-estimate chars/4 over the whole history on every send."""
    session = history(messages, tokens_each)
    config = PolicyConfig(context_window=10**12)
    threshold = config.context_window - config.reserve_tokens

    def reestimate():
        total = (len(session.system) + 3) // 4 + sum((len(message_text(m)) + 3) // 4 for m in session.messages)
        return total >= threshold

    benchmark.group = "trigger check per send"
    assert benchmark(reestimate) is False
