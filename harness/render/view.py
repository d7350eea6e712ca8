"""Looking at a run's report.html: write it from run.json when it is missing or older (a run from before
the page existed, a merged folder), then open it in the desktop's browser or serve it over loopback HTTP
(for a machine without a display: forward the port, or open it from a container)."""

from __future__ import annotations

import ipaddress
import os
import stat
import sys
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

from harness.errors import HarnessError


def report_page(run_path: str | Path) -> Path:
    """The run's report.html, (re)written from run.json when it is absent or older than run.json."""
    from harness.render.html import write_html
    from harness.results.folder import read_run

    folder = Path(run_path)
    if folder.is_file() and folder.name == "report.html":
        return _own_file(folder)
    if folder.is_file():
        folder = folder.parent
    page, run_file = folder / "report.html", folder / "run.json"
    if not run_file.exists():
        raise HarnessError(f"{folder}: no run.json here (view takes a run folder; for a run of several "
                           f"configurations, one of its subfolders)")
    if not page.exists() or page.stat().st_mtime < run_file.stat().st_mtime:
        write_html(read_run(folder), folder)
    return _own_file(page)


def _own_file(page: Path) -> Path:
    """The page, unless it is a link: what is shown or served is the run's own file, nothing it points to."""
    if page.is_symlink():
        raise HarnessError(f"{page}: a symbolic link (to {os.readlink(page)}); view shows a run's own report.html only")
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


def _page_handler(page: Path) -> type[BaseHTTPRequestHandler]:
    """Serves `/<page name>` and nothing else: no other file of the folder, no listing, and not the page
    itself when it has become a link (a symlink could point anywhere on the machine)."""
    served = "/" + page.name

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            data = _page_bytes(page) if self.path.split("?", 1)[0] == served else None
            if data is None:
                self._answer(404, f"not found: this server serves only {served}\n".encode(), "text/plain")
            else:
                self._answer(200, data, "text/html; charset=utf-8")

        def _answer(self, status: int, data: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # one line per request would bury the URL
            pass

    return Handler


def _page_bytes(page: Path) -> bytes | None:
    """The page as it is now, or None when it is gone, not a regular file, or a link."""
    try:
        descriptor = os.open(page, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read() if stat.S_ISREG(os.fstat(handle.fileno()).st_mode) else None


def is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def page_server(page: Path, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server for the one page (it needs nothing else: its styles, script and plots are inline)."""
    try:
        return ThreadingHTTPServer((host, port), _page_handler(page))
    except OSError as exc:
        raise HarnessError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None


def serve_page(page: Path, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve until interrupted; `ready` gets the page's URL once the socket listens."""
    server = page_server(page, host, port)
    with server:
        ready(f"http://{host}:{server.server_address[1]}/{page.name}")
        server.serve_forever()
