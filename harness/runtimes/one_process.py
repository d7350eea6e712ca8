"""What a session over one long-lived runtime process (pi's RPC, a runtime's own server) answers the driver
besides its prompts: the process's last stderr lines, the last error the runtime reported, and its end."""

from __future__ import annotations

from harness.runtimes.process import RuntimeProcess


class OneProcess:
    process: RuntimeProcess
    errors: list[str]

    def stderr_tail(self) -> tuple[str, ...]:
        return tuple(self.process.stderr_tail)

    def last_error(self) -> str | None:
        return self.errors[-1] if self.errors else None

    def close(self) -> None:
        self.process.end()
