"""The figures README.md and docs/ quote, recomputed from the commands behind them and compared with the text.

A quoted figure carries its key in an HTML comment right after it, invisible once rendered:
`lists 58<!--fig:default.lost_probes--> lost probes`. Each source below runs one command (or reads one committed
file, or the run folders `tools/reference replay` leaves) and returns the figures it gives, formatted as the text
writes them. `tools/readme-figures` reports every
stale figure (exit 1) or, with `--write`, rewrites it, wherever it stands in README.md or docs/ (and with
`--screenshot` pictures the default run's report.html as docs/report-html.png); `--only SOURCE` limits the work to some sources (the cheap
ones, `library` and `reference`, are what tests/test_readme_figures.py checks on every CI run). Wall times are
measured, never checked: the text labels them with their date.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ("README.md", "docs")  # files, or folders of .md files
# a number (`58`, `3.9`, `1,234`), a range (`54-70`), a percent (`61.9%`) or a size (`1.2 MB`), then its key
MARK = re.compile(r"(?P<value>\d[\d.,]*(?:-\d[\d.,]*)?(?:%| MB)?)<!--fig:(?P<key>[\w.-]+)-->")
BASELINES = {"openai": "goldens/baselines/reference-openai-emulator.json",
             "anthropic": "goldens/baselines/reference-anthropic-emulator.json"}
ESTIMATED = {"sonnet": "anthropic:claude-sonnet-4-6", "gpt5": "openai:gpt-5"}
Figures = dict[str, str]


def harness_command() -> list[str]:
    return [str(ROOT / ".venv" / "bin" / "compaction-harness")]


# ---------------------------------------------------------------------------------------------
# sources: each returns {key: the figure as the text writes it}


def library() -> Figures:
    """The case library: cases and probes in all, and in the generated or imported pools (all but `real`)."""
    from harness.cases import discover

    cases = discover(ROOT / "cases")
    built = [c for c in cases if c.pool != "real"]
    return {"library.cases": str(len(cases)), "library.cases_built": str(len(built)),
            "library.cases_real": str(len(cases) - len(built)),
            "library.probes": str(sum(len(c.probes) for c in cases)),
            "library.probes_built": str(sum(len(c.probes) for c in built))}


def reference() -> Figures:
    """The committed reference baselines (what `tools/reference replay` gates against)."""
    out: Figures = {}
    for provider, path in BASELINES.items():
        baseline = json.loads((ROOT / path).read_text(encoding="utf-8"))
        lead, valid = baseline["aggregates"]["headline"], baseline["aggregates"]["compacted"]
        key = f"reference.{provider}"
        out |= {f"{key}.rate": f"{100 * lead['rate']:.1f}%", f"{key}.passed": str(lead["passed"]),
                f"{key}.total": str(lead["total"]), f"{key}.cases": str(lead["cases"]),
                f"{key}.wilson": _interval(lead["wilson95"]), f"{key}.clustered": _interval(lead["cluster95"]),
                f"{key}.ceiling": str(valid["total"]), f"{key}.probes": str(len(baseline["probes"])),
                f"{key}.invalid": str(len(baseline["probes"]) - valid["total"])}
    return out


DEFAULT_RUN: list[Path] = []  # --from-run: a default run already made, read instead of running it again
SCREENSHOT: list[Path] = []  # --screenshot: where to write the picture of the default run's report.html
SCREEN = "1280,800"  # the first screen of report.html, as a reader opens it


def default_run() -> Figures:
    """`compaction-harness run` (no arguments): its headline, lost probes, the four risks, report.html's size (its
    cases and probes are the library's); with --screenshot, the picture of its report.html too."""
    if DEFAULT_RUN:
        return default_figures(DEFAULT_RUN[0])
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        _run([*harness_command(), "run", "--out", folder, "--json"])
        print(f"default run: {time.monotonic() - started:.0f} s wall (measured, not checked)", file=sys.stderr)
        return default_figures(Path(folder))


