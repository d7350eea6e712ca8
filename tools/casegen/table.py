"""Print the markdown table of the cases in a folder (used for cases/README.md).

    python tools/casegen/table.py [cases]            # print the table
    python tools/casegen/table.py cases --readme     # rewrite the table inside cases/README.md
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]

from builder import session_tokens  # noqa: E402

from harness.atomic import write_atomic  # noqa: E402
from harness.cases import case_tables, load_case  # noqa: E402


def true_counter() -> str | None:
    """o200k_base through the harness's offline tiktoken setup, when it loads; else None (no true counts)."""
    try:
        from harness.tokens import counter
        counter("o200k").count_text("warm up")
        return "o200k"
    except Exception:  # the table still works without true counts
        return None


def row(folder: Path, true_name: str | None = None) -> dict:
    """One case as the harness reads it; token sizes as the harness counts them (harness.tokens)."""
    case = load_case(folder)
    session = case.session
    gen = case_tables(folder).get("generator", {})
    return {"id": case.id, "pool": case.pool, "messages": len(session.messages),
            "turns": sum(1 for m in session.messages if m.role == "user"),
            "tool_calls": sum(len(m.tool_calls) for m in session.messages), "tokens": session_tokens(session),
            "window": case.context_window, "probes": len(case.probes), "seed": gen.get("seed", "-"),
            "manual": len(session.compactions),
            "true": session_tokens(session, true_name) if true_name is not None else None}


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
        write_atomic(path, f"{head}{START}\n{buf.getvalue()}{END}{tail}")
        return 0
    order = {"desktop": 0, "long": 1, "autonomous": 2, "edge": 3}
    true_name = true_counter()
    rows = sorted((row(d, true_name) for d in root.iterdir() if (d / "case.toml").exists()),
                  key=lambda r: (order.get(r["pool"], 9), r["id"]))
    fmt = lambda v: "-" if v is None else f"{v:,}"
    print("| id | pool | messages | turns | tool calls | tokens (chars/4) | tokens (o200k) | window | probes | seed |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(f"| {r['id']} | {r['pool']} | {r['messages']} | {r['turns']} | {r['tool_calls']} | {r['tokens']:,} | "
              f"{fmt(r['true'])} | {r['window']:,} | {r['probes']} | {r['seed']} |")
    total_true = None if true_name is None else sum(r["true"] for r in rows)
    print(f"| **total** ({len(rows)} cases) | | {sum(r['messages'] for r in rows)} | | {sum(r['tool_calls'] for r in rows)} | "
          f"{sum(r['tokens'] for r in rows):,} | {fmt(total_true)} | | {sum(r['probes'] for r in rows)} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
