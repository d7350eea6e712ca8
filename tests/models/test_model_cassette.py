"""Record against the emulator, replay offline: identical text, usage and cost; misses explain themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.models.base import ChatMessage as M
from harness.models import ModelRequest, cassette_path, open_client
from harness.models.emulator import EmulatorTransport, Fault
from harness.models.pricing import cost

FILLER = "The deploy script copies the build to the staging host and restarts the service. "
SYSTEM = "You are a coding agent. " + FILLER * 70
HISTORY = (
    M("user", "Move the deploy to staging-2.internal. Never deploy on Fridays. " + FILLER * 10),
    M("assistant", "I decided to keep the old script and only change the host."),
)
SUMMARY = M("user", "Summarize the session so far:\n## Goal\n## Constraints\n## Decisions")
MODELS = {"openai": "gpt-5", "anthropic": "claude-sonnet-4-6"}
SECRET = "sk-test-SECRET-do-not-write-1234567890"


def compaction_run(provider: str, path: Path, mode: str, transport=None):
    """The shape of one compaction: the session's own request, then the summarizer call on its prefix."""
    spec = f"{provider}:{MODELS[provider]}@emulator"
    with open_client(spec, cassette_path=path, record_mode=mode, case_id="deploy-case", transport=transport) as model:
        session = model.complete(ModelRequest(MODELS[provider], SYSTEM, HISTORY, 400))
        summary = model.complete(ModelRequest(MODELS[provider], SYSTEM, HISTORY + (SUMMARY,), 400,
                                              cache_prefix_messages=len(HISTORY)))
        repeat = model.complete(ModelRequest(MODELS[provider], SYSTEM, HISTORY, 400))
    return [session, summary, repeat]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_record_then_replay_is_identical(provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         transport: EmulatorTransport) -> None:
    path = cassette_path(tmp_path, "deploy-case", f"{provider}:{MODELS[provider]}@emulator")
    monkeypatch.setenv("OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY", SECRET)
    recorded = compaction_run(provider, path, "new", transport)
    assert recorded[1].usage.cached_input_tokens > 0  # the summarizer call hit the session's cache
    assert recorded[2].usage != recorded[0].usage  # the same request later: served from cache

    replayed = compaction_run(provider, path, "none", transport=_Exploding())
    for live, again in zip(recorded, replayed):
        assert again.text == live.text and again.usage == live.usage and again.finish_reason == live.finish_reason
        assert cost(again.usage, again.model) == cost(live.usage, live.model)
        assert again.latency_source == "recorded" and again.latency_s >= 0
    # identical requests replay in recording order
    assert replayed[0].usage == recorded[0].usage and replayed[2].usage == recorded[2].usage

    text = path.read_text()
    assert SECRET not in text and "authorization" not in text.lower() and "x-api-key" not in text.lower()
    document = json.loads(text)
    assert document["case"] == "deploy-case" and len(document["interactions"]) == 3
    first = document["interactions"][0]
    assert set(first) == {"hash", "request", "response", "elapsed_s", "recorded_at"}
    assert first["request"]["body"]["model"] == MODELS[provider] and first["response"]["status"] == 200


class _Exploding:
    """An inner transport that must never be reached during replay."""

    def handle_request(self, request):
        raise AssertionError("replay touched the transport")

    def close(self) -> None:
        pass


def test_changed_request_in_none_mode_names_the_difference(tmp_path: Path, transport: EmulatorTransport) -> None:
    path = tmp_path / "c.json"
    compaction_run("openai", path, "all", transport)
    spec = "openai:gpt-5@emulator"
    changed = ModelRequest("gpt-5", SYSTEM, HISTORY[:1] + (M("assistant", "I decided to rewrite it."),), 400)
    with open_client(spec, cassette_path=path, record_mode="none", case_id="deploy-case") as model:
        with pytest.raises(HarnessError) as info:
            model.complete(changed)
    message = str(info.value)
    assert "deploy-case" in message and "not recorded" in message and "\n" not in message
    assert "$.body.messages[2].content" in message and "I decided to rewrite it." in message


def test_new_mode_records_only_misses_and_once_mode_replays(tmp_path: Path, transport: EmulatorTransport) -> None:
    path = tmp_path / "c.json"
    compaction_run("anthropic", path, "once", transport)
    assert len(json.loads(path.read_text())["interactions"]) == 3
    compaction_run("anthropic", path, "once", _Exploding())  # file exists: replay only
    compaction_run("anthropic", path, "new", transport)  # all hits
    assert len(json.loads(path.read_text())["interactions"]) == 3
    with open_client("anthropic:claude-sonnet-4-6@emulator", cassette_path=path, record_mode="new",
                     transport=transport) as model:
        model.complete(ModelRequest("claude-sonnet-4-6", "other system", HISTORY, 100))
    assert len(json.loads(path.read_text())["interactions"]) == 4


def test_all_mode_rerecords(tmp_path: Path, transport: EmulatorTransport) -> None:
    path = tmp_path / "c.json"
    compaction_run("openai", path, "all", transport)
    compaction_run("openai", path, "all", transport)
    assert len(json.loads(path.read_text())["interactions"]) == 3


def test_transient_failures_are_not_recorded(tmp_path: Path, transport: EmulatorTransport) -> None:
    path = tmp_path / "c.json"
    transport.emulator.inject(Fault("429", retry_after=0.01))
    with open_client("openai:gpt-5@emulator", cassette_path=path, record_mode="all", transport=transport) as model:
        model.complete(ModelRequest("gpt-5", None, HISTORY, 100))
    statuses = [i["response"]["status"] for i in json.loads(path.read_text())["interactions"]]
    assert statuses == [200]


def test_cassette_path_layout() -> None:
    assert cassette_path(None, "long-auth", "openai:gpt-5") == Path("goldens/cassettes/long-auth/openai-gpt-5.json")
    assert cassette_path("root", "c", "anthropic:claude-haiku-4-5@emulator").name == \
        "anthropic-claude-haiku-4-5-emulator.json"
    assert cassette_path("root", "c", "openai:llama3@http://localhost:8000/v1").name == \
        "openai-llama3-localhost_8000_v1.json"


def test_unreadable_cassette_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("{not json")
    with pytest.raises(HarnessError, match="not a readable cassette"):
        open_client("openai:gpt-5@emulator", cassette_path=path, record_mode="none")


def test_long_strings_are_stored_as_digests_and_still_match_and_diff(tmp_path: Path,
                                                                      transport: EmulatorTransport) -> None:
    path = tmp_path / "c.json"
    compaction_run("openai", path, "all", transport)
    stored = json.loads(path.read_text())["interactions"][0]["request"]["body"]
    system = stored["messages"][0]["content"]
    assert system.startswith("sha256:") and f"{len(SYSTEM)} chars: You are a coding agent." in system
    assert len(path.read_text()) < len(SYSTEM) * 2  # the long system prompt is not written out three times
    compaction_run("openai", path, "none", _Exploding())  # full-request hashes still match on replay
    longer = ModelRequest("gpt-5", SYSTEM + " One more rule.", HISTORY, 400)
    with open_client("openai:gpt-5@emulator", cassette_path=path, record_mode="none", case_id="deploy-case") as model:
        with pytest.raises(HarnessError) as info:
            model.complete(longer)
    assert "$.body.messages[0].content: recorded \"sha256:" in str(info.value)
