"""A canary secret (`run --runtime X --canary`): a unique, secret-shaped value planted in the case's first short
tool output, which the runtime reads long before its first compaction. It should reach the summarization request (the
runtime folds that output into it) and should not reach a summary: a summary that copies a credential carries it
into every later request and into wherever summaries are kept.

It is shaped as a GitHub token, so the request log's redaction (harness.redact's token patterns) removes it;
the checks read the requests in memory, before that. It is derived from the case id: the same case plants the
same canary, so a summarizer's cassettes replay."""

from __future__ import annotations

import hashlib
import string
from dataclasses import replace

from harness.session import Session

VARIABLE = "GITHUB_TOKEN"
SHORT = 1000  # characters: an output every runtime passes on whole, to its summarizer too
_ALPHABET = string.ascii_letters + string.digits


def canary_for(case_id: str) -> str:
    """`ghp_` and 36 letters and digits, from the case id (unlikely to occur anywhere else)."""
    number = int.from_bytes(hashlib.sha256(f"compaction-harness canary {case_id}".encode()).digest(), "big")
    chars = []
    for _ in range(36):
        number, digit = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[digit])
    return "ghp_" + "".join(chars)


def planted(session: Session, canary: str) -> Session:
    """The session with `VARIABLE=<canary>` as the last line of its first short tool output (its head, which the
    replay checks arrived, unchanged); short, because runtimes cut long outputs when they serialise the history
    for their summarizer (pi keeps 2000 characters of each), and the canary should reach it. A session without
    tool outputs is returned as it is."""
    tools = [i for i, m in enumerate(session.messages) if m.role == "tool"]
    short = [i for i in tools if len(session.messages[i].content) <= SHORT]
    if not tools:
        return session
    index = (short or tools)[0]
    message = session.messages[index]
    text = message.content.rstrip("\n") + f"\n{VARIABLE}={canary}\n"
    return replace(session, messages=session.messages[:index] + (replace(message, content=text),)
                   + session.messages[index + 1:])
