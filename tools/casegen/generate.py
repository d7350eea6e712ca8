"""Generate the fixture case library: cases/<id>/session.jsonl + case.toml.

    python tools/casegen/generate.py                 # all cases into cases/
    python tools/casegen/generate.py --only long-auth-refactor
    python tools/casegen/generate.py --check         # build, verify and compare with the written cases
    python tools/casegen/generate.py --table         # print the markdown table of the written cases

Run it with the project's environment (it imports the harness: its session writer, case writer, policy and
token counters). Deterministic: each case's content comes from random.Random(seed), with the seed recorded in
its case.toml under [generator]. Probe truth is verified before anything is written; `--check` also reports
whether each case folder already holds exactly the files this code generates.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(HERE), str(ROOT)]

from builder import Builder, case_toml, session_tokens, simulate, verify_probes  # noqa: E402
from catalog import CASES  # noqa: E402
from spec import Spec, system_prompt  # noqa: E402
from work import build_session  # noqa: E402
from worlds import WORLDS  # noqa: E402

from harness.atomic import write_atomic  # noqa: E402
from harness.session import dumps_session  # noqa: E402
from harness.tokens import counter  # noqa: E402

SCRIPT = "tools/casegen/generate.py"


def build(spec: Spec) -> tuple[Builder, list[str]]:
    rng = random.Random(spec.seed)
    world = WORLDS[spec.world]
    system = system_prompt(rng, world)
    b, _ = build_session(rng, world, system, spec.layout, spec.beats, spec.forbidden())
    if spec.manual_compaction:
        frac, text = spec.manual_compaction
        target = int(frac * len(b.msgs))
        pos = next(i for i in range(target, len(b.msgs)) if b.msgs[i].role == "user")
        b.compaction(text, covers=pos, position=pos)
    problems = verify_probes(b, spec.probes, spec.forbidden())
    return b, problems


def case_files(b: Builder, spec: Spec) -> dict[str, str]:
    """The text of each file of the case folder."""
    return {"session.jsonl": dumps_session(b.session()),
            "case.toml": case_toml(spec.id, spec.title, spec.pool, spec.window, spec.max_out, SCRIPT, spec.seed,
                                   spec.probes, spec.notes)}


def changed_files(folder: Path, files: dict[str, str]) -> list[str]:
    """The files of `folder` that differ from (or are missing against) the generated ones."""
    changed = []
    for name, text in files.items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            changed.append(name)
    return changed


def stats(b: Builder, spec: Spec) -> dict:
    session = b.session()
    chars4 = counter("chars4")
    biggest = max((chars4.count_text(m.content) for m in session.messages if m.role == "tool"), default=0)
    return {"id": spec.id, "pool": spec.pool, "messages": len(session.messages),
            "turns": sum(1 for m in session.messages if m.role == "user"), "tool_calls": b.tool_calls,
            "tokens": session_tokens(session), "window": spec.window, "probes": len(spec.probes),
            "largest_tool_output_tokens": biggest}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "cases"))
    ap.add_argument("--only", action="append")
    ap.add_argument("--check", action="store_true", help="build, verify and compare with --out; write nothing")
    ap.add_argument("--table", action="store_true", help="print the README table from the written cases")
    args = ap.parse_args(argv)
    if args.table:
        from table import main as table_main
        return table_main([args.out])
    bad = 0
    for make in CASES:
        spec = make()
        if args.only and spec.id not in args.only:
            continue
        b, problems = build(spec)
        st = stats(b, spec)
        events = simulate(b, spec.window)
        st["compactions"] = len(events)
        st["one_step_tails"] = sum(e["one_step"] for e in events)
        folder = Path(args.out) / spec.id
        files = case_files(b, spec)
        if args.check:
            changed = changed_files(folder, files)
            st["files"] = f"differ: {', '.join(changed)}" if changed else "unchanged"
            problems = problems + [f"{folder / name} is not what this code generates" for name in changed]
        print(json.dumps(st), flush=True)
        for p in problems:
            print(f"  PROBLEM {spec.id}: {p}", flush=True)
        bad += bool(problems)
        if args.check or problems:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            write_atomic(folder / name, text)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
