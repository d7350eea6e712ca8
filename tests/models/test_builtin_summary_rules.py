"""The builtin summarizer's rules for what real sessions carry (issue 15, item 4): pasted documents, commands
typed into the chat, long absolute paths, subagent reports, harness messages about tool calls, errors and what
the agent made of them, recurring commands, and the agent's last words before the cut."""

from __future__ import annotations

from harness.models.base import ChatMessage as M
from harness.models.base import ModelRequest, ToolCallSpec
from harness.models.builtin import BuiltinClient
from harness.models.builtin.facts import fact_lines
from harness.models.builtin.files import common_root
from harness.models.builtin.keys import fact_key
from harness.models.builtin.steps import command_key, error_line
from harness.models.builtin.turns import is_pasted_document, is_shell_command

INSTRUCTION = M("user", "Summarize the conversation so far. Use exactly these sections:\n" + "\n".join(
    f"## {s}" for s in ("Goal", "Constraints", "Progress", "Decisions", "Files", "Errors", "Next steps")))
GUIDE = "# Security Guide\n\n<meta>\nRole: Guardian\n</meta>\n\n" + "\n".join(
    f"- You must never log secret number {n}." for n in range(20))


def run(messages: tuple[M, ...], budget: int = 2000) -> str:
    return BuiltinClient().complete(ModelRequest("builtin", None, (*messages, INSTRUCTION), budget)).text


def section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n\n## ", 1)[0]


def test_a_pasted_document_is_material_not_the_users_rules() -> None:
    assert is_pasted_document(GUIDE) and not is_pasted_document("Implement the following plan:\n\n" + GUIDE)
    text = run((M("user", "Migrate each guide I paste into docs/guides, keeping descriptions within 200 chars."),
                M("assistant", "Ready for the first guide."), M("user", GUIDE)))
    assert "must never log" not in section(text, "Constraints")
    assert "within 200 chars" in section(text, "Constraints")
    assert "Migrate each guide" in section(text, "Goal")
    assert "User pasted a document: Security Guide" in section(text, "Progress")


def test_a_command_typed_into_the_chat_sets_no_goal() -> None:
    assert is_shell_command("claude --permission-mode plan --allow-dangerously-skip-permissions")
    assert not is_shell_command("Fix the --verbose flag in the CLI parser please")
    text = run((M("user", "claude --dangerously-skip-permissions"),
                M("assistant", "That is a terminal command, not something I can run here."),
                M("user", "Add a dark mode toggle to the settings screen.")))
    goal = section(text, "Goal")
    assert "dark mode toggle" in goal and "--dangerously" not in goal


def test_files_are_listed_under_their_project_folder_once() -> None:
    root = "/Users/dev/work/app/"
    assert common_root([root + "src/a.go", root + "lib/b.go", root + "docs/c.md", "/Users/dev/.claude/p.md"]) == root
    assert common_root([root + "src/a.go", root + "src/b.go", root + "docs/c.md"]) == root + "src/"  # the deepest
    assert common_root(["/srv/one.go"]) == ""  # one file: its whole path says it best
    calls = [ToolCallSpec(f"e{i}", "Edit", {"file_path": root + path, "old_string": "a", "new_string": "b"})
             for i, path in enumerate(("src/a.go", "lib/b.go", "docs/c.md"))]
    history = [M("user", "Tidy the app.")]
    for call in calls:
        history += [M("assistant", "", (call,)), M("tool", "updated", tool_call_id=call.id)]
    history += [M("assistant", "", (ToolCallSpec("b1", "Bash", {"command": "gofmt -l src/a.go"}),)),
                M("tool", "", tool_call_id="b1")]
    files = section(run(tuple(history)), "Files")
    assert f"- Under {root}:" in files and "- src/a.go (edited, used by Bash)" in files
    assert files.count("src/a.go") == 1  # the shell command's relative path is the same file


def test_a_subagent_report_and_harness_messages_are_no_errors() -> None:
    report = ("Here is the report.\n\nErrors are wrapped via formatPluginError in the loader.\n"
              "We decided to keep the loader synchronous because plugins load once.\n"
              "The loader is ready for the new hook.\n"
              "agentId: a1b2c3 (for resuming)\n<usage>total_tokens: 10</usage>")
    text = run((M("user", "Look into the plugin loader."),
                M("assistant", "", (ToolCallSpec("t1", "Task", {"description": "Explore loader", "prompt": "x"}),)),
                M("tool", report, tool_call_id="t1"),
                M("assistant", "", (ToolCallSpec("e1", "Edit", {"file_path": "/a/b/c.ts"}),)),
                M("tool", "<tool_use_error>File has not been read yet.</tool_use_error>", tool_call_id="e1",
                  is_error=True),
                M("assistant", "", (ToolCallSpec("b1", "Bash", {"command": "rm -rf build"}),)),
                M("tool", "The user doesn't want to proceed with this tool use. The tool use was rejected.",
                  tool_call_id="b1", is_error=True)))
    assert section(text, "Errors").strip() == "- (none)"
    assert "Subagent report (Explore loader): The loader is ready for the new hook." in section(text, "Progress")
    assert "The user declined: Bash: command=rm -rf build" in section(text, "Progress")
    assert "keep the loader synchronous" in section(text, "Decisions")
    assert "agentId" not in text


