"""Serving the emulator: in-process as an httpx2 transport, or on loopback in a background thread."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import httpx2

from harness.models.emulator.core import Emulator, error_reply
from harness.models.emulator.faults import EmulatorError, EmulatorTimeout
from harness.redact import redact


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


# A body past this is refused with 413 before it is read (Anthropic's documented request limit is 32 MB).
MAX_BODY_BYTES = 32 * 1024 * 1024
# Connections the kernel holds while every thread is busy: the 50 concurrent clients docs/emulator.md promises
# with room to spare (the standard library's 5 resets some of 50 clients that connect at once).
BACKLOG = 128
# A client that stops sending mid-request frees its thread after this long (real clients close idle
# keep-alive connections well before: 4 to 90 s).
IDLE_TIMEOUT_S = 300.0
Log = Callable[[str], None]


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _handler_for(emulator: Emulator, log: Log) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = IDLE_TIMEOUT_S

        def _exchange(self, method: str) -> None:
            headers = dict(self.headers.items())
            try:
                status, answer, payload = emulator.handle(method, self.path, self._body(), headers)
            except EmulatorTimeout:
                self.close_connection = True
                return
            except EmulatorError as err:  # the body could not be read whole
                self.close_connection = True
                status, answer, payload = error_reply(self.path, headers, err)
            except Exception as exc:  # a fault of the emulator's (or its responder's): a 500, one line logged
                problem = redact(" ".join(f"{type(exc).__name__}: {exc}".split()))[:300]
                log(f"emulator: {method} {self.path.split('?')[0][:200]}: internal error ({problem})")
                status, answer, payload = error_reply(self.path, headers, EmulatorError(
                    500, "api_error", f"internal error in the emulator ({type(exc).__name__})"))
            self._send(status, answer, payload)

        def _body(self) -> bytes:
            """The request body (Content-Length or chunked), at most MAX_BODY_BYTES; anything else is an
            EmulatorError, after which the connection closes (where the next request starts is unknown)."""
            if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                return self._chunked()
            text = (self.headers.get("content-length") or "0").strip()
            if not text.isdigit():
                raise EmulatorError(400, "invalid_request_error", "content-length: not a byte count")
            return self._read(int(text))

        def _chunked(self) -> bytes:
            body = b""
            while True:
                size_line = self.rfile.readline(100).split(b";")[0].strip()
                try:
                    size = int(size_line, 16)
                except ValueError:
                    raise EmulatorError(400, "invalid_request_error", "body: a bad chunk size") from None
                if size == 0:
                    while self.rfile.readline(1000).strip():  # trailers, then the blank line
                        pass
                    return body
                body += self._read(size, len(body))
                self.rfile.readline(3)

        def _read(self, size: int, already: int = 0) -> bytes:
            if size + already > MAX_BODY_BYTES:
                raise EmulatorError(413, "request_too_large", f"body: more than {MAX_BODY_BYTES} bytes")
            data = self.rfile.read(size)
            if len(data) < size:
                raise EmulatorError(400, "invalid_request_error", f"body: cut short ({len(data)} of {size} bytes)")
            return data

        def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            if self.close_connection:
                self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(payload)

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """A request http.server cannot parse (bad request line, unsupported method, header too long):
            the wire's JSON error shape, not the standard library's HTML page."""
            self.close_connection = True
            path = getattr(self, "path", "") or ""
            headers = dict(self.headers.items()) if getattr(self, "headers", None) is not None else {}
            kind = "invalid_request_error" if code < 500 else "api_error"
            self._send(*error_reply(path, headers, EmulatorError(code, kind, message or f"HTTP {code}")))

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
    request_queue_size = BACKLOG
    daemon_threads = True
    log: Log = staticmethod(_stderr_line)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a runtime abandoning a held request to retry) is not an error of the server's;
        anything else is one line, never a traceback on the user's terminal."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        self.log(f"emulator: connection from {client_address[0]}: {type(exc).__name__}: {exc}"[:300])


class EmulatorServer:
    """The emulator on loopback, in a background thread: `with EmulatorServer(port=0) as server: server.url`."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1", emulator: Emulator | None = None,
                 log: Log = _stderr_line):
        self.emulator = emulator or Emulator()
        self.httpd = _Server((host, port), _handler_for(self.emulator, log))
        self.httpd.log = log
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


def serve(port: int, host: str = "127.0.0.1", windows: dict[str, int] | None = None,
          ready: Callable[[str], None] | None = None) -> None:
    """Serve every wire on host:port until interrupted (`compaction-harness serve --port N`). OpenAI clients
    use base_url http://HOST:PORT/v1, Anthropic and Gemini clients http://HOST:PORT. `windows`: model ->
    window ("*": any model), enforced with each provider's error; `ready` gets the URL once it listens."""
    server = EmulatorServer(port, host, Emulator(windows=windows))
    try:
        if ready is not None:
            ready(server.url)
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
