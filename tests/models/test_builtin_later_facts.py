"""Later facts win in the builtin summary (issue 31), each on a hand-built session: a refuted decision, a
superseded value, a second compaction whose next step changed, a declined call with the user's reason, an
injected skill. Each rule of later.py is also run switched off (HARNESS_BUILTIN_RULES_OFF) to show the test
tells the two apart."""

from __future__ import annotations

import pytest

from harness.matching import Haystack, states
from harness.models.base import ChatMessage as M
from harness.models.base import ModelRequest, ToolCallSpec
from harness.models.builtin import BuiltinClient
from harness.models.builtin.rules import OFF_VARIABLE

SECTIONS = ("Goal", "Constraints", "Progress", "Decisions", "Files", "Errors", "Next steps")
INSTRUCTION = M("user", "Summarize the conversation so far. Use exactly these sections:\n"
                + "\n".join(f"## {s}" for s in SECTIONS))
REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
            "edit, the new_string was NOT written to the file).")


def call(cid: str, name: str, **arguments) -> tuple[ToolCallSpec, ...]:
    return (ToolCallSpec(cid, name, arguments),)


def summary(*messages: M, budget: int = 3000) -> str:
    return BuiltinClient().complete(ModelRequest("builtin", None, (*messages, INSTRUCTION), budget)).text


def section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n\n## ", 1)[0]


def lines(text: str, title: str) -> list[str]:
    return [line[2:] for line in section(text, title).splitlines()]


REFUTED = (
    M("user", "The upload test flakes on CI about one run in five; find out why and fix it."),
    M("assistant", "I decided to switch the upload client to the retry wrapper, because the socket timeout "
                   "causes the flake.", call("c1", "Edit", file_path="upload/client.py")),
    M("tool", "ok", tool_call_id="c1"),
    M("assistant", "Running the upload test twenty times.", call("c2", "Bash", command="make test-upload N=20")),
    M("tool", "3 of 20 failed: fixture bucket already exists", tool_call_id="c2"),
    M("assistant", "The socket timeout was a misdiagnosis: the retry wrapper is not the fix, the flake comes from "
                   "the shared bucket fixture that two tests create at once."),
)


def test_a_refuted_decision_is_stated_as_superseded_and_the_refutation_kept():
    decisions = lines(summary(*REFUTED), "Decisions")
    old = [d for d in decisions if "retry wrapper, because" in d]
    assert old and all(d.startswith("Superseded later: ") for d in old)
    assert any("misdiagnosis" in d for d in decisions)


def test_switched_off_the_refuted_decision_stays_current(monkeypatch):
    monkeypatch.setenv(OFF_VARIABLE, "refuted-as-history")
    decisions = lines(summary(*REFUTED), "Decisions")
    assert any(d.startswith("I decided to switch the upload client") for d in decisions)


def test_a_superseded_value_is_not_stated_as_current():
    text = summary(
        M("user", "Add paging to the orders endpoint with a page limit of 50 rows."),
        M("assistant", "Added PAGE_LIMIT = 50 to orders/api.py.", call("c1", "Edit", file_path="orders/api.py")),
        M("tool", "ok", tool_call_id="c1"),
        M("user", "Raise the page limit to 200 rows, mobile asks for fewer pages."),
        M("assistant", "Changed PAGE_LIMIT from 50 to 200.", call("c2", "Edit", file_path="orders/api.py")),
        M("tool", "ok", tool_call_id="c2"))
    assert "PAGE_LIMIT" in text and states(Haystack(text), "200")
    assert not states(Haystack(section(text, "Exact values")), "PAGE_LIMIT = 50")


PREVIOUS = ("This session is being continued from a previous conversation.\n\n## Goal\n- Ship the header parser "
            "rewrite.\n\n## Progress\n- Rewrote parse_header in parser.py.\n\n## Next steps\n- Run the migration "
            "on the staging database.\n- Last step started before this summary: Bash: make migrate-staging\n- Pending: "
            "Update the changelog")
