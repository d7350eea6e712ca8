"""Print the markdown table of the cases in a folder (used for cases/README.md).

    python tools/casegen/table.py [cases]            # print the table
    python tools/casegen/table.py cases --readme     # rewrite the table inside cases/README.md
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path


def true_counter():
    """o200k_base via the harness's offline tiktoken setup, when the harness is importable; else None."""
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from harness.tokens import counter
        c = counter("o200k")
        c.count_text("warm up")
        return c
    except Exception:  # the table still works without true counts
        return None


def row(folder: Path, tok=None) -> dict:
    case = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
    chars = messages = turns = calls = compactions = true = 0
    for line in (folder / case["case"].get("session", "session.jsonl")).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        role = rec["role"]
        chars += len(rec.get("content", ""))
        if tok is not None:
            true += tok.count_text(rec.get("content", "")) + sum(
                tok.count_text(f"{c['name']} {json.dumps(c['arguments'], sort_keys=True)}") for c in rec.get("tool_calls") or [])
        if role == "compaction":
            compactions += 1
            continue
        if role == "system":
            continue
        messages += 1
        turns += role == "user"
        for c in rec.get("tool_calls") or []:
            calls += 1
            chars += len(c["name"]) + 1 + len(json.dumps(c["arguments"], sort_keys=True))
    gen = case.get("generator", {})
    return {"id": case["case"]["id"], "pool": case["case"]["pool"], "messages": messages, "turns": turns,
            "tool_calls": calls, "tokens": chars // 4, "window": case["model"]["context_window"],
            "probes": len(case.get("probe", [])), "seed": gen.get("seed", "-"), "manual": compactions,
            "true": true if tok is not None else None}


START, END = "<!-- case-table:start -->", "<!-- case-table:end -->"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    readme = "--readme" in args
    args = [a for a in args if a != "--readme"]
    root = Path((args or ["cases"])[0])
    if readme:
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main([str(root)])
        path = root / "README.md"
        text = path.read_text(encoding="utf-8")
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        path.write_text(f"{head}{START}\n{buf.getvalue()}{END}{tail}", encoding="utf-8")
        return 0
    order = {"desktop": 0, "long": 1, "autonomous": 2, "edge": 3}
    tok = true_counter()
    rows = sorted((row(d, tok) for d in root.iterdir() if (d / "case.toml").exists()),
                  key=lambda r: (order.get(r["pool"], 9), r["id"]))
    fmt = lambda v: "-" if v is None else f"{v:,}"
    print("| id | pool | messages | turns | tool calls | tokens (chars/4) | tokens (o200k) | window | probes | seed |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(f"| {r['id']} | {r['pool']} | {r['messages']} | {r['turns']} | {r['tool_calls']} | {r['tokens']:,} | "
              f"{fmt(r['true'])} | {r['window']:,} | {r['probes']} | {r['seed']} |")
    total_true = None if tok is None else sum(r["true"] for r in rows)
    print(f"| **total** ({len(rows)} cases) | | {sum(r['messages'] for r in rows)} | | {sum(r['tool_calls'] for r in rows)} | "
          f"{sum(r['tokens'] for r in rows):,} | {fmt(total_true)} | | {sum(r['probes'] for r in rows)} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
