"""What checking a request's shape costs the emulator (issue 44): strict JSON parsing, the nesting check and
the wire's JSON Schema, on a long agent history (2,000 Chat Completions messages, 2 MB), against the
tokenizing every request pays anyway. Run with `pytest tests/benchmarks -k request_check`."""

from __future__ import annotations

import json

from harness.models import _tokens
from harness.models.emulator.request_schema import check_request, parse_body

MESSAGES = [{"role": "user" if i % 2 else "assistant", "content": f"step {i}: " + "word " * 200} for i in range(2000)]
BODY = json.dumps({"model": "gpt-5", "messages": MESSAGES}).encode()


def test_request_check_of_a_2mb_history(benchmark):
    payload = benchmark(lambda: check_request("openai", parse_body(BODY)))
    assert len(payload["messages"]) == 2000


def test_request_check_reference_tokenizing_the_same_history(benchmark):
    text = "\n".join(m["content"] for m in MESSAGES)
    assert benchmark(lambda: len(_tokens.encode(text))) > 100_000
