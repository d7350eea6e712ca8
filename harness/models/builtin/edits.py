"""What an edit changed, in the names it declares: the function, constant or type the new text defines and the
old text did not (`const testThreeLines`, `func countLinesStr` renamed from `countLines`).

A careful summary of a change says what the change added, not only which file it touched; the names an edit
declares are that in a word each, and they are what a later step (or a reader of the summary) refers to.
"""

from __future__ import annotations

import re

# A declaration in the common languages: Go (with a method receiver), Python, JS/TS, Rust, Swift, Kotlin, C#.
_DECLARATION = re.compile(
    r"\b(?:func|def|class|const|type|var|let|interface|struct|enum|fn|function|protocol|fun)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]{3,})")
_NEW_KEYS = ("new_string", "new_str", "content", "contents", "new_source")
_OLD_KEYS = ("old_string", "old_str")
# A plain lowercase word after a declaration keyword is a local or a comment's prose ("var metadata", "let self",
# "// a function with ..."); the names a change is remembered by have a shape (countLinesStr, retry_later, Parser).
_PLAIN_WORD = re.compile(r"[a-z]+")


def declared_names(arguments: dict) -> list[str]:
    """The names an edit's or a write's new text declares that its old text did not, in order."""
    new_texts = [_text(arguments, key) for key in _NEW_KEYS]
    old_texts = [_text(arguments, key) for key in _OLD_KEYS]
    for edit in arguments.get("edits") or []:  # several edits of one file in one call
        if isinstance(edit, dict):
            new_texts += [_text(edit, key) for key in _NEW_KEYS]
            old_texts += [_text(edit, key) for key in _OLD_KEYS]
    old = set(_DECLARATION.findall("\n".join(old_texts)))
    found: list[str] = []
    for name in _DECLARATION.findall("\n".join(new_texts)):
        if name not in old and name not in found and not _PLAIN_WORD.fullmatch(name):
            found.append(name)
    return found


def _text(arguments: dict, key: str) -> str:
    value = arguments.get(key)
    return value if isinstance(value, str) else ""
