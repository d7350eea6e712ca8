"""Generate the fixture case library: cases/<id>/session.jsonl + case.toml.

    python tools/casegen/generate.py                 # all cases into cases/
    python tools/casegen/generate.py --only long-auth-refactor
    python tools/casegen/generate.py --check         # build and verify, write nothing
    python tools/casegen/generate.py --table         # print the markdown table of the written cases

Pure standard library and deterministic: each case's content comes from random.Random(seed), with the seed
recorded in its case.toml under [generator]. Probe truth is verified before anything is written.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from builder import case_toml, message_text, simulate, verify_probes  # noqa: E402
from catalog import CASES  # noqa: E402
from spec import Spec, system_prompt  # noqa: E402
from work import build_session  # noqa: E402
from worlds import WORLDS  # noqa: E402

ROOT = HERE.parent.parent
SCRIPT = "tools/casegen/generate.py"


def build(spec: Spec):
    rng = random.Random(spec.seed)
    world = WORLDS[spec.world]
    system = system_prompt(rng, world)
    b, _ = build_session(rng, world, system, spec.layout, spec.beats, spec.forbidden())
    if spec.manual_compaction:
        frac, text = spec.manual_compaction
        target = int(frac * len(b.msgs))
        pos = next(i for i in range(target, len(b.msgs)) if b.msgs[i]["role"] == "user")
        b.compactions.append((pos, {"role": "compaction", "content": text, "covers": pos, "origin": "manual"}))
    problems = verify_probes(b, spec.probes)
    return b, problems


def stats(b, spec: Spec) -> dict:
    turns = sum(1 for m in b.msgs if m["role"] == "user")
    chars = len(b.system) + sum(len(message_text(m)) for m in b.msgs) + sum(len(c[1]["content"]) for c in b.compactions)
    biggest = max((len(m["content"]) for m in b.msgs if m["role"] == "tool"), default=0)
    return {"id": spec.id, "pool": spec.pool, "messages": len(b.msgs), "turns": turns, "tool_calls": b.tool_calls,
            "tokens": chars // 4, "window": spec.window, "probes": len(spec.probes),
            "largest_tool_output_tokens": biggest // 4}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "cases"))
    ap.add_argument("--only", action="append")
    ap.add_argument("--check", action="store_true", help="build and verify only")
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
        print(json.dumps(st), flush=True)
        for p in problems:
            print(f"  PROBLEM {spec.id}: {p}", flush=True)
        bad += bool(problems)
        if args.check or problems:
            continue
        folder = Path(args.out) / spec.id
        folder.mkdir(parents=True, exist_ok=True)
        b.write(folder / "session.jsonl")
        (folder / "case.toml").write_text(case_toml(spec.id, spec.title, spec.pool, spec.window, spec.max_out,
                                                    SCRIPT, spec.seed, spec.probes, spec.notes), encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
