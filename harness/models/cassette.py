"""Record and replay of the SDKs' HTTP exchanges, as an httpx2 transport.

Requests match on a canonical form of method, path and JSON body (sorted keys); headers never take part,
so keys, SDK versions and per-run `x-stainless-*` headers do not matter and are never written. Modes:
  none  replay only; a miss is an error naming the case, the request hash and the closest difference
  once  record when the file is absent, else replay only
  new   replay hits, record misses
  all   re-record everything
Identical requests within one case replay in the order they were recorded (a queue per hash).
Where a cassette lives (`cassette_path`) is the registry's: it parses the spec.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx2

from harness.errors import HarnessError, InputError
from harness.models.base import LATENCY_SOURCE_HEADER, RECORDED_ELAPSED_HEADER
from harness.models.cassette_claim import claim_folder, release_claims
from harness.models.cassette_file import check_cassette, entry_key, save_cassette
from harness.models.reply import reply_problem
from harness.redact import scrub_value

# Inside `one_run()`: every exchange recorded so far by this run (any writer, any cassette).
_RUN_RECORDED: set[tuple[Any, ...]] | None = None


@contextmanager
def one_run() -> Iterator[None]:
    """One `run` invocation: its configurations share a case's cassette, so a `--record-mode all` writer opened
    for a later configuration replaces what was on disk before the run, never what an earlier one recorded."""
    global _RUN_RECORDED
    _RUN_RECORDED = set()
    try:
        yield
    finally:
        _RUN_RECORDED = None
        release_claims()

# Transient failures are retried by the SDK; recording them would make every replay sleep and retry.
_UNRECORDED_STATUSES = frozenset({408, 409, 429}) | frozenset(range(500, 600))


def _succeeded(interaction: dict[str, Any]) -> bool:
    return 200 <= interaction["response"]["status"] < 300


def will_record(path: Path, mode: str) -> bool:
    """Whether a cassette in this mode may reach the real transport (and so needs a key)."""
    return mode in ("new", "all") or (mode == "once" and not path.exists())


def canonical_request(method: str, url: httpx2.URL, body: bytes) -> dict[str, Any]:
    try:
        parsed: Any = json.loads(body) if body else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        parsed = body.decode("utf-8", "replace")
    query = "&".join(sorted(str(url.query, "ascii").split("&"))) if url.query else ""
    return {"method": method.upper(), "path": url.path + (f"?{query}" if query else ""), "body": parsed}


# Long strings in a recorded request (whole transcripts, tool outputs) are stored as a digest with their
# opening words: the request still matches on its full hash, a miss still shows where it differs, and a
# cassette of a long session stays a few hundred kilobytes instead of tens of megabytes.
STORED_STRING_CHARS = 200


def stored_form(value: Any) -> Any:
    """The request as the cassette keeps it: long strings replaced by `sha256:<digest> <n> chars: <start>…`."""
    if isinstance(value, dict):
        return {k: stored_form(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stored_form(v) for v in value]
    if isinstance(value, str) and len(value) > STORED_STRING_CHARS:
        digest = hashlib.sha256(value.encode()).hexdigest()[:16]
        return f"sha256:{digest} {len(value)} chars: {' '.join(value[:40].split())}…"
    return value


def request_hash(canonical: dict[str, Any]) -> str:
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class CassetteTransport(httpx2.BaseTransport):
    def __init__(self, path: Path, *, inner: httpx2.BaseTransport | None, mode: str = "none", case_id: str = "?",
                 record_errors: bool = False, key: Callable[[dict[str, Any]], dict[str, Any]] | None = None):
        self.path, self.inner, self.case_id = Path(path), inner, case_id
        # What a request matches on: its canonical form, or what `key` makes of it (a caller whose requests
        # carry dates or ids that differ between runs normalises them, e.g. harness.scripted.normalise)
        self.key = key
        self.record_errors = record_errors  # keep 4xx replies too (to replay a failure on purpose)
        self.mode = mode if mode != "once" else ("all" if not self.path.exists() else "none")
        if self.mode in ("new", "all"):
            claim_folder(self.path.parent, exclusive=self.mode == "all")
        on_disk = self._load()
        # a re-recording replaces everything; `new` asks again for a success of the wrong shape (an older
        # harness kept it) and replaces it in the file
        self.interactions = [i for i in on_disk
                             if self.mode != "all" and not (self.mode == "new" and _reply_problem(i))]
        kept = {id(i) for i in self.interactions}
        this_run = _RUN_RECORDED or set()  # recorded by an earlier configuration of this run: kept (one_run)
        self._replaced = {entry_key(i) for i in on_disk if id(i) not in kept and entry_key(i) not in this_run}
        # what a re-recording may find again unchanged: that entry is kept as it was (no churn in git)
        self._earlier = [i for i in on_disk if entry_key(i) in self._replaced]
        self._recorded: list[dict[str, Any]] = []  # what this writer added, joined with the file on each save
        self._queues: dict[str, list[int]] = {}
        for index, interaction in enumerate(self.interactions):
            self._queues.setdefault(interaction["hash"], []).append(index)
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()

    # -- file

    def _load(self) -> list[dict[str, Any]]:
        """The file's entries; a re-recording (`all`) replaces a damaged file instead of reading it."""
        if not self.path.exists():
            return []
        try:
            return check_cassette(self.path, self.case_id)
        except InputError:
            if self.mode == "all":
                return []
            raise

    def _save(self) -> None:
        save_cassette(self.path, self.case_id, self._recorded, frozenset(self._replaced),
                      rerecording=self.mode == "all")

    # -- transport

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.read()
        canonical = canonical_request(request.method, request.url, body)
        if self.key is not None:
            canonical = self.key(canonical)
        digest = request_hash(canonical)
        with self._lock:
            replay = self._next_recorded(digest)
        if replay is not None:
            return self._replayed(request, replay)
        if self.mode == "none":
            raise HarnessError(self._miss_message(digest, canonical))
        if self.inner is None:
            raise HarnessError(f"cassette {self.path}: no transport to record case {self.case_id!r} with")
        started = time.perf_counter()
        response = self.inner.handle_request(request)
        content = response.read()
        elapsed = time.perf_counter() - started
        if self._keeps(request.url.path, response.status_code, content):
            with self._lock:
                self._record(digest, canonical, response.status_code, content, elapsed)
        return httpx2.Response(response.status_code, headers=response.headers, content=content, request=request)

    def _keeps(self, path: str, status: int, content: bytes) -> bool:
        """Only well-formed successes are recorded (a 200 whose body is not the JSON its endpoint promises is
        not one); error replies only when asked, and transient ones never."""
        if status in _UNRECORDED_STATUSES:
            return False
        if not 200 <= status < 300:
            return self.record_errors
        return reply_problem(path, content) is None

    def _next_recorded(self, digest: str) -> dict[str, Any] | None:
        queue = self._queues.get(digest)
        if not queue or self.mode == "all":
            return None
        served = self._served.get(digest, 0)
        recorded = self.interactions[queue[min(served, len(queue) - 1)]]
        if self.mode == "new" and not self.record_errors and not _succeeded(recorded):
            return None  # a failure recorded by an older harness: ask again, never replay it as an answer
        if served >= len(queue):
            if self.mode == "new":
                return None  # record one more copy
            served = len(queue) - 1  # an identical request asked again: the same answer is expected
        self._served[digest] = served + 1
        return self.interactions[queue[served]]

    def _record(self, digest: str, canonical: dict[str, Any], status: int, content: bytes, elapsed: float) -> None:
        try:
            body: Any = json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = content.decode("utf-8", "replace")
        entry = {
            # a key a user put in a case reaches no file (replies were cleaned on arrival: SecretFilter)
            "hash": digest, "request": scrub_value(stored_form(canonical)),
            "response": {"status": status, "body": body},
            "elapsed_s": round(elapsed, 6),
            "recorded_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        self.interactions.append(self._unchanged(entry) or entry)
        self._recorded.append(self.interactions[-1])
        if _RUN_RECORDED is not None:
            _RUN_RECORDED.add(entry_key(self.interactions[-1]))
        queue = self._queues.setdefault(digest, [])
        queue.append(len(self.interactions) - 1)
        self._served[digest] = len(queue)
        self._save()

    def _unchanged(self, entry: dict[str, Any]) -> dict[str, Any] | None:
        """The entry the file held for this very exchange (the same request, status and body; only its
        timing would differ), now kept instead of replaced: a re-recording that changes nothing changes no
        byte of the cassette."""
        for earlier in self._earlier:
            if earlier["hash"] == entry["hash"] and earlier["request"] == entry["request"] \
                    and _unstamped(earlier["response"]) == _unstamped(entry["response"]):
                self._earlier.remove(earlier)
                self._replaced.discard(entry_key(earlier))
                return earlier
        return None

    def _replayed(self, request: httpx2.Request, interaction: dict[str, Any]) -> httpx2.Response:
        response = interaction["response"]
        if (problem := _reply_problem(interaction)) is not None:
            number = self.interactions.index(interaction)
            raise HarnessError(f"cassette {self.path} (case {self.case_id!r}): interactions[{number}] (request "
                               f"{interaction['hash']}) holds a reply of the wrong shape ({problem}); re-record "
                               f"it with --record-mode new")
        content = _content(response["body"])
        headers = {"content-type": "application/json", LATENCY_SOURCE_HEADER: "recorded",
                   RECORDED_ELAPSED_HEADER: str(interaction.get("elapsed_s", 0.0))}
        return httpx2.Response(response["status"], headers=headers, content=content, request=request)

    def _miss_message(self, digest: str, canonical: dict[str, Any]) -> str:
        where = f"cassette {self.path} (case {self.case_id!r})"
        if not self.path.exists():
            return (f"{where} does not exist: nothing was recorded for this case and model, and --record-mode none "
                    f"only replays; record it first with --record-mode new (a provider needs its key)")
        if not self.interactions:
            return f"{where}: request {digest} not recorded and the cassette is empty; record it with --record-mode new"
        scored = [(len(found), found, interaction["hash"]) for interaction in self.interactions
                  for found in (json_differences(interaction["request"], canonical),)]
        count, differences, closest = min(scored, key=lambda item: item[0])
        first = differences[0] if differences else "(identical request already replayed)"
        return (f"{where}: request {digest} not recorded; closest recorded request {closest} differs in {count} "
                f"place(s), first at {first}; re-record with --record-mode new")

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()


# When a reply was made (Chat Completions `created`, Responses `created_at`): the one part of an unchanged
# exchange that differs each time, and one no later request carries back (ids may be: they are compared).
STAMPS = ("created", "created_at")


def _unstamped(response: dict[str, Any]) -> dict[str, Any]:
    body = response.get("body")
    if not isinstance(body, dict):
        return response
    return {**response, "body": {k: v for k, v in body.items() if k not in STAMPS}}


def _content(body: Any) -> bytes:
    """A stored response body as the bytes it was on the wire (JSON is stored parsed, anything else as text)."""
    return body.encode() if isinstance(body, str) else json.dumps(body).encode()


def _reply_problem(interaction: dict[str, Any]) -> str | None:
    """What is wrong with a recorded success's body for its endpoint (recorded failures are checked as such)."""
    if not _succeeded(interaction):
        return None
    path = str((interaction.get("request") or {}).get("path") or "")
    return reply_problem(path, _content(interaction["response"]["body"]))


def json_differences(recorded: Any, current: Any, path: str = "$") -> list[str]:
    """Paths where a recorded request (in its stored form) and a current one (in full) differ, in document
    order, each with both values: a current long string equal to the recorded digest is no difference."""
    if isinstance(recorded, dict) and isinstance(current, dict):
        out: list[str] = []
        for key in sorted(set(recorded) | set(current)):
            sub = f"{path}.{key}"
            if key not in recorded:
                out.append(f"{sub} (only in the new request)")
            elif key not in current:
                out.append(f"{sub} (only in the recorded request)")
            else:
                out += json_differences(recorded[key], current[key], sub)
        return out
    if isinstance(recorded, list) and isinstance(current, list):
        out = []
        for index in range(max(len(recorded), len(current))):
            sub = f"{path}[{index}]"
            if index >= len(recorded):
                out.append(f"{sub} (only in the new request)")
            elif index >= len(current):
                out.append(f"{sub} (only in the recorded request)")
            else:
                out += json_differences(recorded[index], current[index], sub)
        return out
    if recorded == current or recorded == stored_form(current):
        return []
    return [f"{path}: recorded {middle_short(recorded)} != now {_current_view(current)}"]


def _current_view(value: Any) -> str:
    """A current value as the miss shows it: a string the cassette would store as a digest says so, with its
    length and digest, so it reads against the recorded `sha256:...` form."""
    stored = stored_form(value)
    if stored == value:
        return middle_short(value)
    return f"{stored.partition(' chars: ')[0]} chars: {middle_short(value)}"


SHOWN_CHARS = 600  # a value longer than this (as JSON) keeps its start and end, the middle left out


def middle_short(value: Any, limit: int = SHOWN_CHARS) -> str:
    """`value` as one line of JSON, shortened only in the middle, so both ends of a long value stay visible."""
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= limit:
        return text
    keep = (limit - 20) // 2
    return f"{text[:keep]} …[{len(text) - 2 * keep} chars]… {text[-keep:]}"
