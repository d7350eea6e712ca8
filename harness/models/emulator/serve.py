"""Serving the emulator: in-process as an httpx2 transport, or on loopback in a background thread."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

from harness.models.emulator.core import Emulator
from harness.models.emulator.faults import EmulatorTimeout


class EmulatorTransport(httpx2.BaseTransport):
    def __init__(self, emulator: Emulator | None = None):
        self.emulator = emulator or Emulator()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            path = request.url.raw_path.decode("ascii")  # the query too: Gemini streams on `?alt=sse`
            status, headers, body = self.emulator.handle(request.method, path, request.read(), dict(request.headers))
        except EmulatorTimeout:
            raise httpx2.ReadTimeout("emulator: injected timeout", request=request) from None
        return httpx2.Response(status, headers=headers, content=body, request=request)


def _handler_for(emulator: Emulator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _exchange(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            try:
                status, headers, payload = emulator.handle(method, self.path, body, dict(self.headers.items()))
            except EmulatorTimeout:
                self.close_connection = True
                return
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            self._exchange("POST")

        def do_GET(self) -> None:  # noqa: N802
            self._exchange("GET")

        def do_DELETE(self) -> None:  # noqa: N802
            self._exchange("DELETE")

        def do_PUT(self) -> None:  # noqa: N802
            self._exchange("PUT")

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the CLI reports, not the server
            return None

    return Handler


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a runtime abandoning a held request to retry) is not an error of the server's:
        no traceback on the user's terminal. Anything else is printed as before."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class EmulatorServer:
    """The emulator on loopback, in a background thread: `with EmulatorServer(port=0) as server: server.url`."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1", emulator: Emulator | None = None):
        self.emulator = emulator or Emulator()
        self.httpd = _Server((host, port), _handler_for(self.emulator))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> EmulatorServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(port: int, host: str = "127.0.0.1", windows: dict[str, int] | None = None) -> None:
    """Serve every wire on host:port until interrupted (`compaction-harness serve --port N`). OpenAI clients
    use base_url http://HOST:PORT/v1, Anthropic and Gemini clients http://HOST:PORT. `windows`: model ->
    window ("*": any model), enforced with each provider's error."""
    server = EmulatorServer(port, host, Emulator(windows=windows))
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
