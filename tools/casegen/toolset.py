"""The tool definitions every generated session's agent sent: the tools its calls use, plus the others a coding
agent ships, described at the length real runtimes give them (several thousand tokens in all), so the
request prefix the cost study caches has a realistic head. Written for this project; no runtime's text.

The calls in the sessions use bash(cmd), read_file(path), edit_file(path, old_string, new_string),
write_file(path, content) and grep(pattern, path); the schemas here match those arguments.
"""

from __future__ import annotations

from typing import Any


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required,
                           "additionalProperties": False}}


def _text(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


BASH = _tool("bash", """\
Run one shell command in the repository's working directory and return what it printed.

How commands run:
- Each call starts a fresh non-interactive bash; environment changes and `cd` do not carry over between calls,
  so chain dependent steps with `&&` in one command.
- Standard output and standard error are returned together, in order, followed by the exit status when it is
  not zero. Output longer than 30000 characters is cut in the middle and the cut is marked.
- A command that runs longer than 10 minutes is stopped. Start long-running servers in the background and
  redirect their output to a file you can read later.
- There is no terminal: commands that prompt for input fail. Pass non-interactive flags (`-y`, `--yes`,
  `--no-input`, `GIT_EDITOR=true`) where a tool would otherwise ask.

When to use it: running tests, builds, linters, type checkers, package managers, git, and short inspection
commands (`ls`, `wc`, `head` on large logs). Prefer read_file over `cat`, grep over `grep`/`rg` in the shell,
and edit_file over `sed -i`: those tools return output the session can quote exactly and keep a record of
what changed.

Safety:
- Never run commands that delete or overwrite files outside the repository, change global configuration,
  or push to a remote, unless the user asked for exactly that in this session.
- Do not print secrets: environment files, credential stores and tokens stay unread.
- Quote paths that contain spaces. Use absolute paths when the command's directory matters.

Git:
- Inspect with `git status`, `git diff` and `git log --oneline -n 20` before committing.
- Commit only when the user asks; write a message that says why the change was made.
- Never rewrite published history (no force push, no rebase of shared branches).""",
                {"cmd": _text("The command line to run, as one string."),
                 "timeout_s": {"type": "integer", "minimum": 1, "maximum": 600,
                               "description": "Seconds before the command is stopped (default 120)."}},
                ["cmd"])

READ_FILE = _tool("read_file", """\
Read a text file from the repository and return its lines, each prefixed with its 1-based line number and a
tab, so later edits can refer to exact lines.

- Paths are relative to the repository root or absolute. Reading a directory is an error: use list_dir.
- By default the first 2000 lines are returned. For longer files pass `offset` (first line to return) and
  `limit` (number of lines); the reply says how many lines the file has, so you can page on.
- Lines longer than 2000 characters are cut and marked.
- Binary files are refused with their size and detected type; images are described, not returned.
- Read a file before editing it: edit_file refuses to change a file that was not read in this session, or
  that changed on disk since it was read.
- Reading several files that are all needed is best done in one step with parallel calls.""",
                     {"path": _text("The file to read."),
                      "offset": {"type": "integer", "minimum": 1, "description": "First line to return."},
                      "limit": {"type": "integer", "minimum": 1, "description": "How many lines to return."}},
                     ["path"])

EDIT_FILE = _tool("edit_file", """\
Replace one exact piece of text in a file with another, and return the changed region with line numbers.

Rules that keep edits safe:
- `old_string` must occur exactly once in the file, character for character, whitespace and indentation
  included. Copy it from read_file's output without the line-number prefix. If it occurs more than once,
  include more surrounding lines until it is unique, or set `replace_all` to change every occurrence.
- `new_string` must differ from `old_string`. To delete text, pass an empty `new_string`.
- Keep the file's existing style: indentation, quotes, line endings, import order.
- The file must have been read in this session and not changed on disk since; otherwise the edit is refused
  and the reply says why.
- One edit changes one place. For several independent places in one file, make several calls; for a new file
  or a full rewrite, use write_file.

After an edit that affects behaviour, run the relevant tests with bash before reporting the change as done.""",
                     {"path": _text("The file to change."),
                      "old_string": _text("The exact text to replace (must be unique unless replace_all)."),
                      "new_string": _text("The text to put in its place."),
                      "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."}},
                     ["path", "old_string", "new_string"])

WRITE_FILE = _tool("write_file", """\
Create a file, or replace an existing file's whole content, and return the number of lines written.

- Parent directories are created as needed.
- Overwriting an existing file requires that it was read in this session; prefer edit_file for changes to
  part of a file, since a rewrite loses whatever was not copied.
- Do not create documentation or example files unless the user asked for them.
- Text is written as UTF-8 with the line endings given; end the file with a newline.""",
                      {"path": _text("The file to write."), "content": _text("The complete new content.")},
                      ["path", "content"])

GREP = _tool("grep", """\
Search file contents with a regular expression (ripgrep syntax) and return matching lines as
`path:line:text`, sorted by path.

- `pattern` is a regular expression; escape literal braces, dots and parentheses (`interface\\{\\}`,
  `foo\\.bar\\(`). Matching is case-sensitive unless `ignore_case` is set.
- `path` limits the search to a file or directory (default: the repository root). Files ignored by
  .gitignore, and binary files, are skipped.
- `glob` filters files by name (`*.py`, `src/**/*.ts`); `context` adds that many lines around each match.
- At most 500 matching lines are returned; the reply says when more were found. Narrow the pattern or the
  path rather than paging through results.
- Use it to find definitions, call sites, configuration keys and error strings before reading whole files.""",
                {"pattern": _text("The regular expression to search for."),
                 "path": _text("File or directory to search (default: the repository root)."),
                 "glob": _text("Only files whose path matches this glob."),
                 "ignore_case": {"type": "boolean", "description": "Case-insensitive matching."},
                 "context": {"type": "integer", "minimum": 0, "maximum": 20,
                             "description": "Lines of context before and after each match."}},
                ["pattern"])