def default_figures(folder: Path) -> Figures:
    from harness.render.lost import is_lost

    if SCREENSHOT:
        screenshot(folder / "report.html", SCREENSHOT[0])
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    html = (folder / "report.html").stat().st_size
    grade = run["aggregates"]["grade"]
    out = {"default.lost_probes": str(sum(is_lost(p, grade) for c in run["cases"].values() for p in c["probes"])),
           "default.html_mb": f"{html / 1_000_000:.1f} MB"}
    for name, headline in run["aggregates"]["headline"].items():
        rate = headline["tests_summary"]
        out |= {f"default.{name}.rate": f"{100 * rate['rate']:.1f}%", f"default.{name}.passed": str(rate["passed"]),
                f"default.{name}.total": str(rate["total"])}
    for kind in ("estimator_miss", "response_may_be_cut", "summary_request_too_big", "nothing_to_fold"):
        by_case = [c["risk_counts"].get(kind, 0) for c in run["cases"].values() if c.get("risk_counts")]
        out[f"default.risk.{kind}.sends"] = str(sum(by_case))
        out[f"default.risk.{kind}.cases"] = str(sum(1 for n in by_case if n))
    return out


def screenshot(page: Path, picture: Path) -> None:
    """The first screen of `page` as a PNG at `picture`, by headless Chromium (Debian: apt-get install -y chromium)."""
    import shutil

    browser = next((found for name in ("chromium", "chromium-browser", "google-chrome")
                    if (found := shutil.which(name))), None)
    if browser is None:
        raise SystemExit("readme-figures: --screenshot needs headless Chromium on PATH (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as profile:
        _run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={profile}",
              f"--window-size={SCREEN}", f"--screenshot={picture.resolve()}", page.resolve().as_uri()])
    print(f"readme-figures: wrote {picture}", file=sys.stderr)


def estimate() -> Figures:
    """`run --estimate --model M --concurrency 4` for the two models the README prices."""
    out: Figures = {}
    for name, spec in ESTIMATED.items():
        found = json.loads(_run([*harness_command(), "run", "--estimate", "--model", spec, "--concurrency", "4",
                                 "--json"]))
        lines = {line["condition"]: line for line in found["lines"]}
        summarizer, key = lines["compaction"], f"estimate.{name}"
        out |= {f"{key}.requests": str(found["requests"]), f"{key}.summarizer_calls": str(summarizer["requests"]),
                f"{key}.summarizer_tokens": f"{summarizer['input_tokens'] / 1e6:.1f}",
                f"{key}.summarizer_usd": f"{summarizer['usd_cache_on']:.2f}",
                f"{key}.usd_cache_on": f"{found['usd_cache_on']:.2f}", f"{key}.usd_cache_off": f"{found['usd_cache_off']:.2f}",
                f"{key}.wall_min": f"{found['wall_time_s'] / 60:.0f}",
                f"{key}.answered_probes": str(lines["compacted"]["requests"])}
        for condition in ("compacted", "full", "floor", "oracle"):
            if condition in lines:
                out[f"{key}.{condition}_usd"] = f"{lines[condition]['usd_cache_on']:.2f}"
        if "oracle" in lines:
            out[f"{key}.oracle_probes"] = str(lines["oracle"]["requests"])
    return out


COST_MODELS = {"anthropic:claude-sonnet-4-6": "sonnet", "openai:gpt-5": "gpt5"}


