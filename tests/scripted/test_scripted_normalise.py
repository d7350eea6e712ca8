"""Cassette keys of a runtime's compaction requests ignore what differs between two runs of the runtime."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.models.base import ChatMessage, ModelRequest
from harness.models.registry import open_client
from harness.scripted import key_normaliser, normalise_text


def test_dates_paths_and_ids_are_replaced_and_the_rest_is_kept():
    text = ("cwd /tmp/run-7f3a/ws/edge on 2026-12-02T00:11:40Z (Wed, December 2, 2026 00:11:40); session "
            "3f2b8c1e-9d4a-4e6b-8f00-1234567890ab; call_AbCdEf0123456789; ses_5a9f8e7d6c; DefaultTimeoutMS = 1800")
    assert normalise_text(text, "/tmp/run-7f3a/ws/edge") == (
        "cwd <workspace> on <timestamp> (<date> <time>); session <uuid>; call_<id>; ses_<id>; "
        "DefaultTimeoutMS = 1800")


def test_the_drivers_scratch_folders_are_replaced_wherever_they_appear():
    """Codex names its home (beside the workspace, in the driver's scratch folder) in its environment context."""
    text = 'codex_home: AbsolutePathBuf("/tmp/ch-codex-w3mgv8vf/home/codex"); cwd=/var/tmp/ch-my-pi-ab_d1234/ws'
    assert normalise_text(text) == 'codex_home: AbsolutePathBuf("<scratch>/home/codex"); cwd=<scratch>/ws'
    assert normalise_text("/tmp/ch-codex-w3mgv8vfx and ch-codex-w3mgv8vf") == "/tmp/ch-codex-w3mgv8vfx and ch-codex-w3mgv8vf"


def test_codex_output_wrappers_lose_their_chunk_id_and_wall_time():
    text = "Chunk ID: d637a3\nWall time: 0.0004 seconds\nProcess exited with code 0\nOutput:\nok 0.25 seconds"
    assert normalise_text(text) == ("Chunk ID: <id>\nWall time: <seconds>\nProcess exited with code 0\nOutput:\n"
                                    "ok 0.25 seconds")


def _request(workspace: str, day: str, session: str) -> ModelRequest:
    return ModelRequest("gpt-5", "You are a context summarization assistant.",
                        (ChatMessage("user", f"Working directory: {workspace}\nToday: {day}\nSession {session}\n"
                                             "Summarize: the default timeout is 1800 ms."),), 512)


def test_a_second_run_replays_the_first_runs_cassette_through_the_sdk(tmp_path):
    cassette = tmp_path / "summarizer.json"
    first_ws, second_ws = "/tmp/a/ws/edge", "/tmp/b/other/edge"
    with open_client("openai:gpt-5@emulator", cassette_path=cassette, record_mode="new", case_id="edge",
                     cassette_key=key_normaliser(first_ws)) as client:
        recorded = client.complete(_request(first_ws, "2026-12-01", "3f2b8c1e-9d4a-4e6b-8f00-1234567890ab"))
    with open_client("openai:gpt-5@emulator", cassette_path=cassette, record_mode="none", case_id="edge",
                     cassette_key=key_normaliser(second_ws)) as client:
        replayed = client.complete(_request(second_ws, "2026-12-02", "00000000-1111-2222-3333-444444444444"))
        assert replayed.text == recorded.text and replayed.latency_source == "recorded"
        with pytest.raises(HarnessError, match="not recorded"):  # a different fact is a different request
            client.complete(ModelRequest("gpt-5", None, (ChatMessage("user", "the default is 2500 ms"),), 512))
