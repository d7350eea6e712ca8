"""A small vocabulary for writing a case: beats that plant facts, and the probes that ask about them."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable

import content as C
from builder import Probe
from work import Beat, Ctx, Layout

Out = str | Callable[[Ctx], str]

SYSTEM_STYLES = [
    ("You are {agent}, an autonomous coding agent working inside the user's repository.\n\n"
     "# Environment\n- Working directory: {root}\n- Project: {repo}, {desc}\n- OS: {os}\n- Shell: bash\n- Date: {date}\n\n"
     "# Tools\n- read_file(path, offset?, limit?): read a file; output has line numbers.\n"
     "- write_file(path, content): create or overwrite a file.\n"
     "- edit_file(path, old_string, new_string): replace one exact occurrence of old_string.\n"
     "- bash(cmd, timeout?): run a shell command; output is stdout+stderr and the exit code.\n"
     "- grep(pattern, path?, glob?): ripgrep search, returns path:line:text.\n\n"
     "# Rules\n- Read before you edit. Keep edits minimal and focused on the request.\n"
     "- Run the relevant tests after every change and report failures honestly.\n"
     "- Never commit secrets; never push unless asked.\n- Follow the user's stated preferences for the rest of the session, "
     "even after they are no longer visible.\n- When a fact changes (a port, a host, a version), use the latest value.\n"),
    ("# Role\n{agent}: a software engineering assistant with tool access. You are pairing with a developer on {repo} "
     "({desc}).\n\ncwd: {root}\nplatform: {os}\ntoday: {date}\n\n"
     "## Available tools\n| tool | use |\n| --- | --- |\n| read_file | {{\"path\"}} -> file text with line numbers |\n"
     "| edit_file | {{\"path\", \"old_string\", \"new_string\"}} -> apply an exact replacement |\n"
     "| write_file | {{\"path\", \"content\"}} -> create a file |\n| bash | {{\"cmd\"}} -> run a command, 120s timeout |\n"
     "| grep | {{\"pattern\", \"path\"}} -> matching lines |\n\n"
     "## Working agreement\n1. Prefer small, reviewable changes.\n2. Explain what you are about to do in one sentence, then do it.\n"
     "3. If tests fail, read the failure before changing code.\n4. Ask before deleting files or changing public interfaces.\n"),
    ("You are {agent}. You operate in a sandboxed checkout of {repo} at {root} ({os}). The project is {desc}.\n"
     "Use the tools to inspect and change code: `read_file`, `edit_file`, `write_file`, `grep`, `bash`. "
     "Tool results may be long; skim for what matters. Keep the user informed with short status updates, and end "
     "each task with a summary of what changed and what is left. Respect constraints the user gives you for the "
     "whole session. Current date: {date}.\n"),
]


def system_prompt(rng: random.Random, world) -> str:
    style = rng.choice(SYSTEM_STYLES)
    return style.format(agent=rng.choice(["Forge", "the coding agent", "Atlas", "Devin-lite", "Quill", "Patchwork"]),
                        root=world.root, repo=world.repo, desc=world.description,
                        os=rng.choice(["Linux 6.8 (Ubuntu 24.04)", "macOS 14.5", "Linux 6.1 (Debian 12)"]),
                        date=rng.choice(["2024-05-14", "2024-06-03", "2024-09-19", "2024-11-07", "2025-01-22"]))


@dataclass
class Spec:
    id: str
    title: str
    pool: str
    world: str
    seed: int
    window: int
    max_out: int
    layout: Layout
    notes: str = ""
    beats: list[Beat] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    keep_out: tuple[str, ...] = ()
    manual_compaction: tuple[float, str] | None = None  # (fraction, summary text)

    # -- beats
    def user(self, name: str, frac: float, text: str) -> "Spec":
        self.beats.append(Beat(name, frac, user=text))
        return self

    def tool(self, name: str, frac: float, say: str, tool: str, args: dict[str, Any], out: Out,
             size: int = 2000) -> "Spec":
        def run(ctx: Ctx) -> int:
            text = out(ctx) if callable(out) else out
            _, outs = ctx.b.step(say, [(tool, args, text, False)])
            return outs[0]
        self.beats.append(Beat(name, frac, run=run, size=size))
        return self

    def tools(self, name: str, frac: float, say: str, calls: list[tuple[str, dict[str, Any], Out]], plant: int,
              size: int = 4000) -> "Spec":
        """Parallel tool calls in one assistant message; the fact is planted in result number `plant`."""
        def run(ctx: Ctx) -> int:
            made = [(t, a, o(ctx) if callable(o) else o, False) for t, a, o in calls]
            _, outs = ctx.b.step(say, made)
            for k, idx in enumerate(outs):
                ctx.b.mark(f"{name}#{k}", idx)
            return outs[plant]
        self.beats.append(Beat(name, frac, run=run, size=size))
        return self

    def say(self, name: str, frac: float, text: str) -> "Spec":
        self.beats.append(Beat(name, frac, run=lambda ctx: ctx.b.say(text), size=len(text)))
        return self

    def edit(self, name: str, frac: float, say: str, path: str, old: str, new: str, result: str | None = None) -> "Spec":
        def run(ctx: Ctx) -> int:
            a, _ = ctx.b.step(say, [("edit_file", {"path": path, "old_string": old, "new_string": new},
                                     result or f"Applied 1 edit to {path}.", False)])
            return a
        self.beats.append(Beat(name, frac, run=run, size=len(old) + len(new) + len(say)))
        return self

    def write(self, name: str, frac: float, say: str, path: str, size: int = 2500, extra: str = "") -> "Spec":
        def run(ctx: Ctx) -> int:
            body = C.source_file(ctx.rng, ctx.world, path, size, extra) if not path.endswith((".md", ".toml", ".yaml", ".yml", ".sql")) else extra
            a, _ = ctx.b.step(say, [("write_file", {"path": path, "content": body},
                                     f"Wrote {len(body.encode())} bytes to {path}.", False)])
            return a
        self.beats.append(Beat(name, frac, run=run, size=size))
        return self

    def test(self, name: str, frac: float, say: str, cmd: str, failures: list[tuple[str, str]] | None,
             size: int = 4000, exit_code: int | None = None) -> "Spec":
        def run(ctx: Ctx) -> int:
            text = ctx.work.test_output(size, failures)
            code = exit_code if exit_code is not None else (1 if failures else 0)
            _, outs = ctx.b.step(say, [("bash", {"cmd": cmd}, text + f"\n[exit code {code}]", False)])
            return outs[0]
        self.beats.append(Beat(name, frac, run=run, size=size))
        return self

    # -- probes
    def probe(self, id: str, kind: str, at: str, question: str, all: list[Any], none: list[str] | None = None,
              rubric: str | None = None, regex: str | None = None, accept: list[str] | None = None,
              reject: list[str] | None = None) -> "Spec":
        """A probe; `accept` / `reject` are its self-test examples (correct and plausible wrong answers)."""
        self.probes.append(Probe(id, kind, question, list(all), at, list(none or []), regex, rubric,
                                 accept=list(accept or []), reject=list(reject or [])))
        return self

    def keep_out_of_noise(self, *values: str) -> "Spec":
        """Values the generated noise must never contain by accident: the facts the probes ask about and the
        superseded ones. Listed explicitly, so a matcher reworded later never regenerates the session."""
        self.keep_out = tuple(values)
        return self

    def forbidden(self) -> tuple[str, ...]:
        return self.keep_out
