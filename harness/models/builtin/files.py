"""Which files a step touched: the path arguments of a tool call, the files a patch or a shell command names.

Only what is a file counts: `strings.Count` or `t.Run` in an edit's new text is code, and the text of an
edit (old/new strings, file contents) is never scanned for paths at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.models.builtin.text import PATH

_PATH_KEYS = ("path", "file", "file_path", "filepath", "filename", "notebook_path", "target", "dest", "source")
_CONTENT_KEYS = ("content", "contents", "new_string", "old_string", "new_str", "old_str", "text", "body",
                 "prompt", "description", "plan", "todos", "new_source", "old", "new", "replacement", "query")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
_EXTENSION = re.compile(
    r"\.(py|pyi|go|ts|tsx|js|jsx|mjs|cjs|json|jsonl|toml|yaml|yml|md|mdx|txt|rs|swift|kt|java|rb|php|c|h|cc|"
    r"cpp|hpp|cs|sh|bash|zsh|sql|html|css|scss|lock|cfg|ini|env|xml|proto|gradle|mod|sum|vue|svelte|dart|ex|"
    r"exs|lua|ipynb|csv|log|plist|pbxproj|xcconfig|xcstrings|strings|gitignore|dockerfile|tf|hcl|conf)$", re.I)


def looks_like_file(path: str) -> bool:
    """A path to a file or folder, not a dotted identifier or a URL."""
    if not path or path.startswith(("http:", "https:", "//")) or len(path) > 200:
        return False
    if _EXTENSION.search(path):
        return True
    return path.startswith(("/", "./", "../", "~/")) and path.count("/") >= 2


def paths_of_call(arguments: dict) -> list[str]:
    """The files a tool call names, in argument order, without repeats."""
    found: list[str] = []
    for key, value in sorted(arguments.items()):
        if not isinstance(value, str):
            continue
        lower = key.lower()
        if lower in _PATH_KEYS:
            candidates = [value.strip()]
        elif lower in ("patch", "input") and _PATCH_FILE.search(value):
            candidates = [p.strip() for p in _PATCH_FILE.findall(value)]
        elif lower in _CONTENT_KEYS:
            continue
        else:
            candidates = [c.strip("`'\",;:()") for c in PATH.findall(value)]
            candidates = [c for c in candidates if looks_like_file(c)]
        for candidate in candidates:
            if candidate and candidate not in found and not candidate.startswith(("http:", "https:")):
                found.append(candidate)
    return found


def paths_in_text(text: str) -> list[str]:
    """Files a user or the agent names in prose."""
    found: list[str] = []
    for candidate in PATH.findall(text):
        candidate = candidate.strip("`'\",;:()")
        if looks_like_file(candidate) and candidate not in found:
            found.append(candidate)
    return found


ROOT_LEAD = "Under "  # "- Under /srv/app/:" heads the files listed relative to it
MIN_ROOT_PARTS = 2  # /srv/app: a root of one part (/Users) says nothing and saves little
MIN_ROOTED_FILES = 2


def common_root(paths: list[str]) -> str:
    """The deepest folder that holds at least half of the absolute paths ('' if none worth naming): a summary
    names it once and lists the files under it relative to it, not the same long prefix on every line. Files
    elsewhere (a plan in ~/.claude, a sibling checkout) keep their whole path."""
    absolute = [p for p in paths if p.startswith("/")]
    if len(absolute) < MIN_ROOTED_FILES:
        return ""
    counts: dict[str, int] = {}
    for path in absolute:
        parts = path.rstrip("/").split("/")[1:]
        parts = parts if not _EXTENSION.search(path) else parts[:-1]  # a folder read is a folder
        for depth in range(MIN_ROOT_PARTS, len(parts) + 1):
            folder = "/" + "/".join(parts[:depth]) + "/"
            counts[folder] = counts.get(folder, 0) + 1
    needed = max(MIN_ROOTED_FILES, (len(absolute) + 1) // 2)
    held = [folder for folder, count in counts.items() if count >= needed]
    return max(held, key=lambda folder: (folder.count("/"), counts[folder]), default="")


def same_file(known: str, path: str) -> bool:
    """A path relative to the working folder (`cmd/x.go` in a shell command) names the absolute one it ends."""
    if known == path:
        return True
    relative, absolute = (path, known) if known.startswith("/") else (known, path)
    relative = relative.removeprefix("./")
    return absolute.startswith("/") and not relative.startswith(("/", "~", "../")) and "/" in relative and \
        absolute.endswith("/" + relative)


def root_line(root: str) -> str:
    return f"{ROOT_LEAD}{root}:"


def read_root_line(item: str) -> str | None:
    """The root a summary's files section names ('- Under /srv/app/:'), else None."""
    if item.startswith(ROOT_LEAD) and item.endswith("/:"):
        return item[len(ROOT_LEAD):-1]
    return None


NAMES_LEAD = "; adds "  # "- cmd/x.go (edited; adds countLinesStr)": the names the edits declared
MAX_NAMES = 2  # the newest few: a file written whole declares many, and the files section has a share


@dataclass
class FileEntry:
    path: str
    actions: list[str] = field(default_factory=list)
    order: int = 0
    names: list[str] = field(default_factory=list)  # what the edits declared (edits.py)

    @property
    def written(self) -> bool:
        return any(a in ("edited", "created", "deleted") for a in self.actions)

    def line(self, root: str) -> str:
        path = self.path[len(root):] if root and self.path.startswith(root) else self.path
        said = ", ".join(a for a in self.actions if a)
        if self.names:
            said += NAMES_LEAD + ", ".join(self.names[-MAX_NAMES:])
        return f"- {path} ({said})" if said else f"- {path}"


def read_file_line(item: str, root: str) -> tuple[str, list[str], list[str]]:
    """(path, actions, names) of a line a summary's files section wrote (FileEntry.line)."""
    path, _, said = item.partition(" (")
    path = root + path if root and not path.startswith(("/", "~")) else path
    actions, _, names = said.rstrip(")").partition(NAMES_LEAD)
    return path, actions.split(", ") if actions else [""], [n for n in names.split(", ") if n]
