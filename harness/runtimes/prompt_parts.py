"""A runtime's requests as their content parts (tool definitions, system, each message), for counting and for
the prompt-cache simulation over a whole drive. A drive re-sends the same history in every request, so each part
is encoded once and every later request reuses its tokens; and an earlier prefix is found part by part, so a
request costs hashing its parts, not re-reading its tokens. Parts are encoded one by one, as the emulator counts a
request: a part boundary may count a token apart from encoding the whole request at once."""

from __future__ import annotations

import hashlib
import json

from harness.models import _tokens
from harness.models.base import ModelRequest


class Parts:
    def __init__(self) -> None:
        self._memo: dict[str, list[int]] = {}

    def split(self, request: ModelRequest, tools: bool = True) -> list[str]:
        """The request's parts as the emulator's `content_tokens` joins them (each after the first on a new line)."""
        parts = [json.dumps(t, sort_keys=True) for t in request.tools] if tools else []
        parts.append(request.system or "")
        for m in request.messages:
            calls = "".join(f"{c.name}{json.dumps(c.arguments, sort_keys=True)}" for c in m.tool_calls)
            parts.append(f"<|{m.role}|>{m.content}{calls}")
        return [part if i == 0 else "\n" + part for i, part in enumerate(parts)]

    def tokens(self, part: str) -> list[int]:
        found = self._memo.get(part)
        if found is None:
            found = self._memo[part] = _tokens.encode(part)
        return found

    def count(self, parts: list[str]) -> int:
        return sum(len(self.tokens(part)) for part in parts)

    def encode(self, parts: list[str]) -> list[int]:
        out: list[int] = []
        for part in parts:
            out += self.tokens(part)
        return out

    def common(self, a: list[str], b: list[str]) -> int:
        """Tokens of the prefix two requests share: whole equal parts, then the first differing part's common
        start."""
        n = 0
        for x, y in zip(a, b):
            if x != y:
                return n + common_start(self.tokens(x), self.tokens(y))
            n += len(self.tokens(x))
        return n


class PrefixCache:
    """OpenAI's automatic prefix cache as the emulator simulates it (`OpenAIPrefixCache`: a hit on the longest
    earlier prefix, from `min_tokens`, in `step`-token steps), for requests sent within its retention: the
    longest prefix any earlier request shared is found through the chain of its parts' hashes, then rounded."""

    def __init__(self, parts: Parts, min_tokens: int = 1024, step: int = 128):
        self.parts, self.min_tokens, self.step = parts, min_tokens, step
        self._prefixes: set[bytes] = set()  # hash of an earlier request's first k parts, every k
        self._next: dict[bytes, set[str]] = {}  # such a hash -> the parts that came next after it

    def lookup_and_store(self, parts: list[str]) -> int:
        """Cached tokens for this request; then remember its prefixes for later requests (as the simulator,
        a request under `min_tokens` is neither looked up nor remembered)."""
        if self.parts.count(parts) < self.min_tokens:
            return 0
        chain = _chain(parts)
        shared = 0
        for k, part in enumerate(parts):
            if chain[k + 1] in self._prefixes:
                shared += len(self.parts.tokens(part))
                continue
            mine = self.parts.tokens(part)
            shared += max((common_start(mine, self.parts.tokens(o)) for o in self._next.get(chain[k], ())), default=0)
            break
        for k, part in enumerate(parts):
            self._prefixes.add(chain[k + 1])
            self._next.setdefault(chain[k], set()).add(part)
        first = -(-self.min_tokens // self.step) * self.step
        rounded = shared // self.step * self.step
        return rounded if rounded >= first else 0


def _chain(parts: list[str]) -> list[bytes]:
    """The running hash after each part (index 0: before any), length-prefixed so parts cannot run together."""
    running = hashlib.sha256()
    out = [running.digest()]
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        running.update(len(data).to_bytes(8, "little") + data)
        out.append(running.digest())
    return out


def common_start(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