def test_an_error_keeps_what_the_agent_made_of_it() -> None:
    assert error_line("Exit code 1\na.go:3:1: warning: unused\na.go:9:2: error: undefined: countLines") == \
        "a.go:9:2: error: undefined: countLines"
    assert error_line('{"id": 7, "error": null}') == ""  # an API response is data
    text = run((M("user", "Build the app."),
                M("assistant", "", (ToolCallSpec("b1", "Bash", {"command": "xcodebuild -destination iPhone 16"}),)),
                M("tool", "Exit code 70\nxcodebuild: error: Unable to find a device matching iPhone 16",
                  tool_call_id="b1", is_error=True),
                M("assistant", "The iPhone 16 simulator is not installed here, so I will target iPhone 17 Pro.")))
    errors = section(text, "Errors")
    assert "Unable to find a device" in errors and "→ The iPhone 16 simulator is not installed" in errors


def test_a_recurring_command_is_kept_in_its_latest_form() -> None:
    assert command_key("cd /srv/app && xcodebuild build -scheme App") == "xcodebuild build"
    history = [M("user", "Keep building until it compiles.")]
    for i, device in enumerate(("iPhone 16", "iPhone 17 Pro", "iPhone 17 Pro")):
        command = f"cd /srv/app && xcodebuild build -destination 'name={device}'"
        history += [M("assistant", "", (ToolCallSpec(f"b{i}", "Bash", {"command": command}),)),
                    M("tool", "BUILD SUCCEEDED", tool_call_id=f"b{i}")]
    values = section(run(tuple(history)), "Exact values")
    assert "Command run 3 times, latest: xcodebuild build -destination 'name=iPhone 17 Pro'" in values
    assert "iPhone 16" not in values


def test_the_agents_last_words_say_what_was_in_flight() -> None:
    text = run((M("user", "Re-initialise logging per session."),
                M("assistant", "Now let me add `logging.Init(sessionID)` after each handler parses stdin.",
                  (ToolCallSpec("e1", "Edit", {"file_path": "/a/hooks.go", "old_string": "x", "new_string": "y"}),))))
    # (an announcement of its own step, the sentence is no progress under `lead-sentence`)
    assert "last words before this summary: Now let me add `logging.Init(sessionID)`" in section(text, "Next steps")


def test_the_branch_git_says_it_is_on_is_an_exact_value_and_the_newest_wins() -> None:
    # "main" has no separator, so only git's own wording marks it as the branch; a later switch replaces it.
    on_main = fact_lines("On branch main\nnothing to commit, working tree clean")
    switched = fact_lines("Switched to a new branch 'fix-login'")
    assert on_main[0][1] == ("branch main",)
    assert fact_key(*on_main[0]) == fact_key(*switched[0]) == "facts:working branch"
    commit = fact_lines("[main 1a2b3c4] Fix the login redirect")
    assert commit[0][1] == ("branch main", "1a2b3c4")  # a commit line names its branch and keeps its hash
    assert fact_key(*commit[0]) != "facts:working branch"
    assert fact_lines("[x] done") == ()


def test_the_first_sentence_of_a_reply_with_a_step_is_progress(monkeypatch) -> None:
    """Rule `lead-sentence` (issue 42): a reply opens with what it found or is about to do, step or no step."""
    from harness.models.builtin.rules import OFF_VARIABLE

    messages = (M("user", "Find out why the strategy package cannot reuse the branch helpers."),
                M("assistant", "The strategy package cannot import from cli because of a circular import. "
                               "Let me check the helpers.", (ToolCallSpec("c1", "Read", {"file_path": "cli/git.go"}),)),
                M("tool", "package cli", tool_call_id="c1"),
                M("assistant", "Both helpers now live in strategy/common.go."))
    assert "circular import" in section(run(messages), "Progress")
    monkeypatch.setenv(OFF_VARIABLE, "lead-sentence")
    assert "circular import" not in section(run(messages), "Progress")


def test_a_lead_sentence_that_announces_its_step_is_not_progress() -> None:
    from harness.models.builtin.cues import ANNOUNCES_STEP

    for said in ("Let me run the suite.", "I'll look at src/app.py.", "Now let me check the helpers.",
                 "Running the affected tests again.", "Need to see the settings first."):
        assert ANNOUNCES_STEP.search(said), said
    for found in ("The strategy package cannot import from cli.", "Now we're seeing the real bug.",
                  "Both helpers now live in strategy/common.go."):
        assert not ANNOUNCES_STEP.search(found), found


def test_over_budget_the_users_words_outlast_the_agents_narration(monkeypatch) -> None:
    """Rule `user-words-last` (issue 42): a user's own words carry the goal and the constraints."""
    from harness.models.builtin.rules import OFF_VARIABLE

    messages = [M("user", "Migrate the invoices to gapless per-tenant numbering."),
                M("user", "The release freeze starts Thursday 14:00 UTC, so merge the migration before that.")]
    for n in range(40):
        messages.append(M("assistant", f"Finding {n}: the ledger table {n} keeps its old index and its sequence."))
    text = run(tuple(messages), budget=300)
    assert "release freeze starts Thursday" in text and "Finding 0:" not in text
    monkeypatch.setenv(OFF_VARIABLE, "user-words-last")
    assert "release freeze starts Thursday" not in run(tuple(messages), budget=300)
