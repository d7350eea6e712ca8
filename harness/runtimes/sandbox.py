"""A runtime's sandbox: every runtime process (the version check included) runs under bubblewrap, in its own
network namespace whose only interface is loopback, its own PID namespace (when its first process ends, the
kernel ends every process it left), with the system folders and the runtime's install read-only and the case's
scratch folder as the one place it can write; nothing else of the machine (your home, other projects, /tmp) is
in its view.

The harness's model server listens on the host's loopback, which a new network namespace cannot reach: `bridge`
serves it also on a Unix socket in the scratch folder (a filesystem socket crosses network namespaces), and
inside, forward.py listens on 127.0.0.1 at the server's own port (so the runtime is configured with the same
URL) and relays to that socket. Any other address simply fails to connect. A runtime driven through its own
server (mode http) listens inside on `expose`; forward.py relays the socket `served` in the scratch folder to it.

What this does not do (docs/runtimes.md): it is not a container; the kernel and the system folders are shared
(read-only), and a runtime running as root keeps root's file access (not its capabilities)."""

from __future__ import annotations

import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from harness.errors import HarnessError

BWRAP = "bwrap"
FORWARDER = Path(__file__).with_name("forward.py")
FORWARDER_INSIDE = "/run/harness-forward.py"
SOCKET_NAME = "model.sock"
SERVED_NAME = "served.sock"
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys")
# Of /etc, what programs need to start and run (names, libraries, time zone, certificates), not its secrets.
ETC = ("passwd", "group", "nsswitch.conf", "hosts", "host.conf", "localtime", "timezone", "alternatives", "ssl",
       "ca-certificates", "ca-certificates.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "mime.types",
       "os-release", "debian_version", "resolv.conf")
INSTALL_HINT = "install bubblewrap (Debian: apt-get install -y bubblewrap)"
OFF_HINT = "or pass --sandbox off to drive the runtime unconfined (it can then reach the network and read your files)"


@dataclass(frozen=True)
class Sandbox:
    """Where one drive's runtime processes run: `scratch` writable, `read_only` (its install) visible; `port`
    the server's loopback port relayed inside (None: no server, as for the version check); `expose` the port
    a runtime's own server listens on inside, reached from outside through `served`."""

    scratch: Path
    read_only: tuple[Path, ...] = ()
    port: int | None = None
    expose: int | None = None

    @property
    def socket(self) -> Path:
        return self.scratch / SOCKET_NAME

    @property
    def served(self) -> Path:
        return self.scratch / SERVED_NAME

    def command(self, argv: list[str], cwd: Path, status: Path) -> list[str]:
        """`argv` as run in the sandbox, from `cwd`; with a port, behind forward.py, which writes `status`."""
        exposed = [str(self.served), str(self.expose)] if self.expose is not None else []
        inner = argv if self.port is None else [
            _interpreter(), "-I", "-S", FORWARDER_INSIDE, str(self.socket), str(self.port), str(status), *exposed, "--",
            *argv]
        return [BWRAP, *self.binds(), "--chdir", str(cwd), "--", *inner]

    def binds(self) -> list[str]:
        # as root, bubblewrap keeps every capability unless told: a root runtime could then mount or make devices
        args = ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
                "--cap-drop", "ALL", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run"]
        for path in SYSTEM:
            args += _system(Path(path))
        for name in ETC:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        for path in dict.fromkeys((*self.read_only, Path(sys.base_prefix))):
            if not any(path.is_relative_to(s) for s in SYSTEM):
                args += ["--ro-bind-try", str(path), str(path)]
        if self.port is not None:
            args += ["--ro-bind", str(FORWARDER), FORWARDER_INSIDE]
        return args + ["--bind", str(self.scratch), str(self.scratch)]


def _system(path: Path) -> list[str]:
    """A system folder as the host has it: merged-/usr systems make /bin, /lib ... links into /usr."""
    if path.is_symlink():
        return ["--symlink", str(path.readlink()), str(path)]
    return ["--ro-bind", str(path), str(path)] if path.is_dir() else []


def _interpreter() -> str:
    """The harness's own Python, as a file (a venv's python is a link into the base installation)."""
    return str(Path(sys.executable).resolve())


@lru_cache(maxsize=1)
def check() -> str:
    """bubblewrap's version, after making one sandbox as a drive would (the kernel may refuse namespaces even
    where bwrap is installed); else a one-line error saying what to do."""
    found = shutil.which(BWRAP)
    if found is None:
        raise HarnessError(f"cannot sandbox the runtime: bubblewrap ({BWRAP}) is not on PATH; {INSTALL_HINT}, "
                           f"{OFF_HINT}")
    with tempfile.TemporaryDirectory(prefix="ch-sandbox-check-") as scratch:
        box = Sandbox(Path(scratch))
        try:
            done = subprocess.run(box.command([_interpreter(), "-I", "-c", "pass"], Path(scratch), Path(scratch)),
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise HarnessError(f"cannot sandbox the runtime: {BWRAP} failed: {exc}; {OFF_HINT}") from None
    if done.returncode != 0:
        said = " ".join(done.stderr.split())[:300]
        raise HarnessError(f"cannot sandbox the runtime: {BWRAP} could not make its namespaces here ({said}); "
                           f"{OFF_HINT}")
    version = subprocess.run([BWRAP, "--version"], capture_output=True, text=True, timeout=60).stdout.split()
    return f"bubblewrap {version[-1] if version else 'unknown'}"


def off_warning() -> str:
    return ("warning: --sandbox off: the runtime runs unconfined, with your network and every file you can read; "
            "a case's planted configuration is still refused, but nothing else stands between the runtime and your "
            "machine")


class _UnixServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A runtime that hung up mid-request is not the server's error: no traceback on the terminal."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def bridge(box: Sandbox, handler: type[socketserver.BaseRequestHandler]) -> Iterator[None]:
    """The harness's server (its request handler) also served on the Unix socket in the scratch folder, which
    forward.py relays to inside the sandbox, while the drive lasts."""
    try:
        server = _UnixServer(str(box.socket), handler)
    except OSError as exc:
        raise HarnessError(f"cannot make the sandbox's socket {box.socket}: {exc.strerror or exc} (a shorter "
                           "TMPDIR keeps it under the 107-character limit)") from None
    thread = threading.Thread(target=server.serve_forever, name="sandbox-bridge", daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
