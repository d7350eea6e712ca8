"""Ordinary agent work between the planted facts, and the driver that lays a case out.

`WorkGen` makes the steps a coding agent takes on a world (grep, read, edit, test, inspect logs, ...),
with varied phrasing and output sizes chosen to meet the case's size target. `build_session` places the
case's beats (facts, errors, decisions, artifacts) at their fractional positions among that work.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

import content as C
from builder import Builder
from worlds import World

Call = tuple[str, dict[str, Any], str, bool]


def pick(rng: random.Random, options: list[str], **kw: Any) -> str:
    return rng.choice(options).format(**kw)


READ_SAY = ["Let me read {path} first.", "Opening {path} to see how {sym} is wired.", "",
            "I'll look at the current implementation in {path}.", "Need to see {path} before changing anything.",
            "Checking {path}.", "{path} is where this lives; reading it.", "",
            "Let me look at the rest of {path} — the part I saw earlier was cut off.",
            "Before editing I want the full picture of {path}."]
GREP_SAY = ["Let me find every caller of `{sym}`.", "Searching for `{sym}` across the repo.", "",
            "Where else is `{sym}` used?", "I'll grep for `{sym}` to see the blast radius.",
            "Quick search for `{sym}` before I rename anything."]
EDIT_SAY = ["Making the change in {path}.", "Editing {path}: {why}.", "", "Applying the fix to {path} — {why}.",
            "Small edit to {path} so that {why}.", "Updating {path}; {why}."]
TEST_SAY = ["Running the tests.", "Let me run the suite.", "", "Re-running the affected tests.",
            "Running tests to confirm.", "Let me see whether that fixed it.", "Full run to make sure nothing else broke."]
FAIL_SAY = ["That's a different failure: {err}. Looking at it.", "Still failing, now with `{err}`.",
            "New failure — `{err}`. Let me check the code path.", "Hmm, `{err}`. Not what I expected."]
LOG_SAY = ["Let me check the recent logs.", "Looking at the service logs around the failures.", "",
           "Tailing the log to see what happens at runtime."]
DEPS_SAY = ["Let me check the dependency tree.", "Which versions are actually installed?", ""]
GIT_SAY = ["Checking what changed recently.", "Let me look at the recent history of this area.", ""]
WHY = ["the None case is handled explicitly", "errors propagate instead of being logged and dropped",
       "the tenant filter is applied before the limit", "the timeout comes from settings", "the lock is released on error",
       "the result is sorted deterministically", "the helper no longer mutates its argument",
       "the retry uses the shared backoff helper", "the cache key includes the tenant", "we return early on empty input"]
DONE_SAY = ["Done. {path} now {what}; tests pass.", "That's in: {what} ({path}). Suite is green.",
            "Finished — {path} updated so {what}. All tests pass locally.",
            "Fixed. The change is in {path}: {what}. I ran the tests and they pass.",
            "OK, {what}. Touched {path} only.", "{path}: {what}. Tests green, nothing else changed."]
NEUTRAL_SAY = ["Noted — I'll stick to that for the rest of the session. I've read through the relevant code; nothing is changed yet.",
               "Understood. I've had a first look around; no edits so far.", "Got it, I'll keep that in mind.",
               "OK. I've mapped out the code involved and will proceed on that basis.",
               "Will do. Nothing modified in this step — just reading."]
REQUESTS = [
    "Next, can you make `{sym}` skip soft-deleted rows? It should live in {path}.",
    "The {noun} tests are flaky on CI — can you see what's going on in {path}?",
    "Please tidy the error handling in {path}; right now it swallows exceptions.",
    "Can you add tests for `{sym}`? Coverage on {path} is poor.",
    "p95 for the {noun} endpoint went up last week. Could you look for anything obviously slow in {path}?",
    "ok good. now `{sym}` needs to respect the tenant — it's leaking rows across tenants.",
    "Can you check why `{sym}` returns stale data after an update?",
    "Let's clean up {path} a bit, there's dead code in there.",
    "One more: `{sym}` should log at debug, not info. It's spamming the logs.",
    "thanks. next thing: the {noun} batch job times out on big tenants, see {path}",
    "Could you make `{sym}` deterministic? The order of results changes between runs.",
    "There's a bug report: {noun}s with no {field} crash `{sym}`. Fix it please.",
    "Looks fine. Now add input validation to `{sym}`.",
    "can you look into {path}? reviewers complained it's hard to follow",
]


@dataclass
class Beat:
    name: str
    frac: float
    user: str | None = None  # text for the user message of the turn it lands in
    run: Callable[["Ctx"], int] | None = None  # builds steps, returns the index where the fact is planted
    size: int = 0  # rough characters, for the size budget


@dataclass
class Ctx:
    rng: random.Random
    world: World
    b: Builder
    work: "WorkGen"


class WorkGen:
    def __init__(self, rng: random.Random, world: World, parallel: float = 0.0, max_out: int = 40000,
                 forbidden: tuple[str, ...] = ()):
        self.rng, self.world = rng, world
        self.parallel = parallel  # probability of a parallel multi-call step
        self.max_out = max_out
        self.forbidden = tuple(f.lower() for f in forbidden)
        self.focus = rng.choice(world.modules)

    # -- helpers
    def sym(self) -> str:
        noun = self.rng.choice(self.world.nouns)
        verb = self.rng.choice(C.VERBS)
        if self.world.lang == "py":
            return f"{verb}_{noun}"
        if self.world.lang == "go":
            return f"{C.pascal(verb)}{C.pascal(noun)}"
        return C.camel(f"{verb}_{noun}")

    def clean(self, text: str) -> str:
        """Generated noise must never contain a probe's value by accident."""
        low = text.lower()
        for f in self.forbidden:
            if f in low:
                idx = low.find(f)
                if f.isdigit():
                    swap = str(int(f) + 1)
                    while swap in self.forbidden:
                        swap = str(int(swap) + 1)
                else:
                    swap = text[idx:idx + len(f)].replace(f[len(f) // 2], "_", 1)
                text = text[:idx] + swap + text[idx + len(f):]
                return self.clean(text)
        return text

    def request(self) -> str:
        r = self.rng
        self.focus = r.choice(self.world.modules)
        return pick(r, REQUESTS, sym=self.sym(), path=self.focus, noun=r.choice(self.world.nouns),
                    field=r.choice(C.FIELDS))

    def test_cmd(self) -> str:
        w, r = self.world, self.rng
        if w.lang == "py":
            return r.choice([w.test_cmd, f"{w.test_cmd} {r.choice(w.tests)}", f"{w.test_cmd} -x", f"{w.test_cmd} -k {r.choice(w.nouns)}"])
        if w.lang == "go":
            return r.choice([w.test_cmd, f"go test ./{self.focus.rsplit('/', 1)[0]}/...", "go test -race ./...", "go test -count=1 ./..."])
        return r.choice([w.test_cmd, f"{w.test_cmd} {r.choice(w.tests)}", f"{w.test_cmd} --reporter=verbose"])

    def test_output(self, size: int, failures: list[tuple[str, str]] | None = None) -> str:
        w, r = self.world, self.rng
        verbose = size > 6000
        if w.lang == "py":
            n = max(20, size // (75 if verbose else 9))
            out = C.pytest_run(r, w, n, failures, verbose=verbose)
        elif w.lang == "go":
            out = C.go_test_run(r, w, failures, verbose=verbose)
            while len(out) < size * 0.8:
                out = C.go_test_run(r, w, failures, verbose=True) + out
        else:
            nf = max(3, size // (900 if verbose else 60))
            out = C.vitest_run(r, w, min(nf, 400), failures, verbose=verbose)
        if len(out) > size * 1.6 and not failures:
            out = out[: int(size * 1.2)].rsplit("\n", 1)[0] + "\n... (output truncated)\n"
        return out

    def filler_failure(self) -> tuple[str, str]:
        w, r = self.world, self.rng
        if w.lang == "py":
            err = r.choice([f"AssertionError: assert {r.randint(1, 90)} == {r.randint(91, 200)}",
                            f"AttributeError: 'NoneType' object has no attribute '{r.choice(C.FIELDS)}'",
                            f"TypeError: {r.choice(C.VERBS)}_{r.choice(w.nouns)}() got an unexpected keyword argument '{r.choice(C.FIELDS)}'",
                            "AssertionError: expected call not found."])
            return err, C.py_traceback(r, w, r.randint(2, 4))
        if w.lang == "go":
            return (w.modules[0].rsplit("/", 1)[0] if r.random() < 0.2 else r.choice(w.modules).rsplit("/", 1)[0],
                    f"    {C.module_stem(r.choice(w.tests))}.go:{r.randint(20, 300)}: got {r.randint(0, 9)}, want {r.randint(10, 20)}")
        return (f"AssertionError: expected {r.randint(0, 9)} to be {r.randint(10, 99)} // Object.is equality",
                C.ts_stack(r, w))

    # -- steps
    def read_step(self, size: int, path: str | None = None, extra: str = "") -> tuple[str, list[Call]]:
        path = path or self.rng.choice([self.focus] * 3 + list(self.world.modules))
        body = C.source_file(self.rng, self.world, path, max(600, size), extra)
        say = pick(self.rng, READ_SAY, path=path, sym=self.sym())
        return say, [("read_file", {"path": path}, self.clean(C.numbered(body)), False)]

    def grep_step(self, size: int, sym: str | None = None) -> tuple[str, list[Call]]:
        sym = sym or self.sym()
        n = max(3, size // 70)
        out = self.clean(C.grep_output(self.rng, self.world, sym, n))
        if self.rng.random() < 0.5:
            call = ("grep", {"pattern": sym, "path": self.rng.choice([".", "src", "internal", "tests"])}, out, False)
        else:
            call = ("bash", {"cmd": f"rg -n '{sym}' {self.rng.choice(['', 'src/', 'internal/'])}".strip()}, out, False)
        return pick(self.rng, GREP_SAY, sym=sym), [call]

    def edit_step(self, path: str | None = None, why: str | None = None) -> tuple[str, list[Call]]:
        r = self.rng
        path = path or self.focus
        unit = {"py": C._py_unit, "ts": C._ts_unit, "go": C._go_unit}[self.world.lang](r, self.world)
        lines = unit.rstrip("\n").split("\n")
        cut = r.randint(1, max(1, len(lines) - 1))
        old = "\n".join(lines[cut - 1: cut + r.randint(0, 3)])
        new = old + "\n" + ("    " if self.world.lang == "py" else "\t" if self.world.lang == "go" else "  ") + r.choice(
            ["if not rows:\n        return []" if self.world.lang == "py" else "// guard added",
             "logger.debug(\"skipping empty batch\")" if self.world.lang == "py" else "if (!item) return;",
             "return None" if self.world.lang == "py" else "return nil, ErrNotFound" if self.world.lang == "go" else "return undefined;"])
        why = why or r.choice(WHY)
        out = r.choice([f"Applied 1 edit to {path}.", f"Edited {path} (1 replacement).", f"OK: {path} updated, 1 hunk.",
                        f"The file {path} has been updated."])
        return pick(r, EDIT_SAY, path=path, why=why), [("edit_file", {"path": path, "old_string": old, "new_string": new}, out, False)]

    def test_step(self, size: int, fail: bool = False) -> tuple[str, list[Call]]:
        failures = [self.filler_failure()] if fail else None
        out = self.clean(self.test_output(size, failures))
        code = 1 if fail else 0
        return pick(self.rng, TEST_SAY), [("bash", {"cmd": self.test_cmd()}, out + f"\n[exit code {code}]", False)]

    def misc_step(self, size: int) -> tuple[str, list[Call]]:
        r, w = self.rng, self.world
        k = r.randrange(5)
        if k == 0:
            path = r.choice(["logs/app.log", "/var/log/" + w.repo + "/service.log", "tmp/dev-server.log"])
            out = C.log_lines(r, w, max(5, size // 120))
            return pick(r, LOG_SAY), [("bash", {"cmd": f"tail -n {max(5, size // 120)} {path}"}, self.clean(out), False)]
        if k == 1:
            cmd = {"ts": "pnpm list --depth 2", "py": "uv pip tree", "go": "go mod graph"}[w.lang]
            return pick(r, DEPS_SAY), [("bash", {"cmd": cmd}, self.clean(C.dependency_tree(r, w, max(5, size // 40))), False)]
        if k == 2:
            return pick(r, GIT_SAY), [("bash", {"cmd": f"git log --oneline -n {max(5, size // 50)} -- {self.focus}"},
                                       self.clean(C.git_log(r, w, max(5, size // 50))), False)]
        if k == 3 and w.lang == "ts":
            return "Type-checking.", [("bash", {"cmd": "pnpm tsc --noEmit"}, self.clean(C.tsc_output(r, w, max(1, size // 110))) + "\n[exit code 2]", False)]
        if k == 3 and w.lang == "go":
            return "Running vet.", [("bash", {"cmd": "go vet ./..."}, "".join(
                f"# {w.pkg}/{r.choice(w.modules).rsplit('/', 1)[0]}\n{r.choice(w.modules)}:{r.randint(5, 300)}:{r.randint(2, 40)}: {r.choice(['result of fmt.Errorf call not used', 'unreachable code', 'possible misuse of unsafe.Pointer', 'loop variable captured by func literal'])}\n"
                for _ in range(max(1, size // 150))), False)]
        return "Checking the tree.", [("bash", {"cmd": "git ls-files"}, C.ls_tree(r, w), False)]

    def big_step(self, size: int) -> tuple[str, list[Call]]:
        k = self.rng.choices(["read", "test", "grep", "misc"], [45, 30, 10, 15])[0]
        if k == "read":
            return self.read_step(size)
        if k == "test":
            return self.test_step(size)
        if k == "grep":
            return self.grep_step(size)
        return self.misc_step(size)

    def parallel_step(self, size: int) -> tuple[str, list[Call]]:
        n = self.rng.randint(2, 4)
        calls: list[Call] = []
        paths = self.rng.sample(list(self.world.modules), n)
        for i, path in enumerate(paths):
            if i == n - 1 and self.rng.random() < 0.4:
                calls += self.grep_step(size // n)[1]
            else:
                calls += self.read_step(size // n, path)[1]
        say = self.rng.choice(["Reading these in parallel.", "Let me pull up the related files at once.",
                               f"I'll open {', '.join(paths[:2])} and the rest together.", ""])
        return say, calls

    def done(self) -> str:
        return pick(self.rng, DONE_SAY, path=self.focus, what=self.rng.choice(WHY))


# ------------------------------------------------------------------------------------------------
# the driver


@dataclass
class Layout:
    turns: int
    steps_per_turn: tuple[int, int]  # generic steps per turn (min, max)
    target_chars: int
    giant_outputs: int = 0  # generic tool outputs of 80K-140K characters
    giant_range: tuple[int, int] = (82000, 130000)
    parallel: float = 0.0
    max_out: int = 40000
    fail_rate: float = 0.12
    closing: bool = True  # end each turn with a plain assistant message


def build_session(rng: random.Random, world: World, system: str, layout: Layout, beats: list[Beat],
                  forbidden: tuple[str, ...] = ()) -> tuple[Builder, WorkGen]:
    b = Builder(system)
    work = WorkGen(rng, world, layout.parallel, layout.max_out, forbidden)
    ctx = Ctx(rng, world, b, work)
    T = layout.turns
    per_turn = [rng.randint(*layout.steps_per_turn) for _ in range(T)]
    total_steps = sum(per_turn)
    giant_at = set(rng.sample(range(total_steps), min(layout.giant_outputs, total_steps)))
    # beats: user beats go to the opening message of their turn, the others between steps
    user_beats: dict[int, list[Beat]] = {}
    step_beats: dict[int, list[tuple[float, Beat]]] = {}
    for beat in sorted(beats, key=lambda x: x.frac):
        t = min(T - 1, int(beat.frac * T))
        if beat.user is not None:
            user_beats.setdefault(t, []).append(beat)
        if beat.run is not None:
            within = beat.frac * T - t
            step_beats.setdefault(t, []).append((within, beat))
    beat_chars = sum(x.size for x in beats)
    giant_chars = sum((layout.giant_range[0] + layout.giant_range[1]) // 2 for _ in giant_at)
    budget_generic = max(total_steps * 800, layout.target_chars - beat_chars - giant_chars)
    step_no = 0
    generic_done = 0
    spent_generic = 0
    for t in range(T):
        ub = user_beats.get(t, [])
        neutral = bool(ub)
        if ub:
            text = "\n\n".join(x.user for x in ub if x.user)
            if t > 0 and rng.random() < 0.4 and all(len(x.user or "") < 200 for x in ub):
                text += "\n\n" + work.request()
                neutral = False
            idx = b.user(text)
            for x in ub:
                b.mark(x.name, idx)
        else:
            b.user(work.request())
        pending = sorted(step_beats.get(t, []), key=lambda p: p[0])
        n = per_turn[t]
        fail_next = False
        for s in range(n):
            while pending and pending[0][0] <= s / max(1, n):
                _, beat = pending.pop(0)
                idx = beat.run(ctx)
                b.mark(beat.name, idx)
            remaining = max(1, total_steps - generic_done - len(giant_at & set(range(step_no, total_steps))))
            want = (budget_generic - spent_generic) / remaining
            before = b.chars
            if step_no in giant_at:
                say, calls = work.big_step(rng.randint(*layout.giant_range))
                if len(calls[0][2]) < layout.giant_range[0]:
                    say, calls = work.read_step(rng.randint(*layout.giant_range))
            else:
                size = int(max(300, min(layout.max_out, want * rng.uniform(0.4, 1.6))))
                if fail_next:
                    say, calls = work.edit_step()
                    fail_next = False
                elif layout.parallel and rng.random() < layout.parallel:
                    say, calls = work.parallel_step(size)
                elif rng.random() < layout.fail_rate:
                    say, calls = work.test_step(size, fail=True)
                    fail_next = True
                elif rng.random() < 0.15:
                    say, calls = work.edit_step()
                else:
                    say, calls = work.big_step(size)
            b.step(say, calls)
            if step_no not in giant_at:
                generic_done += 1
                spent_generic += b.chars - before
            step_no += 1
        for _, beat in pending:
            idx = beat.run(ctx)
            b.mark(beat.name, idx)
        if layout.closing and b.msgs[-1].role != "assistant":
            b.say(rng.choice(NEUTRAL_SAY) if neutral else work.done())
    return b, work
