"""report.html and the lost-probe lists (issue 18, items 2 and 3): a real builtin run on small cases writes the
page beside report.md; the page is one file with nothing to fetch; its lost-probe list is the one run.json
implies; `view` writes and serves it; and headless Chromium renders it with no console errors."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import threading
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from harness.cli import main
from harness.render.lost import lost_by_key, lost_probes
from harness.render.terminal import print_lost
from harness.render.view import page_server, report_page
from harness.results.folder import read_run
from harness.studies.gate import make_baseline, outcomes, summary_testing


CHROMIUM = next((found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))),
                None)


LIBRARY = Path(__file__).parents[1] / "cases"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    """A library case that compacts six times and loses probes, and one that never compacts."""
    out = tmp_path_factory.mktemp("html") / "run"
    assert main(["run", "--cases-dir", str(LIBRARY), "--cases", "edge-32k-window", "--cases", "desktop-go-env-config",
                 "--out", str(out), "--json"]) == 0
    return out


def expected_lost(run: dict) -> set[str]:
    """Lost, straight from run.json: valid, and the compacted context fails under the run's grade."""
    grade = run["aggregates"]["grade"]
    return {f"{key}/{p['id']}" for key, record in run["cases"].items() for p in record["probes"]
            if p["valid"] and p["conditions"]["compacted"][grade] is False}


