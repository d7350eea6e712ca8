"""o200k token counts for the model layer, offline and deterministic.

The encoding comes from harness.tokens, which seeds tiktoken's cache from the packaged BPE file (one
loader for the whole harness; harness.tokens imports no session code at run time).
"""

from __future__ import annotations

from harness.tokens import encoding


def encode(text: str) -> list[int]:
    return encoding("o200k_base").encode_ordinary(text)


def count(text: str) -> int:
    return len(encode(text)) if text else 0


def decode(tokens: list[int]) -> str:
    return encoding("o200k_base").decode(tokens)
