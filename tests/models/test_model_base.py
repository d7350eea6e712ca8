from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.models import ModelResponse, ModelSpec, Usage, check_spec, open_client, require_key
from harness.models import registry


def test_spec_forms_parse() -> None:
    assert check_spec("builtin") == ModelSpec("builtin", "builtin")
    assert check_spec("openai:gpt-5") == ModelSpec("openai", "gpt-5")
    assert check_spec("anthropic:claude-sonnet-4-6@emulator").emulated
    assert check_spec("openai:llama3@http://localhost:8000/v1").base_url == "http://localhost:8000/v1"
    assert str(check_spec("openai:gpt-5@emulator")) == "openai:gpt-5@emulator"


@pytest.mark.parametrize("spec", ["gpt-5", "google:gemini", "openai:", "openai:gpt-5@", "anthropic:x@http://h",
                                  "openai:m@ftp://x"])
def test_bad_specs_are_one_line_errors(spec: str) -> None:
    with pytest.raises(HarnessError) as info:
        check_spec(spec)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("spec,variable", [("openai:gpt-5", "OPENAI_API_KEY"),
                                           ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY")])
def test_missing_key_fails_when_opening(spec: str, variable: str) -> None:
    with pytest.raises(HarnessError, match=variable):
        open_client(spec)


def test_emulator_and_builtin_need_no_key() -> None:
    open_client("openai:gpt-5@emulator").close()
    open_client("anthropic:claude-haiku-4-5@emulator").close()
    open_client("builtin").close()


def test_replay_only_cassette_needs_no_key(tmp_path) -> None:
    cassette = tmp_path / "c.json"
    cassette.write_text('{"version": 1, "case": "c", "interactions": []}')
    open_client("openai:gpt-5", cassette_path=cassette, record_mode="none").close()
    with pytest.raises(HarnessError, match="OPENAI_API_KEY"):
        open_client("openai:gpt-5", cassette_path=cassette, record_mode="new")


@pytest.mark.parametrize("spec,variable", [("openai:gpt-5", "OPENAI_API_KEY"),
                                           ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY")])
def test_require_key_gives_the_opening_error_without_a_client(spec: str, variable: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def no_client(*args: object, **kwargs: object) -> None:
        raise AssertionError("require_key opened a client")

    with pytest.raises(HarnessError) as opening:
        open_client(spec)
    monkeypatch.setattr(registry, "open_client", no_client)
    with pytest.raises(HarnessError) as required:
        require_key(spec, "new")
    assert str(required.value) == str(opening.value)
    assert "\n" not in str(required.value) and variable in str(required.value)
    with pytest.raises(HarnessError, match=variable):
        require_key(check_spec(spec), "all")


@pytest.mark.parametrize("spec,mode", [("openai:gpt-5", "none"), ("builtin", "all"), ("openai:gpt-5@emulator", "all"),
                                       ("anthropic:claude-haiku-4-5@emulator", "new"),
                                       ("openai:llama3@http://localhost:8000/v1", "all")])
def test_require_key_passes_where_no_key_is_needed(spec: str, mode: str) -> None:
    require_key(spec, mode)


def test_require_key_takes_the_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    require_key("anthropic:claude-sonnet-4-6", "once")
    with pytest.raises(HarnessError, match="record mode"):
        require_key("anthropic:claude-sonnet-4-6", "sometimes")


def test_bad_record_mode() -> None:
    with pytest.raises(HarnessError, match="record mode"):
        open_client("builtin", record_mode="sometimes")


def test_usage_adds_and_truncation_flag() -> None:
    total = Usage(10, 4, 2, 3) + Usage(5, 1, 0, 2)
    assert total == Usage(15, 5, 2, 5)
    assert total.uncached_input_tokens == 8
    assert ModelResponse("x", total, 0.1, "m", "length").truncated
    assert ModelResponse("x", total, 0.1, "m", "max_tokens").truncated
    assert not ModelResponse("x", total, 0.1, "m", "stop").truncated


def test_live_spec_cannot_reach_the_network_in_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.models.base import ChatMessage, ModelRequest

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with open_client("openai:gpt-5", max_retries=0) as model, pytest.raises(HarnessError, match="connection failed"):
        model.complete(ModelRequest("gpt-5", None, (ChatMessage("user", "hi"),), 10))
