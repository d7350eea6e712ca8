"""What a user turn is, beyond the harness noise (noise.py): the user's own request, a document the user pasted
in as material to work on, or a shell command typed into the chat by mistake.

A pasted document (a guide, a spec, a log) is what the user hands over, not what the user asks: its "must" and
"use" sentences are the document's rules, not the user's constraints, and its values are material like a read
file's. A request that carries a plan ("Implement the following plan: # ...") is the user's instruction and
stays one: only a turn that opens with the document itself, with no words of the user before it, is material;
and the session's first request is its task whatever its shape, so only a later turn is read as material.
"""

from __future__ import annotations

import re

MIN_DOCUMENT_LINES = 15  # a short structured note ("# Fix\n- use port 9090") is still the user talking
MAX_COMMAND_WORDS = 3  # "claude --permission-mode plan --x": the program and a few flag values
_DOCUMENT_START = re.compile(r"^\s*(#{1,6}\s+\S|---\s*$|```)")
_FLAG = re.compile(r"^--?[A-Za-z][\w-]*(=\S+)?$")


def is_pasted_document(words: str) -> bool:
    """A long turn that opens with a heading, front matter or a code fence: material, not a request. (A turn
    that opens with a tag is a harness's task statement, `<uploaded_files>`, `<pr_description>`: a request.)"""
    lines = [line for line in words.splitlines() if line.strip()]
    return len(lines) >= MIN_DOCUMENT_LINES and bool(_DOCUMENT_START.match(lines[0]))


def document_title(words: str) -> str:
    """The first heading of a pasted document, else its first line."""
    lines = [line.strip() for line in words.splitlines() if line.strip()]
    heading = next((line for line in lines if line.startswith("#")), lines[0] if lines else "")
    return heading.lstrip("# ").strip()


def is_shell_command(words: str) -> bool:
    """One line that is a program and its flags (`claude --dangerously-skip-permissions`): typed into the chat
    instead of a terminal, it asks for nothing."""
    if "\n" in words.strip():
        return False
    tokens = words.split()
    flags = [t for t in tokens if _FLAG.match(t)]
    return bool(flags) and len(tokens) - len(flags) <= MAX_COMMAND_WORDS and not tokens[0].startswith("-")