def cost() -> Figures:
    """`compaction-harness cost` (all cases, the two default models): each shape's call and whole price per
    compaction, the cache-on call's cache share, and how many compactions in how many sessions it prices."""
    found = json.loads(_run([*harness_command(), "cost", "--json"]))
    out: Figures = {}
    for summary in found["models"]:
        name = COST_MODELS.get(summary["model"])
        if name is None:
            continue
        out |= {"cost.compactions": str(summary["compactions"]), "cost.sessions": str(summary["sessions"])}
        for shape, t in summary["shapes"].items():
            shape = "alt" if shape.startswith("alt:") else shape.removesuffix("-compact").replace("anthropic", "provider")
            shape = "provider" if shape == "openai" else shape
            out[f"cost.{name}.{shape}.call"] = f"{t['per_compaction_usd'] or 0:.4f}"
            out[f"cost.{name}.{shape}.whole"] = f"{t.get('whole_per_compaction_usd') or 0:.4f}"
        out |= cost_prose(name, summary)
    return out


def cost_prose(name: str, summary: dict) -> Figures:
    """The figures the paragraph under the cost table quotes: the first request after a compaction, the request
    not compacting would have sent, the cheaper model's and provider compaction's break-even ratios."""
    on = summary["shapes"]["cache-on"]
    first = on["first_request"]
    key = f"cost.{name}"
    out = {f"{key}.cache_read": f"{100 * (on.get('cache_hit_rate') or 0):.1f}%",
           f"{key}.first_request": f"{first['per_compaction_usd']:.4f}",
           f"{key}.first_write_share": f"{100 * (first.get('write_share') or 0):.0f}%",
           f"{key}.uncompacted": f"{on['uncompacted_per_compaction_usd']:.4f}",
           f"{key}.extra": f"{on['extra_per_compaction_usd']:.4f}"}
    for alt in summary["alternatives"].values():
        flip = alt.get("flip_hit_rate")
        out |= {f"{key}.alt.price_ratio": f"{alt['price_ratio']:.3f}",
                f"{key}.alt.break_even": f"{alt['break_even_ratio_whole']:.3f}",
                f"{key}.alt.saving": f"{abs(alt['saving_whole_usd']):.2f}",
                f"{key}.alt.flip": f"{100 * flip:.0f}%" if flip is not None else "-"}
    for shape, provider in summary.get("provider_compaction", {}).items():
        measured = summary["shapes"][shape]
        out |= {f"{key}.provider.break_even": f"{provider['break_even_ratio_whole']:.3f}",
                f"{key}.provider.gap": f"{abs(measured['per_compaction_usd'] - on['per_compaction_usd']):.4f}",
                f"{key}.provider.cache_read": f"{100 * (measured.get('cache_hit_rate') or 0):.1f}%",
                f"{key}.provider.first_request": f"{measured['first_request']['per_compaction_usd']:.4f}"}
    return out


def replay() -> Figures:
    """The run folders `tools/reference replay` leaves (results/reference-<provider>-emulator-replay/, what .ci/run
    makes): the figures the baselines do not keep, retained's headline, the groups and the agreement."""
    out: Figures = {}
    for provider in BASELINES:
        path = ROOT / "results" / f"reference-{provider}-emulator-replay" / "run.json"
        if not path.exists():
            raise SystemExit(f"readme-figures: {path.relative_to(ROOT)} is missing: run `tools/reference replay` first")
        agg = json.loads(path.read_text(encoding="utf-8"))["aggregates"]
        key, retained, answered = f"replay.{provider}", agg["headline"]["retained"], agg["headline"]["answered"]
        rate = retained["tests_summary"]
        out |= {f"{key}.retained.rate": f"{100 * rate['rate']:.1f}%", f"{key}.retained.passed": str(rate["passed"]),
                f"{key}.retained.total": str(rate["total"]), f"{key}.retained.cases": str(rate["cases"]),
                f"{key}.retained.wilson": _interval(rate["wilson95"]),
                f"{key}.retained.clustered": _interval(rate["cluster95"]),
                f"{key}.floor_answers": str(answered["groups"]["floor_answers"]),
                f"{key}.no_compaction": str(answered["groups"]["no_compaction"]),
                f"{key}.agreement.passed": str(agg["agreement"]["passed"]),
                f"{key}.agreement.total": str(agg["agreement"]["total"]),
                f"{key}.agreement.rate": f"{100 * agg['agreement']['rate']:.1f}%"}
    return out


