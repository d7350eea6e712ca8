"""Real API calls: run with `pytest -m live` and a key; skipped without one."""

from __future__ import annotations

import os

import pytest

from harness.models import ChatMessage, ModelRequest, open_client
from harness.models.pricing import cost

pytestmark = pytest.mark.live
CASES = [("openai:gpt-5-mini", "OPENAI_API_KEY"), ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY")]


@pytest.mark.parametrize("spec,variable", CASES)
def test_live_completion(spec: str, variable: str) -> None:
    if not os.environ.get(variable):
        pytest.skip(f"{variable} not set")
    model_name = spec.split(":", 1)[1]
    request = ModelRequest(model_name, "Answer in one word.", (ChatMessage("user", "What colour is the sky?"),), 512)
    with open_client(spec, timeout=60.0) as model:
        response = model.complete(request)
    assert response.latency_source == "live" and response.latency_s > 0
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert cost(response.usage, spec) > 0
