"""Run inside a runtime's sandbox (sandbox.py), by the harness's own interpreter, as the runtime's parent:
listen on 127.0.0.1:PORT of the sandbox's own loopback and relay each connection to the harness's model server
through a Unix socket in the scratch folder (a filesystem socket crosses network namespaces; a TCP port does
not); start the runtime; record how it ended (an exit code, or the signal that killed it) in STATUS. With
EXPOSE and INNER, the other way too: a runtime that is itself a server (opencode serve) listens on 127.0.0.1:INNER
inside, and each connection to the Unix socket EXPOSE (made by the harness outside) is relayed to it.

    python -I -S forward.py SOCKET PORT STATUS [EXPOSE INNER] -- RUNTIME ARGV...

Standard library only: nothing of the harness is visible inside the sandbox but this one file. It starts once per
runtime process (Codex: once per prompt), so it imports little (no site, no json, no subprocess): its start is
most of its CPU."""

from __future__ import annotations

import os
import resource
import signal
import socket
import sys
import threading
from typing import Callable

CHUNK = 1 << 16


def pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy one direction until its end, then half-close the other side (HTTP keep-alive needs both ways)."""
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def relay(client: socket.socket, connect: Callable[[], socket.socket]) -> None:
    """One connection relayed both ways to a new connection `connect` makes; both closed at the end."""
    try:
        upstream = connect()
    except OSError as exc:  # said on the runtime's stderr, so that a failed case names it
        print(f"sandbox: cannot relay a connection: {exc}", file=sys.stderr, flush=True)
        client.close()
        return
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def serve(listener: socket.socket, connect: Callable[[], socket.socket]) -> None:
    """Relay every connection `listener` accepts, each in its own thread, until the listener is shut down."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=relay, args=(client, connect), daemon=True).start()


def _unix(path: str) -> Callable[[], socket.socket]:
    def connect() -> socket.socket:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            upstream.close()
            raise
        return upstream
    return connect


def _inner(port: int) -> Callable[[], socket.socket]:
    def connect() -> socket.socket:
        return socket.create_connection(("127.0.0.1", port))
    return connect


def main(argv: list[str]) -> int:
    assert "--" in argv, "usage: forward.py SOCKET PORT STATUS [EXPOSE INNER] -- ARGV..."
    split = argv.index("--")
    (path, port, status, *exposed), command = argv[:split], argv[split + 1:]
    assert command and len(exposed) in (0, 2), "usage: forward.py SOCKET PORT STATUS [EXPOSE INNER] -- ARGV..."
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(64)
    threading.Thread(target=serve, args=(listener, _unix(path)), daemon=True).start()
    if exposed:  # the runtime's own server, reached from outside through a socket in the scratch folder
        outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        outside.bind(exposed[0])
        outside.listen(64)
        threading.Thread(target=serve, args=(outside, _inner(int(exposed[1]))), daemon=True).start()
    try:
        child = os.posix_spawnp(command[0], command, os.environ)
    except OSError as exc:
        print(f"sandbox: cannot start {command[0]}: {exc}", file=sys.stderr)
        return 127
    # a stop is sent to the whole process group: the runtime gets it too; this parent only waits
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])  # negative: killed by that signal
    # the CPU time of the runtime and of this relay: bubblewrap's PID namespace keeps it from the harness's
    # own count of its children's
    runtime, relay = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    with open(status, "w", encoding="utf-8") as out:  # JSON, written by hand: json's import costs a start more
        out.write(f'{{"returncode": {code}, "cpu_seconds": {{"runtime": {runtime.ru_utime + runtime.ru_stime:.3f}, '
                  f'"relay": {relay.ru_utime + relay.ru_stime:.3f}}}}}')
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
