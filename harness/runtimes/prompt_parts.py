"""A runtime's requests as their content parts (tool definitions, system, each message), for counting and for
the prompt-cache simulation over a whole drive. A drive re-sends the same history in every request, so each part
is encoded once and every later request reuses its tokens; and an earlier prefix is found part by part, so a
request costs looking up its parts, not re-reading its tokens. Parts are encoded one by one, as the emulator
counts a request: a part boundary may count a token apart from encoding the whole request at once."""

from __future__ import annotations

from dataclasses import replace

from harness.models import _tokens
from harness.models.base import ModelRequest
from harness.models.emulator.resent import Made
from harness.models.emulator.wire import content_parts


class Parts:
    def __init__(self) -> None:
        self._memo: dict[str, list[int]] = {}
        self._made = Made()  # the emulator re-uses a re-sent message's object: its part is made once

    def split(self, request: ModelRequest, tools: bool = True) -> list[str]:
        """The request's parts as the emulator's `content_tokens` joins them (each after the first on a new line)."""
        return content_parts(request if tools else replace(request, tools=()), self._made)

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
    longest prefix any earlier request shared is found part by part, each prefix numbered once, then rounded."""

    def __init__(self, parts: Parts, min_tokens: int = 1024, step: int = 128):
        self.parts, self.min_tokens, self.step = parts, min_tokens, step
        self._numbers: dict[str, int] = {}  # each distinct part, numbered
        self._prefixes: dict[tuple[int, int], int] = {}  # (an earlier prefix, the part after it) -> that prefix + it
        self._next: dict[int, set[str]] = {}  # an earlier prefix (0: the empty one) -> the parts that came next

    def lookup_and_store(self, parts: list[str]) -> int:
        """Cached tokens for this request; then remember its prefixes for later requests (as the simulator,
        a request under `min_tokens` is neither looked up nor remembered)."""
        if self.parts.count(parts) < self.min_tokens:
            return 0
        numbers = [self._numbers.setdefault(part, len(self._numbers) + 1) for part in parts]
        shared, prefix = 0, 0
        for part, number in zip(parts, numbers):
            longer = self._prefixes.get((prefix, number))
            if longer is not None:
                shared, prefix = shared + len(self.parts.tokens(part)), longer
                continue
            mine = self.parts.tokens(part)
            shared += max((common_start(mine, self.parts.tokens(o)) for o in self._next.get(prefix, ())), default=0)
            break
        prefix = 0
        for part, number in zip(parts, numbers):
            self._next.setdefault(prefix, set()).add(part)
            prefix = self._prefixes.setdefault((prefix, number), len(self._prefixes) + 1)
        first = -(-self.min_tokens // self.step) * self.step
        rounded = shared // self.step * self.step
        return rounded if rounded >= first else 0


def common_start(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
