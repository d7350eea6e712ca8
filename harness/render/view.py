"""Looking at a run's report.html: write it from run.json when it is missing or older (a run from before
the page existed, a merged folder), then open it in the desktop's browser or serve it over loopback HTTP
(for a machine without a display: forward the port, or open it from a container)."""

from __future__ import annotations

import os
import sys
import webbrowser
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

from harness.errors import HarnessError


def report_page(run_path: str | Path) -> Path:
    """The run's report.html, (re)written from run.json when it is absent or older than run.json."""
    from harness.render.html import write_html
    from harness.results.folder import read_run

    folder = Path(run_path)
    if folder.is_file() and folder.name == "report.html":
        return folder
    if folder.is_file():
        folder = folder.parent
    page, run_file = folder / "report.html", folder / "run.json"
    if not run_file.exists():
        raise HarnessError(f"{folder}: no run.json here (view takes a run folder; for a run of several "
                           f"configurations, one of its subfolders)")
    if not page.exists() or page.stat().st_mtime < run_file.stat().st_mtime:
        write_html(read_run(folder), folder)
    return page


def has_display() -> bool:
    """A desktop to open a browser on: macOS and Windows always, elsewhere an X or Wayland display."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_page(page: Path) -> bool:
    """Open the page in the desktop's browser; False when there is no desktop or no browser (then serve it)."""
    if not has_display():  # a console browser would take over the terminal; a GUI one would fail
        return False
    try:
        return webbrowser.open(page.resolve().as_uri())
    except webbrowser.Error:
        return False


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # one line per request would bury the URL
        pass


def page_server(page: Path, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server for the page's folder (the page needs nothing else; its plots are inline)."""
    try:
        return ThreadingHTTPServer((host, port), partial(_Quiet, directory=str(page.parent)))
    except OSError as exc:
        raise HarnessError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None


def serve_page(page: Path, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve until interrupted; `ready` gets the page's URL once the socket listens."""
    server = page_server(page, host, port)
    with server:
        ready(f"http://{host}:{server.server_address[1]}/{page.name}")
        server.serve_forever()
