"""Token counters: chars/4, and tiktoken working offline from the packaged BPE files."""

import hashlib

import pytest

from harness.errors import HarnessError
from harness.session import Message, ToolCall
from harness.tokens import BPE_FILES, FRAMING_TOKENS, MessageTokens, count_message, counter, seed_bpe_cache


def test_chars4_rounds_up_and_counts_tool_calls():
    chars4 = counter("chars4")
    assert chars4.count_text("abcd") == 1 and chars4.count_text("abcde") == 2
    plain = Message("assistant", "abcd")
    with_call = Message("assistant", "abcd", (ToolCall("1", "bash", {"cmd": "pytest -q"}),))
    assert count_message(chars4, with_call) > count_message(chars4, plain)  # name and arguments count


def test_seeded_cache_verifies_sha256_and_tiktoken_loads_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    for name, (cache_name, sha256) in BPE_FILES.items():
        path = seed_bpe_cache(name)
        assert path == tmp_path / cache_name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    # a corrupted cache file is replaced, not trusted
    (tmp_path / BPE_FILES["cl100k_base"][0]).write_bytes(b"garbage")
    assert hashlib.sha256(seed_bpe_cache("cl100k_base").read_bytes()).hexdigest() == BPE_FILES["cl100k_base"][1]


def test_true_counts_differ_by_encoding_and_from_the_estimate():
    text = "def handler(request):\n    return JSONResponse({'status': 'ok', 'port': 9090})\n" * 20
    o200k, cl100k, chars4 = counter("o200k"), counter("cl100k"), counter("chars4")
    assert o200k.count_text("hello world") == 2 and cl100k.count_text("hello world") == 2
    assert o200k.count_text(text) != chars4.count_text(text)
    assert len({o200k.count_text(text), cl100k.count_text(text)}) >= 1


def test_counts_are_cached_per_message():
    calls = []

    class Counting:
        name = "counting"

        def count_text(self, text):
            calls.append(text)
            return len(text)

    messages = (Message("user", "abc"), Message("user", "defg"))
    table = MessageTokens(Counting(), messages)
    assert table[0] + table[1] + table[0] == 10
    assert len(calls) == 2


def test_unknown_counter():
    with pytest.raises(HarnessError, match="unknown token counter"):
        counter("p50k")


class _Counting:
    name = "counting"

    def __init__(self):
        self.calls = []

    def count_text(self, text):
        self.calls.append(text)
        return len(text)


def test_of_reads_the_sessions_own_messages_from_the_table_and_counts_any_other_now():
    counting = _Counting()
    messages = (Message("user", "abc"), Message("user", "defg"))
    table = MessageTokens(counting, messages)
    assert table.of(messages[1]) == table[1] == table.of(messages[1]) == 4
    assert counting.calls == ["defg"]
    assert table.of(Message("user", "defg")) == 4  # equal, but not this session's message (a pruned marker)
    assert counting.calls == ["defg", "defg"]


def test_texts_are_counted_once_and_framed_only_as_messages():
    counting = _Counting()
    table = MessageTokens(counting, ())
    assert table.count_text("system prompt") == table.count_text("system prompt") == 13
    assert table.text("system prompt") == 13 and table.text(None) == 0
    assert counting.calls == ["system prompt"]
    o200k = MessageTokens(counter("o200k"), ())
    assert o200k.text("hello world") == counter("o200k").count_text("hello world") + FRAMING_TOKENS