SECOND = (
    M("user", PREVIOUS),
    M("user", "Skip staging for now; the checksum bug in parse_header comes first."),
    M("assistant", "I'll fix the checksum in parse_header next: the CRC is taken over the wrong slice.",
      call("c1", "Edit", file_path="parser.py")),
    M("tool", "ok", tool_call_id="c1"),
)


def test_at_a_second_compaction_the_earlier_next_step_is_history():
    text = summary(*SECOND)
    assert "staging database" not in section(text, "Next steps")
    assert "make migrate-staging" not in section(text, "Next steps")
    assert "staging" not in section(text, "Progress")  # a planned step is dropped, not restated
    assert "checksum" in section(text, "Next steps")


def test_at_a_second_compaction_an_earlier_open_task_stays_as_what_was_open_then():
    assert "Open at the previous summary (pending): Update the changelog" in lines(summary(*SECOND), "Progress")


def test_with_nothing_after_the_earlier_summary_its_next_step_is_still_next():
    assert "staging database" in section(summary(M("user", PREVIOUS)), "Next steps")


def test_switched_off_the_earlier_next_step_stays_next(monkeypatch):
    monkeypatch.setenv(OFF_VARIABLE, "previous-next-as-history")
    assert "staging database" in section(summary(*SECOND), "Next steps")


DECLINE = (
    M("user", "Add a --verbose flag to the export command and wire it to the logger."),
    M("assistant", "Copying the flag parsing from import_cmd.go.", call("c1", "Edit", file_path="export_cmd.go")),
)


@pytest.mark.parametrize("rejection,after", [
    (REJECTED + " To tell you how to proceed, the user said:\nlet's avoid code duplication, reuse the shared flag "
     "helper", ()),
    (REJECTED + " STOP what you are doing and wait for the user to tell you how to proceed.",
     (M("user", "let's avoid code duplication, reuse the shared flag helper"),)),
], ids=["typed while declining", "the next turn"])
def test_a_declined_call_keeps_the_users_reason_as_a_constraint(rejection, after):
    text = summary(*DECLINE, M("tool", rejection, tool_call_id="c1", is_error=True), *after)
    constraints = lines(text, "Constraints")
    assert constraints.count('The user declined: Edit: file_path=export_cmd.go; the user said: "let\'s avoid code '
                             'duplication, reuse the shared flag helper"') == 1
    assert sum("code duplication" in c for c in constraints) == 1  # the reason is not a second constraint


def test_switched_off_a_declined_call_loses_the_reason(monkeypatch):
    monkeypatch.setenv(OFF_VARIABLE, "declined-with-reason")
    text = summary(*DECLINE, M("tool", REJECTED + " To tell you how to proceed, the user said:\nlet's avoid code "
                                      "duplication", tool_call_id="c1", is_error=True))
    assert "code duplication" not in text


# The shapes of text the importer tags `meta` in the shipped real pool (the tag reaches no model: a summarizer
# sees the text as any runtime sends it), each with a rule-like sentence that must not become the user's.
INJECTED = {
    "skill body": "Base directory for this skill: /home/u/.claude/skills/commit\n\n# Git Commit Skill\n\n- Always "
                  "use conventional commit messages for every commit.\n- Never push to the remote without asking.",
    "continue prompt": "Continue from where you left off.",
    "local-command caveat": "<local-command-caveat>Caveat: The messages below were generated by the user while "
                            "running local commands. DO NOT respond to these messages or otherwise consider them in "
                            "your response unless the user explicitly asks you to.</local-command-caveat>",
}


@pytest.mark.parametrize("injected", INJECTED.values(), ids=INJECTED.keys())
def test_injected_text_sets_no_goal_and_no_constraint(injected):
    text = summary(M("user", "Fix the typo in the README's install section."),
                   M("assistant", "Fixed it.", call("c1", "Edit", file_path="README.md")),
                   M("tool", "ok", tool_call_id="c1"), M("user", injected))
    said = section(text, "Constraints") + section(text, "Goal")
    assert not any(words in said for words in ("conventional commit", "Never push", "left off", "DO NOT respond",
                                               "local commands"))
    assert lines(text, "Goal") == ["Fix the typo in the README's install section."]
