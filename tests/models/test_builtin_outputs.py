"""How the builtin summarizer reads a tool's output: a task runner's per-line tags, passing-test and cache
lines that state no fact, and the command a script runner echoes."""

from __future__ import annotations

from harness.models.base import ChatMessage as M
from harness.models.base import ModelRequest, ToolCallSpec
from harness.models.builtin import BuiltinClient
from harness.models.builtin.facts import fact_lines
from harness.models.builtin.outputs import is_bookkeeping, script_echo, untagged
from harness.models.builtin.steps import error_line

INSTRUCTION = M("user", "Summarize the conversation so far. Use exactly these sections:\n" + "\n".join(
    f"## {s}" for s in ("Goal", "Progress", "Files", "Errors", "Next steps")))
TURBO = "\n".join([
    "$ turbo run typecheck lint test",
    "web:test: (pass) parser > reads flags [0.21ms]",
    "web:test: (pass) parser > rejects unknown flags [0.07ms]",
    "web:lint: cache miss, executing 13127b6ef9a51577",
    "web:lint: src/cli/args.ts:1:8 lint/style/useImportType  FIXABLE",
    "web:lint: Found 1 error.",
])


def test_a_task_runners_tags_go_only_when_most_lines_carry_one() -> None:
    assert untagged(TURBO).splitlines()[4] == "src/cli/args.ts:1:8 lint/style/useImportType  FIXABLE"
    prose = "note: this line has a colon\nsecond line\nthird line"
    assert untagged(prose) == prose


def test_the_diagnostic_under_a_tag_is_the_error() -> None:
    assert "useImportType" in error_line(untagged(TURBO))
    assert "useImportType" not in error_line(TURBO)  # the tag hid the diagnostic's shape


def test_passing_tests_and_cache_lines_are_no_exact_values() -> None:
    assert is_bookkeeping("(pass) parser > reads flags [0.21ms]") and is_bookkeeping("--- PASS: TestX (0.00s)")
    assert is_bookkeeping("cache hit, replaying logs e28c36bfdd04fdef")
    assert not is_bookkeeping("(fail) parser > reads flags [0.21ms]")
    lines = [line for line, _ in fact_lines(untagged(TURBO))]
    assert not any("(pass)" in line or "cache" in line for line in lines)


def test_a_check_marked_test_with_its_duration_is_a_pass_not_a_value() -> None:
    # vitest per test and per file, jest with a spaced unit, mocha and node's runner in parentheses
    for line in ("✓ buildSnapshot parses timezone 3ms", "✓ src/sync/socket.test.ts (10 tests) 549ms",
                 "✓ renders the toolbar (23 ms)", "✔ retries on timeout (45ms)", "✔ parses v1.2.3 (1.234ms)",
                 "√ slow suite 2s"):
        assert is_bookkeeping(line), line
    # a check mark without a duration is a tool's status line, which may state a value; a failure is no pass
    for line in ("✓ Created orphan branch 'entire/sessions' for session metadata", "✔ No ESLint warnings or errors",
                 "× buildSnapshot parses timezone 3ms", "✓ port set to 7421"):
        assert not is_bookkeeping(line), line
    output = "✓ src/a.test.ts (33 tests) 560ms\n✓ b parses v1.2.3 4ms\n Tests  33 passed (33)\n Duration  1.52s\n"
    assert [line for line, _ in fact_lines(output)] == ["Duration 1.52s"]  # the totals stay


def test_a_scripts_echoed_command_is_an_exact_value() -> None:
    assert script_echo("$ turbo run typecheck lint test") == ("turbo run typecheck lint test",)
    assert script_echo("$ ls") == () and script_echo("costs $ 5 a month") == ()
    assert ("$ turbo run typecheck lint test", ("turbo run typecheck lint test",)) in fact_lines(TURBO)


def test_the_summary_names_the_lint_rule_a_tagged_run_reported() -> None:
    call = ToolCallSpec("c1", "Bash", {"command": "bun run verify"})
    messages = (M("user", "Run the verify script and fix what it reports."),
                M("assistant", "Running verify.", (call,)), M("tool", TURBO, tool_call_id="c1", is_error=True))
    text = BuiltinClient().complete(ModelRequest("builtin", None, (*messages, INSTRUCTION), 1500)).text
    assert "useImportType" in text.split("## Errors\n", 1)[1]
    assert "(pass)" not in text