GLOB = _tool("glob", """\
List files whose paths match a glob pattern (`**/*.go`, `tests/test_*.py`), newest first, at most 1000.
Ignored and hidden files are left out unless the pattern names them. Use it to find files by name; use grep
to find them by content.""",
             {"pattern": _text("The glob pattern, relative to `path`."),
              "path": _text("Directory to search from (default: the repository root).")},
             ["pattern"])

LIST_DIR = _tool("list_dir", """\
List a directory's entries, directories first, each with its size in bytes and a trailing slash on
directories; `depth` descends that many levels (default 1, at most 4). Entries ignored by .gitignore are
marked but listed.""",
                 {"path": _text("The directory to list."),
                  "depth": {"type": "integer", "minimum": 1, "maximum": 4, "description": "Levels to descend."}},
                 ["path"])

TODO = _tool("todo_write", """\
Replace the session's task list with the one given, to plan multi-step work and show progress.

- Use it when a request needs three or more distinct steps, or when the user gives several tasks at once.
  Skip it for a single quick change.
- Each item has a short imperative `content` and a `status`: pending, in_progress or completed. Keep exactly
  one item in progress while working; mark an item completed as soon as it is done, not in batches.
- Add the follow-up work you discover as new items rather than doing it silently.
- Never mark an item completed when its tests fail or the change is partial; leave it in progress and add an
  item for what blocks it.""",
             {"todos": {"type": "array", "description": "The whole new list.",
                        "items": {"type": "object", "required": ["content", "status"],
                                  "properties": {"content": _text("What to do."),
                                                 "status": {"type": "string",
                                                            "enum": ["pending", "in_progress", "completed"]}}}}},
             ["todos"])

WEB_FETCH = _tool("web_fetch", """\
Fetch a public web page over HTTPS and return its main text converted to Markdown, at most 50000 characters.
Use it for documentation, changelogs and issue threads the user points to. Pages behind a login, and
addresses on private networks, are refused. Quote what you rely on and give its address.""",
                  {"url": _text("The https address to fetch."),
                   "question": _text("What to look for on the page (used to pick the relevant part).")},
                  ["url"])

TASK = _tool("task", """\
Hand a self-contained piece of work to a sub-agent with its own fresh context and the same tools, and return
its final report (the sub-agent's intermediate steps are not shown).

When it helps:
- Broad searches whose results you only need summarised: "find every place the retry budget is read and say
  which ones ignore the config", "list the modules that import the legacy client".
- Independent investigations that can run in parallel: launch several task calls in one step.
- Reviews of a finished change against a checklist, where a fresh reader catches what you stopped seeing.

When it does not:
- Reading one known file, or a search a single grep answers: do those yourself.
- Work that needs the conversation so far: the sub-agent sees only the prompt you write.

Writing the prompt:
- State the goal, the repository paths that matter, what is already known, and exactly what the report must
  contain (file paths with line numbers, commands run and their results, open questions).
- Say whether the sub-agent may change files. By default it only reads and runs read-only commands.
- The report is not shown to the user: relay what matters in your own reply.""",
             {"description": _text("Three to six words naming the task."),
              "prompt": _text("The complete instructions for the sub-agent."),
              "may_edit": {"type": "boolean", "description": "Allow the sub-agent to change files (default false)."}},
             ["description", "prompt"])

DIAGNOSTICS = _tool("diagnostics", """\
Ask the language server for the repository's current errors and warnings, or for one symbol's definition and
references, without running a build.

- `mode` "problems" returns the compiler, type checker and linter findings for `path` (a file or directory),
  each as `path:line:column severity code message`, errors first, at most 200.
- `mode` "definition" and "references" take `path`, `line` and `column` of a symbol and return the locations
  with a line of context each.
- Findings reflect files as saved; after edit_file, wait for the reply before asking again.
- A language without a configured server returns an empty list and says so: fall back to the project's
  build or type-check command through bash.""",
                    {"mode": {"type": "string", "enum": ["problems", "definition", "references"],
                              "description": "What to ask for."},
                     "path": _text("File or directory."),
                     "line": {"type": "integer", "minimum": 1, "description": "1-based line of the symbol."},
                     "column": {"type": "integer", "minimum": 1, "description": "1-based column of the symbol."}},
                    ["mode", "path"])

ASK_USER = _tool("ask_user", """\
Put one question to the user and wait for the answer, when the work cannot go on without a decision only
they can make: two designs with different costs, a destructive step, credentials, or a requirement that
contradicts an earlier one. Offer two to four concrete options, the one you recommend first with its reason.
Do not ask what the repository, its tests or its documentation can answer, and do not ask for permission
to do what the user already asked for.""",
                 {"question": _text("The question, self-contained."),
                  "options": {"type": "array", "minItems": 2, "maxItems": 4,
                              "items": {"type": "object", "required": ["label"],
                                        "properties": {"label": _text("A short answer."),
                                                       "detail": _text("What choosing it means.")}}}},
                 ["question", "options"])

TOOLS: tuple[dict[str, Any], ...] = (BASH, READ_FILE, EDIT_FILE, WRITE_FILE, GREP, GLOB, LIST_DIR, TODO, WEB_FETCH, TASK,
                                    DIAGNOSTICS, ASK_USER)
