"""Each transcript format on a small hand-made file: pairing rules, compaction records, report counts, errors."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from harness.errors import HarnessError, InputError
from harness.cases.drafts import review_drafts
from harness.importers import FORMATS, detect, draft_probes, import_transcript, render_probes, write_case
from harness.importers.report import NO_RESULT
from harness.session import dumps_session, message_text, parse_session, read_session

DATA = Path(__file__).parent / "data"


def load(name: str, fmt: str = "auto", **options):
    return import_transcript(DATA / name, fmt, **options)


def roles(session) -> list[str]:
    return [m.role for m in session.messages]


def assert_valid(session) -> None:
    """The session survives a write and a strict re-read unchanged."""
    text = dumps_session(session)
    again = parse_session(text.splitlines())
    assert dumps_session(again) == text


@pytest.mark.parametrize("name, fmt", [
    ("claude_code.jsonl", "claude-code"),
    ("claude_code_openai.json", "claude-code-openai"),
    ("codex.jsonl", "codex"),
    ("openai.json", "openai"),
    ("anthropic.json", "anthropic"),
    ("mini_swe_agent.traj.json", "mini-swe-agent"),
    ("swe_agent.traj", "swe-agent"),
])
def test_detect_chooses_the_format_and_says_so(name, fmt):
    assert detect(DATA / name) == fmt
    session, report, meta = load(name, window=100_000)
    assert report.format == fmt and report.detected
    assert meta.format == fmt
    assert "(detected)" in report.render()
    assert_valid(session)
    # every tool call is paired: real result or a counted synthetic one
    assert report.pairs + report.synthetic_results == report.tool_calls


def test_every_format_is_registered():
    assert set(FORMATS) == {"claude-code", "claude-code-openai", "codex", "openai", "anthropic", "mini-swe-agent",
                            "swe-agent", "atif"}


# --------------------------------------------------------------------------------------- Claude Code


def test_claude_code_live_branch_merge_pairing_and_compaction():
    session, report, meta = load("claude_code.jsonl", "claude-code")
    texts = [m.content for m in session.messages]
    assert not any("ABANDONED" in t or "SIDECHAIN" in t for t in texts)
    assert report.skipped["entry off the live branch (sidechain or abandoned)"] == 2
    # three lines of msg_1 (thinking, text, tool_use) are one assistant message
    first = session.messages[1]
    assert first.role == "assistant" and first.content == "Let me run the tests."
    assert [c.id for c in first.tool_calls] == ["toolu_1"]
    assert first.usage == {"input_tokens": 10, "output_tokens": 5}
    assert report.thinking["empty"] == 1 and not report.left_out  # the thinking block held only a signature
    # the failing result keeps is_error
    assert session.messages[2].tool_call_id == "toolu_1" and session.messages[2].is_error
    # compaction: boundary + isCompactSummary -> one compaction line covering the 5 messages before it
    (block,) = session.compactions
    assert block.origin == "claude-code" and block.covers == 5 and block.position == 5
    assert "test_empty failure comes from parse()" in block.content
    assert block.meta == {"trigger": "auto", "preTokens": 150000, "boundary_line": 12, "source_line": 13}
    assert not any("being continued" in t for t in texts)  # the summary is not also a user message
    # parallel tool_use over two lines; results came in the other order and are placed in call order
    parallel = next(m for m in session.messages if len(m.tool_calls) == 2)
    i = session.messages.index(parallel)
    assert [m.tool_call_id for m in session.messages[i + 1:i + 3]] == ["toolu_3", "toolu_4"]
    # the last call has no result: a synthetic one, counted
    assert session.messages[-1].content == NO_RESULT and report.synthetic_results == 1
    assert report.pairs == 4 and report.tool_calls == 5
    # noise is kept but tagged; bookkeeping and other system entries are counted
    assert session.messages[5].meta == {"tag": "command", "source_line": 14}
    assert report.tagged["user noise: command"] == 1
    assert report.skipped["bookkeeping: summary"] == 1
    assert report.skipped["bookkeeping: file-history-snapshot"] == 1
    assert report.skipped["bookkeeping: queue-operation"] == 1
    assert report.skipped["system entry: informational"] == 1
    # the secret in the first prompt is redacted
    assert report.redacted == 1 and "sk-ant" not in dumps_session(session)
    assert meta.model == "claude-sonnet-4-5" and meta.context_window == 200_000
    assert report.messages == {"user": 3, "assistant": 5, "tool": 5} and report.turns == 3


def test_claude_code_openai_export_compaction_and_inline_thinking():
    session, report, _ = load("claude_code_openai.json", "claude-code-openai")
    assert session.system == "You are Claude Code."
    assert session.messages[1].content == "On it."  # <thinking> moved out of the content, into meta
    assert session.messages[1].meta == {"thinking": "find the file"}
    assert report.thinking == {"blocks": 1, "characters": 13, "empty": 0} and not report.left_out
    (block,) = session.compactions
    assert block.origin == "claude-code" and block.covers == 3
    assert block.content.startswith("Summary: the user wants version 2.0")
    assert roles(session) == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert report.skipped["phases (not mapped)"] == 1


# --------------------------------------------------------------------------------------- Codex


def test_codex_pairing_custom_outputs_parallel_calls_and_compacted():
    session, report, meta = load("codex.jsonl", "codex")
    assert session.system == "You are Codex, a coding agent."
    assert meta.context_window == 272_000 and "task_started" in report.window_source
    assert meta.model == "gpt-5-codex"
    # the developer message is kept, tagged
    assert session.messages[0].meta == {"source_role": "developer"}
    # function_call joins the assistant message just before it
    assistant = session.messages[2]
    assert assistant.content == "I'll check the build first." and assistant.tool_calls[0].id == "call_1"
    assert assistant.tool_calls[0].arguments == {"command": ["bash", "-lc", "pnpm build"]}
    # custom tool output JSON is unwrapped; exit code 1 marks an error
    patched = next(m for m in session.messages if m.tool_call_id == "call_2")
    assert patched.content.startswith("Success.") and not patched.is_error
    rejected = next(m for m in session.messages if m.tool_call_id == "call_5")
    assert rejected.content == "patch rejected" and rejected.is_error
    # the compacted record: summary, covers everything before it, kept user messages in meta
    (block,) = session.compactions
    assert block.origin == "codex" and block.covers == 6
    assert block.content.startswith("Summary: build failed on TS2304")
    assert block.meta["kept_history"][0] == {"role": "user", "content": "Use pnpm, not npm. Make the build pass."}
    # two consecutive function_calls are one assistant message with parallel calls, results in call order
    parallel = session.messages[6]
    assert [c.id for c in parallel.tool_calls] == ["call_3", "call_4"]
    assert [m.content for m in session.messages[7:9]] == ["build ok", "tests ok"]
    assert report.skipped["tool result with no matching call"] == 1
    assert report.left_out["encrypted reasoning"] == 1
    assert report.skipped["event_msg: user_message"] == 1
    assert report.skipped["response_item: web_search_call"] == 1
    assert report.redacted == 1 and "ghp_" not in dumps_session(session)
    assert report.pairs == 5 and report.synthetic_results == 0


# --------------------------------------------------------------------------------------- plain arrays


def test_openai_chat_pairing_by_id_orphans_and_missing_results():
    session, report, meta = load("openai.json", "openai")
    first = session.messages[1]
    assert [c.id for c in first.tool_calls] == ["c1", "c2"]
    # results came c2, c1: placed in call order
    assert [m.tool_call_id for m in session.messages[2:4]] == ["c1", "c2"]
    assert session.messages[4].tool_calls[0].arguments == {"raw": "not json {"}
    assert report.tagged["arguments kept as raw text (not JSON)"] == 1
    assert report.skipped["tool result with no matching call"] == 1
    missing = next(m for m in session.messages if m.tool_call_id == "c4")
    assert missing.content == NO_RESULT and missing.meta == {"synthetic": True}
    assert report.synthetic_results == 1 and report.pairs == 3
    assert session.messages[-1].content == "Authorization: Bearer [REDACTED] thanks"
    assert meta.model == "gpt-4o" and meta.context_window == 128_000


def test_anthropic_blocks_results_before_text_and_left_out_content():
    session, report, _ = load("anthropic.json", "anthropic")
    assert session.system == "You are a careful agent."
    assert roles(session) == ["user", "assistant", "tool", "tool", "user", "assistant", "tool", "assistant"]
    assert [m.tool_call_id for m in session.messages[2:4]] == ["toolu_a", "toolu_b"]
    assert session.messages[2].content == "port=9090"
    assert session.messages[4].content == "And show me the image.\n[image omitted]"
    assert session.messages[6].is_error
    assert report.left_out == {"thinking": 1, "image block": 1}
    assert "AKIA" not in session.messages[0].content and report.redacted == 1


# --------------------------------------------------------------------------------------- trajectories


def test_mini_swe_agent_tool_calls_and_exit_as_submit_result():
    session, report, meta = load("mini_swe_agent.traj.json", "mini-swe-agent")
    assert roles(session) == ["user", "assistant", "tool", "assistant", "tool"]
    assert session.messages[1].tool_calls[0].arguments == {"command": "cat utils/range.py"}
    assert session.messages[-1].content.startswith("diff --git a/utils/range.py")
    assert session.messages[-1].meta == {"exit_status": "Submitted"}
    assert report.tagged["exit message used as the result of the submit call"] == 1
    assert report.skipped["extra (raw responses and timings, not mapped)"] == 4
    assert meta.model == "deepseek-chat"


def test_swe_agent_legacy_actions_become_bash_calls():
    session, report, meta = load("swe_agent.traj", "swe-agent", window=128_000)
    assert session.system == "SETTING: You are an autonomous programmer."
    assert roles(session) == ["user", "user", "assistant", "tool", "assistant", "tool"]
    assert session.messages[0].meta == {"is_demo": True}
    open_call = session.messages[2]
    assert open_call.content == "Let me open the file." and open_call.tool_calls[0].name == "bash"
    assert open_call.tool_calls[0].arguments == {"command": "open src/calc.py"}
    assert session.messages[3].content.startswith("[File: src/calc.py]")
    # submit has no observation in history: the trajectory's observation is used
    assert session.messages[5].content == "diff --git a/src/calc.py b/src/calc.py"
    assert report.tagged["last observation taken from trajectory"] == 1
    assert report.skipped["message of agent 'helper'"] == 1
    assert meta.model is None and meta.context_window == 128_000


# --------------------------------------------------------------------------------------- errors


def one_line_error(excinfo) -> str:
    text = str(excinfo.value)
    assert "\n" not in text
    return text


def test_malformed_jsonl_names_the_line():
    with pytest.raises(InputError) as excinfo:
        load("codex_truncated.jsonl", "codex")
    text = one_line_error(excinfo)
    assert "codex_truncated.jsonl:3:" in text and "expected a Codex rollout line" in text


@pytest.mark.parametrize("name, fmt, where, expected", [
    ("claude_code.jsonl", "codex", ":1: payload", "Codex rollout line"),
    ("codex.jsonl", "claude-code", ":1: uuid", "looks like a Codex rollout"),
    ("openai.json", "swe-agent", ":1: history", "SWE-agent trajectory"),
    ("openai.json", "mini-swe-agent", ":1: info", "mini-swe-agent trajectory"),
    ("mini_swe_agent.traj.json", "openai", ":1: messages[5].role", "unknown role 'exit'"),
    ("codex.jsonl", "openai", ":2:", "bad JSON"),
    ("openai.json", "claude-code-openai", ":1: format", "openai-chat"),
    ("openai.json", "anthropic", ":1: messages[0].role", "unknown role 'system'"),
])
def test_mislabelled_file_gives_one_line_error_naming_the_line(name, fmt, where, expected):
    with pytest.raises(HarnessError) as excinfo:
        load(name, fmt, window=1000)
    text = one_line_error(excinfo)
    assert where in text and expected in text


def test_unknown_window_asks_for_the_option():
    with pytest.raises(HarnessError, match="pass --window"):
        load("swe_agent.traj", "swe-agent")


def test_undetectable_file(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(HarnessError, match="cannot detect the transcript format; pass --from"):
        import_transcript(path)
    with pytest.raises(HarnessError, match="unknown transcript format 'aider'"):
        import_transcript(DATA / "openai.json", "aider")


# --------------------------------------------------------------------------------------- case files


def test_write_case_and_draft_probes(tmp_path):
    session, report, meta = load("claude_code.jsonl")
    out = tmp_path / "my-case"
    toml_path = write_case(out, session, report, meta)
    data = tomllib.loads(toml_path.read_text())
    assert data["case"] == {"id": "my-case", "title": meta.title, "pool": "autonomous", "session": "session.jsonl"}
    assert data["model"] == {"name": "claude-sonnet-4-5", "context_window": 200_000, "max_output_tokens": 16384}
    assert "probe" not in data and "# [[probe]]" in toml_path.read_text()
    assert dumps_session(read_session(out / "session.jsonl")) == dumps_session(session)
    with pytest.raises(HarnessError, match="already exists"):
        write_case(out, session, report, meta)

    drafts = draft_probes(out)
    kept, dropped = review_drafts(out)
    assert kept == drafts and all(p["dropped"] for p in dropped)
    kinds = {p["kind"] for p in kept + dropped}  # a candidate failing its checks is dropped, with its reason
    assert {"goal", "artifact", "constraint", "continuation"} <= kinds
    assert all(p["draft"] is True for p in drafts)
    assert any(p["all"] == ["parser.py"] for p in drafts if p["kind"] == "artifact")
    for probe in drafts:
        seen = "\n".join(message_text(m) for m in session.messages[:probe["planted_at"] + 1])
        assert all(any(a in seen for a in ([item] if isinstance(item, str) else item)) for item in probe["all"]), probe
    parsed = tomllib.loads(render_probes(drafts))["probe"]
    assert [p["id"] for p in parsed] == [p["id"] for p in drafts]


def test_window_comes_from_transcript_then_tables_then_option():
    _, report, _ = load("codex.jsonl")
    assert report.window == 272_000 and report.window_source.startswith("transcript")
    _, report, meta = load("codex.jsonl", window=64_000)
    assert meta.context_window == 64_000 and report.window_source == "--window"
    assert any("272000" in note for note in report.notes)
    _, report, _ = load("openai.json")
    assert report.window == 128_000 and report.window_source  # price table or the importer's own table
    _, report, meta = load("swe_agent.traj", model="gpt-4o")
    assert meta.model == "gpt-4o" and meta.context_window == 128_000


def test_written_case_loads_with_the_case_loader(tmp_path):
    cases = pytest.importorskip("harness.cases")
    session, report, meta = load("codex.jsonl")
    write_case(tmp_path / "codex-case", session, report, meta)
    case = cases.load_case(tmp_path / "codex-case")
    assert case.id == "codex-case" and case.probes == () and case.model_name == "gpt-5-codex"
    assert case.context_window == 272_000 and len(case.session.compactions) == 1
