"""The prompt-cache simulators: each provider's documented caching rules (shared/PROVIDERS.md), so the usage
the emulator reports is what that provider would bill for the same request sequence."""

from __future__ import annotations

import hashlib
import sys
import threading
from array import array
import time
from dataclasses import dataclass
from typing import Callable

from harness.models.emulator.faults import EmulatorError

Clock = Callable[[], float]


class OpenAIPrefixCache:
    """Automatic prefix caching (gpt-4o and newer): prompts of `min_tokens` or more hit in `step`-token
    increments on the longest prefix seen before for the same model; writes cost nothing extra.

    Models from gpt-5.6 on use explicit breakpoints without the 128 rounding and bill writes at 1.25x;
    that mode is not simulated here (omitted, the wire details are unverified).
    """

    def __init__(self, clock: Clock = time.monotonic, min_tokens: int = 1024, step: int = 128,
                 retention_s: float = 600.0, max_age_s: float = 3600.0):
        # Retention: "5 to 10 minutes of inactivity, at most an hour" (PROVIDERS.md); the idle end chosen is
        # the upper one, so expiry figures from this simulator are the least it could be.
        self.clock, self.min_tokens, self.step, self.retention_s = clock, min_tokens, step, retention_s
        self.max_age_s = max_age_s
        self._seen: dict[str, tuple[float, float]] = {}  # prefix hash at a step boundary -> (expiry, created)
        self._lock = threading.Lock()

    def lookup_and_store(self, namespace: str, tokens: list[int]) -> int:
        """Cached tokens for this prompt; then remember its prefixes for later requests."""
        if len(tokens) < self.min_tokens:
            return 0
        now = self.clock()
        first = -(-self.min_tokens // self.step) * self.step  # the first step boundary at or above the minimum
        boundaries = range(first, len(tokens) + 1, self.step)
        hashes = _prefix_hashes(namespace, tokens, list(boundaries))
        with self._lock:
            cached = 0
            for length, digest in hashes:
                entry = self._seen.get(digest)
                if entry is not None and entry[0] > now and length >= self.min_tokens:
                    cached = length
            for _, digest in hashes:
                entry = self._seen.get(digest)
                created = entry[1] if entry is not None and entry[0] > now else now
                self._seen[digest] = (min(now + self.retention_s, created + self.max_age_s), created)
        return cached


def _prefix_hashes(namespace: str, tokens: list[int], lengths: list[int]) -> list[tuple[int, str]]:
    """Running hashes at each length, over the tokens as 4-byte little-endian integers, packed in one pass
    (packing token by token was most of the cost study's time)."""
    packed = array("I", tokens)
    if packed.itemsize == 4 and sys.byteorder == "little":
        data = memoryview(packed.tobytes())
    else:  # the same bytes, the slow portable way
        data = memoryview(b"".join(t.to_bytes(4, "little") for t in tokens))
    out: list[tuple[int, str]] = []
    running = hashlib.sha256(namespace.encode())
    done = 0
    for length in lengths:
        running.update(data[done * 4:length * 4])
        done = length
        out.append((length, running.copy().hexdigest()))
    return out


@dataclass(frozen=True)
class CacheBlock:
    """One cacheable unit of an Anthropic prompt (a tool, a system block, a message content block)."""

    digest: str  # content hash of this block alone (cache_control excluded)
    tokens: int
    breakpoint_ttl: str | None = None  # "5m" | "1h" when the block carries cache_control


@dataclass(frozen=True)
class AnthropicCacheResult:
    read_tokens: int
    write_tokens: int
    write_1h_tokens: int
    total_tokens: int


TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


class AnthropicBreakpointCache:
    """Explicit breakpoints: at most `max_breakpoints`, each checking its own prefix and up to `lookback`
    earlier block boundaries for an entry; entries are written at breakpoints only, live for their TTL
    (refreshed on a hit), and nothing is cached below `min_tokens` (silently, as the API does)."""

    def __init__(self, clock: Clock = time.monotonic, min_tokens: int = 1024, lookback: int = 20,
                 max_breakpoints: int = 4):
        self.clock, self.min_tokens, self.lookback, self.max_breakpoints = clock, min_tokens, lookback, max_breakpoints
        self._entries: dict[str, tuple[float, str]] = {}  # prefix hash -> (expiry, ttl)
        self._lock = threading.Lock()

    def process(self, namespace: str, blocks: list[CacheBlock]) -> AnthropicCacheResult:
        breakpoints = [i for i, b in enumerate(blocks) if b.breakpoint_ttl]
        if len(breakpoints) > self.max_breakpoints:
            raise EmulatorError(400, "invalid_request_error",
                                f"A maximum of {self.max_breakpoints} blocks with cache_control may be provided. "
                                f"Found {len(breakpoints)}.")
        prefix_tokens, prefix_hashes = [], []
        running, total = hashlib.sha256(namespace.encode()), 0
        for block in blocks:
            running.update(block.digest.encode())
            total += block.tokens
            prefix_tokens.append(total)
            prefix_hashes.append(running.copy().hexdigest())
        now = self.clock()
        read_upto = 0  # number of blocks served from cache
        with self._lock:
            for bp in breakpoints:
                for position in range(bp, max(-1, bp - self.lookback - 1), -1):
                    entry = self._entries.get(prefix_hashes[position])
                    if entry and entry[0] > now:
                        self._entries[prefix_hashes[position]] = (now + TTL_SECONDS[entry[1]], entry[1])
                        read_upto = max(read_upto, position + 1)
                        break
            read = prefix_tokens[read_upto - 1] if read_upto else 0
            write = write_1h = 0
            covered = read
            for bp in breakpoints:
                ttl = blocks[bp].breakpoint_ttl or "5m"
                if prefix_tokens[bp] < self.min_tokens:
                    continue
                if bp + 1 > read_upto:
                    added = prefix_tokens[bp] - covered
                    if added > 0:
                        write += added
                        write_1h += added if ttl == "1h" else 0
                        covered = prefix_tokens[bp]
                    self._entries[prefix_hashes[bp]] = (now + TTL_SECONDS.get(ttl, 300.0), ttl)
        return AnthropicCacheResult(read, write, write_1h, total)
