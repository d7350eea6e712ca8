"""The builtin summarizer's fill pass (fill.py): budget left after the sections goes to the agent's explanations,
the user's requests in the user's words and a subagent's findings, the most telling first, never past the budget
and never a sentence the summary already says."""

from __future__ import annotations

from harness.models import _tokens
from harness.models.base import ChatMessage as M
from harness.models.base import ModelRequest, ToolCallSpec
from harness.models.builtin import BuiltinClient
from harness.models.builtin.facts import fact_lines
from harness.models.builtin.fill import candidates, fill
from harness.models.builtin.steps import error_details, error_line

INSTRUCTION = M("user", "Summarize the conversation so far. Use exactly these sections:\n" + "\n".join(
    f"## {s}" for s in ("Goal", "Constraints", "Progress", "Decisions", "Files", "Errors", "Next steps")))
EXPLANATION = "The login test failed because the session cookie expires before the redirect is followed."
SESSION = (
    M("user", "Make the login flow pass its tests on the staging build."),
    M("assistant", "Running the tests.", tool_calls=(ToolCallSpec("c1", "Bash", {"command": "make test"}),)),
    M("tool", "1 test failed", tool_call_id="c1"),
    M("assistant", "Let me read the session code first.",
      tool_calls=(ToolCallSpec("c0", "Read", {"file_path": "auth/session.py"}),)),
    M("tool", "COOKIE_TTL = 1", tool_call_id="c0"),
    M("assistant", f"Looking at it. {EXPLANATION} Setting a longer lifetime.",
      tool_calls=(ToolCallSpec("c2", "Edit", {"file_path": "auth/session.py"}),)),
    M("tool", "ok", tool_call_id="c2"),
    M("assistant", "Rerunning the whole suite now.",
      tool_calls=(ToolCallSpec("c3", "Bash", {"command": "make test"}),)),
    M("tool", "all passed", tool_call_id="c3"),
    M("user", "Also keep the old cookie name around for one release so mobile clients keep working."),
)


def run(messages: tuple[M, ...], budget: int) -> str:
    return BuiltinClient().complete(ModelRequest("builtin", None, (*messages, INSTRUCTION), budget)).text


def section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n\n## ", 1)[0]


def test_left_budget_keeps_the_agents_explanation_of_an_error(monkeypatch) -> None:
    text = run(SESSION, 2000)  # the reply's first sentence of four words or more: progress (rule lead-sentence)
    assert text.count(EXPLANATION) == 1 and EXPLANATION in section(text, "Progress")
    monkeypatch.setenv("HARNESS_BUILTIN_RULES_OFF", "lead-sentence")  # without it, the fill pass adds it
    text = run(SESSION, 2000)
    assert EXPLANATION in section(text, "Decisions")
    assert _tokens.count(text) <= 2000


def test_no_fill_past_the_budget() -> None:
    bare = run(SESSION, 2000).replace(f"\n- {EXPLANATION}", "")
    budget = _tokens.count(bare) + 5  # room for less than the sentence
    text = fill(bare, SESSION, budget)
    assert EXPLANATION not in text and _tokens.count(text) <= budget


def test_a_request_the_goal_already_quotes_is_not_repeated() -> None:
    text = run(SESSION, 2000)
    assert text.count("Make the login flow pass its tests") == 1
    assert "old cookie name" in text  # the later request, in the user's words


def test_a_sentence_the_summary_already_says_is_not_added() -> None:
    summary = f"## Goal\n- Fix login\n\n## Decisions\n- {EXPLANATION}"
    assert fill(summary, SESSION, 2000).count(EXPLANATION) == 1


def test_a_reports_explanations_rank_above_its_listing() -> None:
    report = "\n".join([f"Lines {n}-{n + 4}: `handler{n}` maps the request fields" for n in range(10, 90, 10)]
                       + ["The cache is never cleared because the key includes the request time."])
    messages = (M("assistant", "", tool_calls=(ToolCallSpec("t1", "Task", {"description": "Explore cache"}),)),
                M("tool", report, tool_call_id="t1"))
    found = sorted(candidates(messages), key=lambda c: c.rank, reverse=True)
    assert "because the key includes the request time" in found[0].text
    assert [c.kind for c in found].count("detail") == 8 - 4  # past the first few, listing lines are detail


def test_an_error_is_kept_whole_with_what_it_could_not_find() -> None:
    output = ("Writing error result bundle to /tmp/r.xcresult\n"
              "xcodebuild: error: Unable to find a device matching the provided destination specifier:\n"
              "\t{ platform:iOS Simulator, OS:latest, name:iPhone 16 }\n")
    assert error_details(output) == ["xcodebuild: error: Unable to find a device matching the provided destination "
                                     "specifier: { platform:iOS Simulator, OS:latest, name:iPhone 16 }"]
    swift = ("/src/Feed.swift:24:20: warning: conformance cannot be used; this is an error in the Swift 6 mode\n"
             "/src/Feed.swift:83:44: error: invalid conversion from throwing function\n")
    assert error_details(swift) == ["/src/Feed.swift:83:44: error: invalid conversion from throwing function"]
    assert error_line(swift).startswith("/src/Feed.swift:83:44: error")  # the error, not the warning


def test_a_declined_call_gives_no_error_to_fill() -> None:
    messages = (M("assistant", "", tool_calls=(ToolCallSpec("b1", "Bash", {"command": "rm -rf build"}),)),
                M("tool", "The user doesn't want to proceed with this tool use. error: cannot", tool_call_id="b1",
                  is_error=True))
    assert not [c for c in candidates(messages) if c.kind == "error"]


def test_a_runs_report_line_by_line_keeps_its_last_line() -> None:
    output = "\n".join(f"ok  example.com/app/pkg{n} {n}.5s" for n in range(8)) + "\nFAIL example.com/app/db 2.0s"
    lines = [line for line, _ in fact_lines(output)]
    assert lines == ["ok example.com/app/pkg7 7.5s", "FAIL example.com/app/db 2.0s"]
    assert len(fact_lines(output, listing_ok=True)) == 9  # what the user or an earlier summary said stays


def test_a_list_the_agent_wrote_is_one_finding_with_its_lead_in() -> None:
    reply = ("Found them. The key insertion points are:\n\n1. `handleStart()` — after the id\n"
             "2. `handleEnd()` — after the id\n3. **`commit()`** — before the push\n\nNext I add the calls.")
    lists = [c.text for c in candidates((M("assistant", reply),)) if c.kind == "list"]
    assert lists == ["Found them. The key insertion points are: `handleStart()` — after the id; "
                     "`handleEnd()` — after the id; `commit()` — before the push"]
    thinking = "Let me think about why it fails. It is built from either:\n- the selected columns\n- the model's fields"
    assert not [c for c in candidates((M("assistant", thinking),)) if c.kind == "list"]  # a plan, not a finding
