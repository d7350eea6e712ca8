"""Artifacts: which files a session's tool calls touched, and which paths a text names (for the summary-level
checks in harness/metrics.py). Pure functions over session messages."""

from __future__ import annotations

import re
import shlex
from typing import Iterable

from harness.session import Message


# What counts as a path, and where touched files come from (issue 14):
# - a path is one token (no spaces) of path characters with a file extension or a known root; a slash-joined
#   pair of ordinary words (`and/or`, `WATCH/MULTI`) has neither, and a branch named in a git command is not one;
# - a tool call touches the paths in its path arguments (`path`, `file_path`, `paths`, ...), the file operands of
#   its shell command (redirection targets included; a grep pattern, a sed script, `find` expressions, `echo`
#   text, heredoc bodies and git refs are not operands) and the files named in patch headers. File contents
#   (`content`, `new_string`, a heredoc body) and free text name nothing.

_ROOTS = ("src/", "tests/", "test/", "lib/", "cmd/", "internal/", "app/", "docs/", "pkg/", "./", "../", "~/", "/")
_EXTENSIONS = frozenset(
    "py pyi ipynb ts tsx mts cts js jsx mjs cjs vue svelte go rs java kt kts scala swift c h cc cpp cxx hpp cs rb "
    "php pl lua sh bash zsh ps1 toml json jsonl yaml yml md mdx rst txt cfg ini conf env sql lock html htm css scss "
    "sass less xml csv tsv log proto graphql gql tf mod sum gradle patch diff pem cfg properties dockerfile".split())
_PATH_CHARS = re.compile(r"[\w.~+/-]+")
_LEAD = "([{<'\"`*"
_TRAIL = ".,;:!?)]}>'\"`*"
# A dot-name is a file only when it is a known one (`.join`, `.all` in a summary are methods).
_DOTFILE = re.compile(r"\.(?:env(?:\.[\w-]+)?|gitignore|gitattributes|gitmodules|dockerignore|editorconfig|npmrc|nvmrc|"
                      r"prettierrc|eslintrc|babelrc|bashrc|zshrc|profile|python-version|tool-versions)", re.I)
_NOT_FILES = {"dev/null", "/dev/null", "dev/stdout", "dev/stderr"}


def _path_form(token: str) -> str | None:
    """The normal form of a token that looks like a path (no `./`, no trailing `/`), or None."""
    if "." not in token and "/" not in token:  # no extension, dot-name or root can come out of it: most words
        return None
    token = token.strip().lstrip(_LEAD).rstrip(_TRAIL)
    token = token.split("::", 1)[0]  # tests/x.py::test_name
    token = re.sub(r"(?::\d+){1,2}$", "", token)  # src/x.py:12:3
    if token.endswith("/..."):  # a Go package pattern: ./internal/queue/...
        token = token[:-4]
    if not token or not _PATH_CHARS.fullmatch(token) or token in _NOT_FILES:
        return None
    name = token.rstrip("/").rsplit("/", 1)[-1]
    stem, dot, extension = name.rpartition(".")
    has_extension = bool(dot) and extension.lower() in _EXTENSIONS and bool(stem.strip("."))
    dotfile = bool(_DOTFILE.fullmatch(name))
    root = next((r for r in _ROOTS if token.startswith(r)), None)
    if not (has_extension or dotfile or (root and token[len(root):].strip("/."))):
        return None
    while token.startswith("./"):
        token = token[2:]
    return token.rstrip("/") or None


def _split_text(text: str) -> list[str]:
    return [t for t in re.split(r"[\s,;()\[\]{}<>\"'`|*=]+", text) if t]


def paths_in(text: str, refs: Iterable[str] = ()) -> set[str]:
    """The paths a text names, in normal form; `refs` (branch names from git commands) are not paths."""
    refs = {r.lower() for r in refs}
    refs |= {r.lower() for r in _git_refs_in_text(text)}
    found = set()
    for token in _split_text(text):
        form = _path_form(token)
        if form and form.lower() not in refs and token.strip(_LEAD + _TRAIL).lower() not in refs:
            found.add(form)
    return found


# -- shell commands

_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_]\w*)\1([^\n]*)\n.*?(?:^[ \t]*\2[ \t]*$|\Z)", re.S | re.M)
_SEPARATORS = {";", "&&", "||", "|", "&", "|&", ";;", "(", ")"}
_NO_FILE_OPERANDS = {"cd", "pushd", "popd", "echo", "printf", "export", "set", "unset", "alias", "true", "false",
                     "exit", "submit", "sleep", "kill", "which", "type", "pip", "pip3", "npm", "apt", "apt-get",
                     "brew", "kubectl", "docker", "curl", "wget", "ssh"}