SOURCES: dict[str, Callable[[], Figures]] = {"library": library, "reference": reference, "replay": replay,
                                             "default": default_run, "estimate": estimate, "cost": cost}
CHEAP = ("library", "reference")


def _interval(bounds: list[float]) -> str:
    return f"{100 * bounds[0]:.0f}-{100 * bounds[1]:.0f}"


def _run(command: list[str]) -> str:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"readme-figures: `{' '.join(command)}` exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


# ---------------------------------------------------------------------------------------------
# the text


def text_files(root: Path = ROOT) -> list[Path]:
    out = []
    for name in TEXTS:
        path = root / name
        out += sorted(path.rglob("*.md")) if path.is_dir() else [path]
    return out


def marks(path: Path) -> list[tuple[int, str, str]]:
    """(line, key, value as written) for every marked figure of a file."""
    return [(number, m["key"], m["value"]) for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            for m in MARK.finditer(line)]


def stale(paths: list[Path], figures: Figures, sources: list[str]) -> tuple[list[str], list[str]]:
    """(stale figures, marks no source knows) as `file:line: ...` lines; marks of unselected sources are skipped."""
    found, unknown = [], []
    for path in paths:
        for number, key, value in marks(path):
            where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{number}"
            source = key.split(".")[0]
            if source not in SOURCES:
                unknown.append(f"{where}: {key}: no source gives this figure")
            elif source in sources and key not in figures:
                unknown.append(f"{where}: {key}: `{source}` gives no such figure")
            elif key in figures and figures[key] != value:
                found.append(f"{where}: {key} reads {value}, measured {figures[key]}")
    return found, unknown


def rewrite(path: Path, figures: Figures) -> int:
    """Rewrite every marked figure of `path` that `figures` knows; the number rewritten."""
    changed = 0

    def put(match: re.Match) -> str:
        nonlocal changed
        value = figures.get(match["key"], match["value"])
        changed += value != match["value"]
        return f"{value}<!--fig:{match['key']}-->"

    text = path.read_text(encoding="utf-8")
    new = MARK.sub(put, text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/readme-figures", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", choices=sorted(SOURCES), metavar="SOURCE",
                        help=f"recompute only this source (repeatable): {', '.join(SOURCES)}; default all")
    parser.add_argument("--write", action="store_true", help="rewrite the stale figures in place")
    parser.add_argument("--from-run", type=Path, metavar="DIR",
                        help="the folder of a default `compaction-harness run` made on this tree, read, not run again")
    parser.add_argument("--screenshot", action="store_true",
                        help="also write docs/report-html.png from the default run's report.html (headless Chromium)")
    args = parser.parse_args(argv)
    DEFAULT_RUN[:] = [args.from_run] if args.from_run else []
    SCREENSHOT[:] = [ROOT / "docs" / "report-html.png"] if args.screenshot else []
    if args.screenshot and args.only and "default" not in args.only:
        parser.error("--screenshot pictures the default run: add --only default")
    sources = args.only or list(SOURCES)
    figures: Figures = {}
    for name in sources:
        print(f"readme-figures: {name} ...", file=sys.stderr)
        figures |= SOURCES[name]()
    paths = text_files()
    found, unknown = stale(paths, figures, sources)
    for line in unknown:
        print(line)
    if args.write:
        changed = sum(rewrite(path, figures) for path in paths)
        print(f"readme-figures: rewrote {changed} figure(s)")
        return 1 if unknown else 0
    for line in found:
        print(line)
    checked = sum(1 for path in paths for _, key, _ in marks(path) if key in figures)
    print(f"readme-figures: {checked} figure(s) checked from {', '.join(sources)}; {len(found)} stale")
    return 1 if found or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
