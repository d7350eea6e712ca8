"""Decision latency per send against history length: running totals vs a whole-history re-estimate.

Run with `pytest tests/benchmarks`; figures go to results/benchmarks/ and compare between commits
with `--benchmark-compare`. Each row is labelled with the tokens its generated history really holds (the
harness's chars/4 estimate, system prompt included), counted from the history, not from the requested size.
"""

from functools import lru_cache

import pytest

from harness.compaction.compactor import Compactor
from harness.compaction.summarizer import PlaceholderSummarizer
from harness.policy import PolicyConfig, make_policy
from harness.session import Message, Session, ToolCall, message_text
from harness.tokens import MessageTokens, counter

# (messages, characters per message body / 4): 10 to 100,000 messages, about 1K to 1M tokens of history
SIZES = [(10, 100), (100, 100), (1_000, 100), (10_000, 100), (100_000, 10)]


@lru_cache(maxsize=None)
def history(messages: int, tokens_each: int) -> Session:
    body = "x" * (4 * tokens_each)
    out = []
    for i in range(messages):
        if i % 2 == 0:
            out.append(Message("assistant", body[:-40], (ToolCall(f"c{i}", "bash", {"cmd": "ls"}),)))
        else:
            out.append(Message("tool", body, tool_call_id=f"c{i - 1}"))
    return Session((Message("user", "go"),) + tuple(out), "system")


def history_tokens(session: Session) -> int:
    """What the history holds by the estimate the trigger uses: chars/4 per message, system prompt included."""
    tokens = MessageTokens(counter("chars4"), session.messages)
    return tokens.text(session.system) + tokens.span(range(len(session.messages)))


def token_label(tokens: int) -> str:
    return f"{tokens / 1000:.1f}Ktok" if tokens < 10_000 else f"{round(tokens / 1000)}Ktok"


def size_id(size: tuple[int, int]) -> str:
    messages, tokens_each = size
    return f"{messages}msg-{token_label(history_tokens(history(messages, tokens_each)))}"


# size_id of each size, written out so that collecting the suite does not build 100,000 messages on every worker;
# test_labels_count_the_generated_history counts them from the histories
IDS = ["10msg-1.0Ktok", "100msg-9.8Ktok", "1000msg-98Ktok", "10000msg-975Ktok", "100000msg-750Ktok"]


def replayed(messages: int, tokens_each: int) -> Compactor:
    """A compactor that has replayed the whole history (nothing fires: the window is huge)."""
    session = history(messages, tokens_each)
    policy = make_policy("default", PolicyConfig(context_window=10**12))
    compactor = Compactor(session, policy, PlaceholderSummarizer(), true_counter=counter("chars4"))
    compactor.run()
    return compactor


def test_labels_count_the_generated_history():
    """The largest row holds 100,000 short messages: about 750K tokens, not the 1M its sizes suggest."""
    assert [size_id(size) for size in SIZES] == IDS
    assert IDS[-1] == "100000msg-750Ktok"
    assert history_tokens(history(10, 100)) == sum((len(message_text(m)) + 3) // 4
                                                   for m in history(10, 100).messages) + 2


@pytest.mark.parametrize("messages,tokens_each", SIZES, ids=IDS)
def test_trigger_check_running_total(benchmark, messages, tokens_each):
    compactor = replayed(messages, tokens_each)
    end = len(compactor.session.messages)
    benchmark.group = "trigger check per send"
    benchmark.extra_info["history_tokens"] = history_tokens(compactor.session)
    benchmark(compactor.send, end)
    assert not compactor.replay.events


@pytest.mark.parametrize("messages,tokens_each", SIZES, ids=IDS)
def test_trigger_check_reestimate_with_json_arguments(benchmark, messages, tokens_each):
    """What peer runtimes do on every send: re-estimate chars/4 over the whole history, each message's text
    including its tool calls' names and their arguments serialised to JSON (`json.dumps`, through
    `message_text`), so the serialisation is part of the measured cost."""
    session = history(messages, tokens_each)
    config = PolicyConfig(context_window=10**12)
    threshold = config.context_window - config.reserve_tokens

    def reestimate_with_json_arguments():
        total = (len(session.system) + 3) // 4 + sum((len(message_text(m)) + 3) // 4 for m in session.messages)
        return total >= threshold

    benchmark.group = "trigger check per send"
    benchmark.extra_info["history_tokens"] = history_tokens(session)
    assert benchmark(reestimate_with_json_arguments) is False
