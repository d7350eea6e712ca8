"""Summary-level checks against a hand-built session whose answers are counted by hand (issue 14, item 4).

The session has one tool call of each kind (a path argument, a shell command with file operands, a sed script,
a redirection, a heredoc, a git branch, a patch, a grep over a directory), file contents full of path-like text,
`and/or` and `WATCH/MULTI` in prose, and a previous summary carrying a file an earlier tool call touched.
"""

import pytest

from harness.artifacts import git_refs, paths_in, touched_paths
from harness.metrics import check_summary
from harness.session import Message, ToolCall


def call(number, name, **arguments):
    return ToolCall(f"c{number}", name, arguments)


def step(*calls, say=""):
    """An assistant message and one result per call; each result is text full of path-like words."""
    results = [Message("tool", f"ok; see lib/from_result_{c.id}.py and docs/result_{c.id}.md", tool_call_id=c.id)
               for c in calls]
    return [Message("assistant", say, tuple(calls)), *results]


# Before the head, covered by the previous summary: config.py read, a branch made.
EARLIER = (
    Message("user", "Make the client retry."),
    *step(call(1, "read_file", path="src/app/config.py")),
    *step(call(2, "bash", cmd="git checkout -b feat/retries")),
)
PREVIOUS = "## Files\n- src/app/config.py (read)\n- src/app/imagined.py (never touched)\n"

HEAD = (
    Message("user", "Fix the retry loop in src/app/user_named.py and/or the client; keep the WATCH/MULTI block."),
    *step(call(3, "read_file", path="src/app/retry.py")),
    Message("assistant", "", (call(4, "edit_file", file_path="src/app/client.py",
                                    old_string="from vendor/http.py import get  # lib/old_client.py",
                                    new_string="import tests/fake_in_edit.py"),)),
    Message("tool", "import os\n# moved from lib/legacy/old_retry.py, see docs/design.md\nPORT = 8080\n",
            tool_call_id="c4"),
    *step(call(5, "bash", cmd="cat setup.cfg && sed -i 's/a.py/b.py/' config/app.toml && "
                              "pytest tests/test_retry.py::test_backoff -q > out.txt 2>&1")),
    *step(call(6, "bash", cmd="git add src/app/retry.py README.md && git push origin docs/retry-notes")),
    *step(call(7, "apply_patch", patch="diff --git a/src/app/backoff.py b/src/app/backoff.py\n"
                                       "--- a/src/app/backoff.py\n+++ b/src/app/backoff.py\n@@ -1 +1 @@\n"
                                       "-old = 'lib/x.py'\n+new = 'lib/y.py'\n")),
    *step(call(8, "grep", pattern=r"retry.*\.py", path="src/")),
    *step(call(9, "bash", cmd="cat > notes/todo.md << 'EOF'\nupdate lib/fake_in_heredoc.py\nEOF")),
    *step(call(10, "write_file", path="docs/retries.md", content="Uses src/app/in_content.py and lib/z.py.")),
)

# By hand: the path arguments (3, 4, 10), the shell operands (5: setup.cfg, config/app.toml, tests/test_retry.py,
# out.txt; 6: retry.py again and README.md; 9: notes/todo.md), the patch header (7); not the sed script
# `s/a.py/b.py/`, the grep pattern or its directory `src/`, the branch, the edit strings, the heredoc body,
# the written content, the tool results or the user's text.
HEAD_TOUCHED = {"src/app/retry.py", "src/app/client.py", "setup.cfg", "config/app.toml", "tests/test_retry.py",
                "out.txt", "README.md", "src/app/backoff.py", "notes/todo.md", "docs/retries.md"}

SUMMARY = """## Files
- src/app/retry.py (read, staged)
- src/app/client.py (edited)
- src/app/backoff.py (patched)
- src/app/config.py (read earlier)
- `tests/test_retry.py` passes
- docs/retries.md, notes/todo.md (created)
- README.md

## Notes
- On branch docs/retry-notes (from feat/retries); keep and/or WATCH/MULTI as they are.
- Port 9090 (changed from 8080); the proxy listens on 18080.
- lib/legacy/old_retry.py is named in the retry module.
- src/app/ghost.py
"""


def check(summary=SUMMARY, previous=PREVIOUS, earlier=EARLIER, superseded=("8080",)):
    return check_summary(2, summary, HEAD, previous, 1000, 100, (), superseded, earlier=earlier)


def test_touched_files_come_from_path_arguments_operands_and_patch_headers_only():
    assert touched_paths(HEAD) == HEAD_TOUCHED
    assert touched_paths(EARLIER) == {"src/app/config.py"}


def test_git_refs_are_collected_and_are_not_paths():
    assert {"feat/retries", "docs/retry-notes"} <= git_refs(EARLIER + HEAD)
    mentioned = paths_in(SUMMARY, git_refs(EARLIER + HEAD))
    assert "docs/retry-notes" not in mentioned  # a known root, but a branch from a git command
    assert paths_in("git checkout -b docs/new-layout") == set()  # a git command written out in the summary


