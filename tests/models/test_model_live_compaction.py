"""Provider compaction on the real endpoints: run with `pytest -m live` and a key; skipped without one.

The model names are the issue's; an account without access to them fails here with the provider's error."""

from __future__ import annotations

import os

import pytest

from harness.models import ChatMessage, ModelRequest, open_client
from harness.models.compaction_item import item_reference

pytestmark = pytest.mark.live
CASES = [("openai-compact:gpt-5.6", "OPENAI_API_KEY"), ("anthropic-compact:claude-sonnet-4-6", "ANTHROPIC_API_KEY")]
HISTORY = (
    ChatMessage("user", "We are fixing app/auth.py. The dev server must listen on port 9090."),
    ChatMessage("assistant", "Understood: app/auth.py, dev server on port 9090. I moved the session into a cookie."),
)


@pytest.mark.parametrize("spec,variable", CASES)
def test_live_compaction_round_trip(spec: str, variable: str) -> None:
    if not os.environ.get(variable):
        pytest.skip(f"{variable} not set")
    with open_client(spec, timeout=120.0) as client:
        item, response = client.compact("You are a coding agent.", HISTORY, "Summarize the session; keep values.")
        reference = item_reference(response.text)
        assert reference is not None and reference.spec == spec
        assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
        question = ChatMessage("user", "Which port must the dev server use? Answer with the number.")
        answer = client.complete(ModelRequest(client.name, None, (ChatMessage("user", response.text), question), 200))
    assert "9090" in answer.text
    if spec.startswith("openai"):
        assert item.opaque and item.item.get("encrypted_content")
    else:
        assert item.item.get("signature") and item.readable