_WRAPPERS = {"sudo", "time", "env", "nohup", "exec", "command", "builtin", "nice", "xargs"}
_PATTERN_FIRST = {"grep", "egrep", "fgrep", "rg", "ag", "ack"}
_SCRIPT_FIRST = {"sed", "awk", "gawk", "mawk", "jq"}
_CODE_FLAGS = {"python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "deno"}
# options whose next word is their value (a count, a pattern, a glob), not an operand
_VALUE_OPTIONS = {
    "grep": {"-e", "-f", "-m", "-A", "-B", "-C", "--regexp", "--file", "--max-count", "--context", "--include",
             "--exclude"},
    "rg": {"-e", "-f", "-m", "-A", "-B", "-C", "-g", "-t", "-T", "-M", "-j", "--glob", "--type", "--type-not",
           "--regexp", "--max-count", "--context"},
    "sed": {"-e", "-f", "-l"}, "awk": {"-F", "-v", "-f"}, "jq": {"--arg", "--argjson"},
}
_GIT_REF_ONLY = {"switch", "branch", "push", "pull", "fetch", "merge", "rebase", "tag", "cherry-pick", "revert",
                 "remote", "clone", "worktree", "init"}
_GIT_VALUE_OPTIONS = {"-m", "--message", "-b", "-B", "-c", "-C", "--orphan", "-n", "--max-count", "--author",
                      "--since", "--until", "--format", "--pretty", "-u", "--set-upstream-to", "--onto"}
_PATCH_KEYS = {"patch", "diff", "input", "changes"}
_PATCH_CUE = re.compile(r"\bapply_patch\b|\bgit\s+apply\b|(?:^|[;&|]\s*)patch\b|\*\*\* Begin Patch", re.M)
_PATCH_HEADER = re.compile(r"^(?:diff --git a/(\S+) b/(\S+)|--- (?:a/)?(\S+)|\+\+\+ (?:b/)?(\S+)|"
                           r"\*\*\* (?:Update|Add|Delete) File: (.+?)|\*\*\* Move to: (.+?))[ \t]*$", re.M)
_COMMAND_KEYS = {"cmd", "command", "commands", "script", "shell"}


def _is_path_key(key: str) -> bool:
    return bool(re.search(r"(?:^|_)(?:path|file|filename|filepath|target|dest|destination|source|src|dst)s?$",
                          key.lower()) or key.lower() in ("paths", "files", "filenames"))


def _shell_units(command: str) -> list[list[str]]:
    """A shell command as token lists, one per line (a quoted string may span lines); heredoc bodies dropped."""
    command = _HEREDOC.sub(lambda m: m.group(3), command.replace("\\\n", " "))
    units, pending = [], ""
    for line in command.split("\n"):
        pending = f"{pending}\n{line}" if pending else line
        lexer = shlex.shlex(pending, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split, lexer.commenters = True, ""
        try:
            units.append(list(lexer))
        except ValueError:  # an open quote: the string goes on on the next line
            continue
        pending = ""
    if pending:
        units.append(pending.split())
    return units


def _simple_commands(tokens: list[str]) -> tuple[list[list[str]], list[str]]:
    """Split tokens into simple commands; return them and the redirection targets."""
    commands, redirected, words = [], [], []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in _SEPARATORS:
            commands.append(words)
            words = []
        elif set(token) <= set("<>&") and ("<" in token or ">" in token):
            if i + 1 < len(tokens) and not tokens[i + 1].isdigit() and tokens[i + 1] not in _SEPARATORS:
                redirected.append(tokens[i + 1])
                i += 1
        else:
            words.append(token)
        i += 1
    commands.append(words)
    return [c for c in commands if c], redirected


def _git_words(args: list[str]) -> tuple[list[str], list[str]]:
    """(path operands, refs) of a git command line after `git`."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    if i >= len(args):
        return [], []
    sub, rest = args[i], args[i + 1:]
    after = rest[rest.index("--") + 1:] if "--" in rest else []
    before = rest[:rest.index("--")] if "--" in rest else rest
    operands, refs, j = [], [], 0
    while j < len(before):
        word = before[j]
        if word in _GIT_VALUE_OPTIONS:
            if word in ("-b", "-B", "--orphan", "-u", "--set-upstream-to", "--onto") and j + 1 < len(before):
                refs.append(before[j + 1])
            j += 2
            continue
        if not word.startswith("-"):
            operands.append(word)
        j += 1
    if sub in _GIT_REF_ONLY:
        return after, refs + operands
    if sub == "checkout":
        # without `--`, an operand with a file extension is a file; anything else is a branch or commit
        files = [w for w in operands if not refs and _path_form(w) and "." in w.rsplit("/", 1)[-1]]
        return after + files, refs + [w for w in operands if w not in files]
    if sub == "grep" and operands:
        operands = operands[1:]
    return operands + after, refs


def _git_refs_in_text(text: str) -> list[str]:
    """Branch names in git commands written out in a text (a summary quoting `git checkout -b feat/x`)."""
    refs = []
    for match in re.finditer(r"\bgit\s+[^\n`]*", text):
        try:
            words = shlex.split(match.group(0))
        except ValueError:
            words = match.group(0).split()
        refs += _git_words(words[1:])[1]
    return refs


def _command_operands(words: list[str]) -> tuple[list[str], list[str]]:
    """(file operands, git refs) of one simple command."""
    while words and re.fullmatch(r"[A-Za-z_]\w*=\S*", words[0]):
        words = words[1:]
    while words and words[0] in _WRAPPERS:
        words = words[1:]
    if not words:
        return [], []
    name, args = words[0].rsplit("/", 1)[-1], words[1:]
    if name == "git":
        return _git_words(args)
    if name in _NO_FILE_OPERANDS:
        return [], []
    if name in ("find", "fd", "ls", "tree"):  # directories searched or listed; `-name x.py` is a pattern
        return [], []
    family = "rg" if name in ("rg", "ag", "ack") else "grep" if name in _PATTERN_FIRST else name
    value_options = _VALUE_OPTIONS.get(family, set())
    if name in _CODE_FLAGS:
        value_options = {"-c", "-e", "-p", "-pe", "-ne", "-lc", "-ic"}
    out, j, given = [], 0, False
    while j < len(args):
        word = args[j]
        if word in value_options:
            given = given or word in ("-e", "-f", "--regexp", "--file")
            j += 2
            continue
        if word.startswith("-"):
            if "=" in word:
                out.append(word.split("=", 1)[1])
        else:
            out.append(word)
        j += 1
    if (name in _PATTERN_FIRST or name in _SCRIPT_FIRST) and not given and out:
        out = out[1:]  # the pattern or script
    return out, []


def _command_paths(command: str) -> tuple[set[str], list[str]]:
    paths, refs = set(), []
    first = command.lstrip().split(None, 1)[0] if command.strip() else ""
    if first == "edit":  # SWE-agent's `edit N:M` carries the new lines after its first line
        command = command.split("\n", 1)[0]
    for tokens in _shell_units(command):
        commands, redirected = _simple_commands(tokens)
        for words in commands:
            operands, found_refs = _command_operands(words)
            paths |= {p for p in map(_path_form, operands) if p}
            refs += found_refs
        paths |= {p for p in map(_path_form, redirected) if p}
    if _PATCH_CUE.search(command):
        paths |= _patch_paths(command)
    return paths, refs


def _patch_paths(text: str) -> set[str]:
    found = set()
    for match in _PATCH_HEADER.finditer(text):
        for group in match.groups():
            form = _path_form(group) if group else None
            if form:
                found.add(form)
    return found


def argument_strings(value) -> list[str]:
    """The strings of a tool-call argument value: the value itself, or the strings of a list."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def _call_paths(arguments: dict) -> tuple[set[str], list[str]]:
    paths, refs = set(), []
    for key, value in arguments.items():
        if _is_path_key(key):
            paths |= {p for p in map(_path_form, argument_strings(value)) if p}
        elif key.lower() in _COMMAND_KEYS:
            strings = argument_strings(value)
            if isinstance(value, (list, tuple)):  # an argv: ["bash", "-lc", "..."] or ["cat", "a.py"]
                if len(strings) >= 3 and strings[1] in ("-c", "-lc"):
                    strings = [strings[-1]]
                else:
                    strings = [shlex.join(strings)]
            for command in strings:
                found, found_refs = _command_paths(command)
                paths |= found
                refs += found_refs
        elif key.lower() in _PATCH_KEYS:
            paths |= {p for s in argument_strings(value) for p in _patch_paths(s)}
    return paths, refs


def touched_paths(messages: Iterable[Message]) -> set[str]:
    """The files the agent read, edited, created or ran: the path arguments of its tool calls, the file operands
    of its shell commands and the files of its patches, never a file's contents."""
    return set().union(*(_call_paths(call.arguments)[0] for m in messages for call in m.tool_calls))


def git_refs(messages: Iterable[Message]) -> set[str]:
    """Branch (and other ref) names in the git commands of tool calls: `git checkout -b feat/retries`."""
    return {r for m in messages for call in m.tool_calls for r in _call_paths(call.arguments)[1]}