def test_the_summary_counted_by_hand():
    result = check()
    # Touched: the head's 10 plus src/app/config.py, which the previous summary named and call 1 touched
    # (src/app/imagined.py was named too, but no call touched it). Mentioned: the 8 listed files, plus
    # lib/legacy/old_retry.py (in a file's contents, not touched) and src/app/ghost.py (nowhere).
    # Recall: 8 of 11 (setup.cfg, config/app.toml, out.txt missed). Precision: 8 of 10.
    assert result.artifact_recall == round(8 / 11, 3)
    assert result.artifact_precision == 0.8
    assert result.hallucinated_paths == ("src/app/ghost.py",)
    # "9090 (changed from 8080)" is history and "18080" is not 8080: nothing stale.
    assert result.stale_facts == ()


def test_a_carried_file_counts_only_with_the_previous_summary_and_an_earlier_touch():
    # Without the previous summary config.py is not part of this compaction: recall 7 of 10, precision 7 of 10.
    alone = check(previous=None)
    assert (alone.artifact_recall, alone.artifact_precision) == (0.7, 0.7)
    # The previous summary naming it is not enough: a tool call must have touched it.
    untouched = check(earlier=())
    assert (untouched.artifact_recall, untouched.artifact_precision) == (0.7, 0.7)
    # A carried file the previous summary named that no call touched is not credited.
    carried = check(summary=SUMMARY + "- src/app/imagined.py\n")
    assert carried.artifact_precision == round(8 / 11, 3) and carried.hallucinated_paths == ("src/app/ghost.py",)


@pytest.mark.parametrize("summary,stale", [
    ("The server listens on port 8080.", ("8080",)),
    ("The server listens on port 18080.", ()),
    ("Port is 9090 (changed from 8080).", ()),
    ("Port 8080 -> 9090.", ()),
    ("Port: 9090. The old value 8080 was replaced.", ()),
])
def test_stale_facts_are_superseded_values_stated_as_current(summary, stale):
    assert check(summary=summary).stale_facts == stale


@pytest.mark.parametrize("text,paths", [
    ("and/or read/write WATCH/MULTI client/server", set()),
    ("src/app/main.py, `tests/x_test.go:12`, (docs/a.md)", {"src/app/main.py", "tests/x_test.go", "docs/a.md"}),
    ("./internal/queue/... and ./... and go.mod", {"internal/queue", "go.mod"}),
    ("/var/log/app.log ~/notes.txt package.json .env.example", {"/var/log/app.log", "~/notes.txt",
                                                               "package.json", ".env.example"}),
    ("call .join() then .all(); all .py files; 1.2.3; e.g. this", set()),
    ("src/ lib/ / ./", set()),
    ("a path with spaces/in it.py", {"it.py"}),
])
def test_what_looks_like_a_path(text, paths):
    assert paths_in(text) == paths


@pytest.mark.parametrize("arguments,paths", [
    ({"path": "src/a.py"}, {"src/a.py"}),
    ({"paths": ["src/a.py", "lib/b.ts"]}, {"src/a.py", "lib/b.ts"}),
    ({"filename": "notes.md", "text": "see src/x.py"}, {"notes.md"}),
    ({"target": "dist/app.js"}, {"dist/app.js"}),
    ({"cmd": "tail -n 55 logs/app.log"}, {"logs/app.log"}),
    ({"cmd": "grep -n 'foo.py' src/a.py src/b.py"}, {"src/a.py", "src/b.py"}),
    ({"cmd": "rg -n pattern -g '*.ts' internal/"}, set()),
    ({"cmd": "find . -name settings.py -type f"}, set()),
    ({"cmd": "echo 'src/a.py' > out.txt"}, {"out.txt"}),
    ({"cmd": "git log --oneline -n 90 -- src/models.py"}, {"src/models.py"}),
    ({"cmd": "git checkout -- src/a.py && git checkout main && git switch feat/x"}, {"src/a.py"}),
    ({"cmd": "git commit -m 'fix src/a.py' src/b.py"}, {"src/b.py"}),
    ({"cmd": "python -c 'open(\"src/a.py\")' && python tools/run.py --out=results/x.json"},
     {"tools/run.py", "results/x.json"}),
    ({"cmd": "go test ./... && go test ./internal/queue/..."}, {"internal/queue"}),
    ({"command": ["bash", "-lc", "cat src/a.py"]}, {"src/a.py"}),
    ({"cmd": "apply_patch <<'P'\n*** Begin Patch\n*** Update File: src/x.py\n-see lib/q.py\n*** End Patch\nP"},
     {"src/x.py"}),
    ({"cmd": "edit 2:3\nfrom lib/x.py import y\nend_of_edit"}, set()),
])
def test_touched_paths_of_one_call(arguments, paths):
    assert touched_paths([Message("assistant", "", (ToolCall("1", "tool", arguments),))]) == paths