def test_the_page_is_one_file_with_nothing_to_fetch(run_folder):
    page = (run_folder / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") >= 2  # retention and a timeline, inline
    assert not re.search(r"<(script|img|link|iframe)[^>]*\b(src|href)=", page)  # no external script, image, css
    assert not re.search(r"url\(\s*['\"]?(https?:|//)", page)
    assert "<table class=\"sortable\"" in page and "report.js" not in page


def test_the_page_lists_the_lost_probes_of_run_json_with_question_expected_and_answer(run_folder):
    run = read_run(run_folder)
    lost = expected_lost(run)
    assert lost, "the fixture must lose probes for this test to mean anything"
    page = (run_folder / "report.html").read_text(encoding="utf-8")
    table = page[page.index('id="lost-table"'):page.index("</table>", page.index('id="lost-table"'))]
    assert set(re.findall(r'data-probe="([^"]+)"', table)) == lost
    first = next(p for p in lost_probes(run, run_folder))
    assert first.question != "-" and first.expected and first.answer != "-" and first.summary
    for text in (first.question, first.expected[0]):
        assert text in table


def test_report_md_and_the_terminal_list_the_lost_probes(run_folder):
    run = read_run(run_folder)
    report = (run_folder / "report.md").read_text(encoding="utf-8")
    lost = lost_probes(run, run_folder)
    assert f"### Lost probes ({len(lost)}:" in report
    assert all(f"| {p.key} | {p.kind} |" in report for p in lost)
    out = io.StringIO()
    print_lost(lost, run["aggregates"]["grade"], Console(file=out, width=200))
    terminal = out.getvalue()
    shown = [p for p in lost if f"- {p.key} ({p.kind}, at {p.at}): " in terminal]
    assert len(shown) == min(10, len(lost)) and f"{lost[0].question}" in terminal
    assert f"lost probes (answered; the full history passes them): {len(lost)}; " in terminal
    assert "report.md" in terminal


def test_report_md_defines_its_figures_and_lists_the_risks(run_folder):
    report = (run_folder / "report.md").read_text(encoding="utf-8")
    assert "### Definitions" in report and "- **normalised retention**: (compacted - floor)" in report
    assert "### Risks the policy leaves" in report


def reports_again(run_folder: Path, tmp_path: Path) -> Path:
    """The run's reports written again, as the run command writes them when a run finishes, into a copy."""
    from harness.render.run import RunProgress
    from harness.results.folder import RunFolder
    from harness.studies.compare import FinishedRun

    out = tmp_path / "again"
    shutil.copytree(run_folder, out, ignore=shutil.ignore_patterns("report.*", "retention.png"))
    RunProgress(as_json=True).finished(FinishedRun(RunFolder(out), read_run(out)))
    return out


def test_a_finished_run_draws_its_retention_figure_once_for_both_reports(run_folder, tmp_path, monkeypatch):
    """report.md's PNG and report.html's SVG are one drawing, saved twice (a second drawing cost 0.1 s a run)."""
    import harness.render.plots as plots

    drawn, draw = [], plots.retention_figure
    monkeypatch.setattr(plots, "retention_figure", lambda runs: drawn.append(runs) or draw(runs))
    out = reports_again(run_folder, tmp_path)
    run = read_run(out)
    assert [[label for label, _ in runs] for runs in drawn] == [[run["run_id"]]]
    assert (out / "retention.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "![retention against fact age and compactions survived](retention.png)" in (out / "report.md").read_text()
    plot = (out / "report.html").read_text(encoding="utf-8").split('<div class="plot">')[1].split("</div>")[0]
    assert plot.startswith("<svg") and "retention against compactions survived" in plot and run["run_id"] in plot


def test_a_figure_that_cannot_be_drawn_is_a_line_in_both_reports(run_folder, tmp_path, monkeypatch):
    import harness.render.plots as plots
    from harness.errors import HarnessError

    def missing(runs):
        raise HarnessError("plots need matplotlib")

    monkeypatch.setattr(plots, "retention_figure", missing)
    out = reports_again(run_folder, tmp_path)
    line = "(plots skipped: HarnessError: plots need matplotlib)"
    assert line in (out / "report.md").read_text() and line in (out / "report.html").read_text(encoding="utf-8")
    assert not (out / "retention.png").exists()


def test_view_rewrites_a_missing_page_and_serves_it(run_folder, tmp_path, loopback):
    copy = tmp_path / "run"
    shutil.copytree(run_folder, copy)
    (copy / "report.html").unlink()
    assert main(["view", str(copy), "--no-open"]) == 0
    page = report_page(copy)
    assert page.exists()
    server = page_server(page, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}/report.html", timeout=10) as r:
            assert r.status == 200 and r.read().decode() == page.read_text(encoding="utf-8")
    finally:
        server.shutdown()
        server.server_close()


def test_view_of_a_folder_without_a_run_is_one_line(tmp_path, capsys):
    assert main(["view", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def chromium(page: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                           "--v=0", *flags, page.resolve().as_uri()], capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (Debian: apt-get install chromium)")
def test_headless_chromium_renders_the_page_without_console_errors(run_folder):
    page = run_folder / "report.html"
    result = chromium(page, "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []  # any script error, failed load or console.error prints a CONSOLE line
    dom = result.stdout
    tables = dom.count('<table class="sortable"')
    assert f'data-ready="{tables}"' in dom  # the script ran to its end over every table
    table = dom[dom.index('id="lost-table"'):dom.index("</table>", dom.index('id="lost-table"'))]
    assert set(re.findall(r'data-probe="([^"]+)"', table)) == expected_lost(read_run(run_folder))


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (Debian: apt-get install chromium)")
def test_the_console_check_sees_a_script_error(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>")
    result = chromium(broken, "--dump-dom")
    assert any(":CONSOLE" in line and "undefinedFunction" in line for line in result.stderr.splitlines())


def test_junit_failures_carry_question_expected_and_answer(run_folder, tmp_path):
    run = read_run(run_folder)
    baseline = make_baseline(run)
    regressed = sorted(expected_lost(run))[0]
    baseline["probes"][regressed][run["aggregates"]["grade"]] = True  # it passed in the baseline
    baseline_file = tmp_path / "baseline.json"
    baseline_file.write_text(json.dumps(baseline))
    junit = tmp_path / "junit.xml"
    assert main(["gate", str(run_folder), "--baseline", str(baseline_file), "--junit", str(junit)]) == 1
    suite = ET.parse(junit).getroot()
    case_id, _, probe_id = regressed.rpartition("/")
    failure = suite.find(f"testcase[@classname='{case_id}'][@name='{probe_id}']/failure")
    lost = lost_by_key(run, run_folder)[regressed]
    assert failure is not None and f"question: {lost.question}" in failure.text
    assert f"expected: {'; '.join(lost.expected)}" in failure.text and "answer (compacted): " in failure.text
    others = [c for c in suite.iter("testcase") if f"{c.get('classname')}/{c.get('name')}" in expected_lost(run)
              and c.get("name") != probe_id]
    assert others and all("question: " in c.find("system-out").text for c in others)  # lost in both: details too


def test_compare_lists_the_probes_that_flipped(run_folder, tmp_path, capsys):
    empty = tmp_path / "empty"
    assert main(["run", "--cases-dir", str(LIBRARY), "--cases", "edge-32k-window", "--control", "empty",
                 "--out", str(empty), "--json"]) == 0
    capsys.readouterr()
    markdown = tmp_path / "comparison.md"
    assert main(["compare", str(run_folder), str(empty), "--markdown", str(markdown)]) == 0
    terminal = capsys.readouterr().out
    ours, theirs = read_run(run_folder), read_run(empty)
    grade = ours["aggregates"]["grade"]
    testing = summary_testing(ours, grade) & summary_testing(theirs, grade)
    a, b = outcomes(ours), outcomes(theirs)
    flipped = sorted(k for k in testing if k in b and a[k][grade] and not b[k][grade])
    assert flipped, "the empty control must lose some probe the summarizer keeps"
    text = markdown.read_text()
    assert "### Probes that flipped" in text and all(k in text for k in flipped)
    assert "flipped: " in terminal and all(k in terminal for k in flipped)
    assert "### Which figure answers which question" in text


def test_the_progress_bar_draws_only_on_a_terminal_and_a_few_times_a_second():
    from harness.render.run import case_progress

    piped = case_progress(Console(file=io.StringIO()), quiet=False)
    assert piped.disable
    terminal = case_progress(Console(file=io.StringIO(), force_terminal=True), quiet=False)
    assert not terminal.disable and terminal.live.refresh_per_second <= 4
    assert case_progress(Console(file=io.StringIO(), force_terminal=True), quiet=True).disable


GEOMETRY = """<script>
const box = (selector) => document.querySelector(selector).getBoundingClientRect();
document.documentElement.dataset.geometry = JSON.stringify({
  headline: box("p.headline").bottom, plot: box("#plots svg").top, plotBottom: box("#plots svg").bottom,
  pageWidth: document.documentElement.scrollWidth, main: box("main").width,
  widestTable: Math.max(...Array.from(document.querySelectorAll("table"), (t) => t.getBoundingClientRect().width))});
</script></body>"""


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (Debian: apt-get install chromium)")
def test_the_headline_and_a_plot_are_on_the_first_screen_and_wide_tables_scroll_inside(run_folder, tmp_path):
    """At 1280x800: the headline and the retention plot above the fold, no sideways scroll of the page however
    wide the lost-probe table is (it scrolls inside its own box)."""
    page = tmp_path / "measured.html"
    page.write_text((run_folder / "report.html").read_text(encoding="utf-8").replace("</body>", GEOMETRY))
    result = chromium(page, "--window-size=1280,800", "--dump-dom")
    found = json.loads(re.search(r'data-geometry="([^"]+)"', result.stdout)[1].replace("&quot;", '"'))
    assert found["headline"] < 800 and found["plot"] < 800, found
    assert found["widestTable"] > found["main"] and found["pageWidth"] <= 1280, found  # it scrolls in its box


def _get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_view_serve_serves_the_report_and_nothing_else(run_folder, tmp_path, loopback):
    """Issue 44: a symlink in the run folder to a file outside it, another file of the folder, a directory URL,
    a path climbing out: each a 404; only /report.html is served."""
    copy = tmp_path / "run"
    shutil.copytree(run_folder, copy)
    secret = tmp_path / "outside.txt"
    secret.write_text("not the report's")
    (copy / "link.txt").symlink_to(secret)
    (copy / "sub").mkdir()
    page = report_page(copy / "report.html")
    server = page_server(page, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        status, body = _get(port, "/report.html")
        assert status == 200 and body == page.read_bytes()
        for path in ("/link.txt", "/", "/sub/", "/run.json", "/../outside.txt", "/%2e%2e/outside.txt"):
            status, body = _get(port, path)
            assert status == 404 and b"not the report" not in body, path
        page.rename(copy / "real.html")
        page.symlink_to(secret)  # the page itself turned into a link after the server started
        assert _get(port, "/report.html")[0] == 404
    finally:
        server.shutdown()
        server.server_close()


def test_view_refuses_a_report_that_is_a_link_and_a_host_that_is_not_loopback(run_folder, tmp_path, capsys):
    copy = tmp_path / "run"
    shutil.copytree(run_folder, copy)
    (copy / "report.html").unlink()
    (copy / "report.html").symlink_to(tmp_path / "elsewhere.html")
    (tmp_path / "elsewhere.html").write_text("<p>elsewhere</p>")
    assert main(["view", str(copy / "report.html"), "--no-open"]) == 2
    assert "a symbolic link" in capsys.readouterr().err
    assert main(["view", str(run_folder), "--serve", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --host 0.0.0.0 is not loopback") and "--expose" in err and err.count("\n") == 1


def test_view_expose_says_what_it_exposes(run_folder, capsys, monkeypatch):
    import harness.render.view as view

    served = []
    monkeypatch.setattr(view, "serve_page", lambda page, host, port, ready: served.append(host) or ready(
        f"http://{host}:{port}/{page.name}"))
    assert main(["view", str(run_folder), "--serve", "--host", "0.0.0.0", "--expose"]) == 0
    err = capsys.readouterr().err
    assert served == ["0.0.0.0"]
    assert f"exposed: {(run_folder / 'report.html').resolve()} (that file only" in " ".join(err.split())
