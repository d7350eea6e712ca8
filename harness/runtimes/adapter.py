"""A runtime adapter: one TOML file that says how to install a real agent runtime, configure it against the
harness's model server, send it a case's user prompts, and tell its requests apart. No Python per runtime:
the driver reads these fields and nothing else (docs/runtimes.md lists them).

Templates use `${name}` placeholders (string.Template), so JSON and TOML braces need no escaping. The driver
fills: bin, home, workspace, base_url, model, window, max_output, prompt, compaction_setting, trigger_share (with
[compaction] assumed_window), and each name of the adapter's [settings] table (its default, or the run's
`--runtime-set NAME=VALUE`).
"""

from __future__ import annotations

import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import InputError

ADAPTERS = Path(__file__).parent / "adapters"
WIRES = ("openai-chat", "responses", "anthropic", "gemini")
MODES = ("rpc", "exec", "http")
SIGNATURE_KINDS = ("compaction", "side", "resume")


@dataclass(frozen=True)
class RuntimeAdapter:
    name: str
    version: str
    wire: str
    npm: str | None
    bin: str
    version_args: tuple[str, ...]
    mode: str
    first: tuple[str, ...]
    next: tuple[str, ...]
    turn_timeout_s: float
    env: dict[str, str]
    files: dict[str, str]
    compaction_on: str
    compaction_off: str
    shell_tools: tuple[str, ...]
    read_tools: tuple[str, ...]
    settings: dict[str, str] = field(default_factory=dict)  # named template values and their defaults
    # A runtime that compacts at a share (`trigger_at`) of a window it assumes from the model's name
    # (`assumed_window`, e.g. Gemini CLI: 0.5 of 1048576) is told `trigger_share`: the share of its assumed window
    # that is `trigger_at` of the case's window, so it compacts where it would on a model with that window.
    assumed_window: int | None = None
    trigger_at: float = 1.0
    trigger: str | None = None  # its compaction rule behind the harness's server (harness.runtimes.window)
    http: dict[str, str] = field(default_factory=dict)  # mode http: its server's routes (runtimes/server_session.py)
    # {kind: {system|user|headers: [...]}}, read by harness/scripted/signatures.py
    signatures: dict[str, Any] = field(default_factory=dict)
    source: str = field(default="", compare=False)

    @property
    def pin(self) -> str:
        return f"{self.name}@{self.version}"


def fill(template: str, values: dict[str, Any], where: str) -> str:
    """A template with its placeholders filled; an unknown one names the adapter field."""
    try:
        return string.Template(template).substitute({k: str(v) for k, v in values.items()})
    except (KeyError, ValueError) as exc:
        raise InputError(where, None, None, f"template placeholder {exc} is not one the driver fills") from None


def with_settings(adapter: RuntimeAdapter, given: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The adapter's settings with the run's values over them; a name it does not declare is a usage error."""
    unknown = [k for k, _ in given if k not in adapter.settings]
    if unknown:
        known = ", ".join(sorted(adapter.settings)) or "none"
        raise InputError("--runtime-set", None, None, f"{adapter.name} has no setting {unknown[0]!r} (its settings: "
                                                      f"{known}; declared in {adapter.source} [settings])")
    return {**adapter.settings, **dict(given)}


def resolve(name: str) -> Path:
    """`pi` names a shipped adapter; a path ending in .toml names the user's own."""
    if name.endswith(".toml") or "/" in name:
        path = Path(name)
        if not path.is_file():
            raise InputError(name, None, None, "no such runtime adapter file")
        return path
    path = ADAPTERS / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in ADAPTERS.glob("*.toml")))
        raise InputError("--runtime", None, None, f"unknown runtime {name!r} (shipped: {known}; or a path to "
                                                  "your own adapter .toml, see docs/runtimes.md)")
    return path


def load(name: str) -> RuntimeAdapter:
    """The adapter for `NAME`, `NAME@VERSION` (the version must be the adapter's pin) or a .toml path."""
    base, _, wanted = name.partition("@") if not name.endswith(".toml") else (name, "", "")
    path = resolve(base)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(str(path), None, None, f"not valid TOML: {exc}") from None
    adapter = parse(data, str(path))
    if wanted and wanted != adapter.version:
        raise InputError("--runtime", None, None,
                         f"{adapter.name}@{wanted}: the adapter pins {adapter.version}; write an adapter for "
                         f"{wanted} (copy {path} and change version and its lockfile)")
    return adapter


def parse(data: dict[str, Any], where: str) -> RuntimeAdapter:
    table = _Table(data, where)
    install, session, compaction, tools = (table.sub(k) for k in ("install", "session", "compaction", "tools"))
    mode = session.choice("mode", MODES)
    first = session.argv("first" if mode == "exec" else "command")
    return RuntimeAdapter(
        name=table.text("name"), version=table.text("version"), wire=table.choice("wire", WIRES),
        npm=install.text("npm", required=False), bin=install.text("bin"),
        version_args=install.argv("version_args"), mode=mode, first=first,
        next=session.argv("next") if mode == "exec" else (),
        turn_timeout_s=float(session.number("turn_timeout_s", 300)),
        env=table.strings("env"), files=table.strings("files"),
        compaction_on=compaction.text("on", allow_empty=True), compaction_off=compaction.text("off", allow_empty=True),
        shell_tools=tools.argv("shell"), read_tools=tools.argv("read", required=False),
        settings=table.strings("settings"), signatures=_signatures(table), source=where,
        assumed_window=_assumed_window(compaction),
        trigger_at=float(compaction.number("trigger_at", 1.0)), trigger=compaction.text("trigger", required=False),
        http=_http(session) if mode == "http" else {})


def _http(session: _Table) -> dict[str, str]:
    """Mode http: the routes of the runtime's own server (harness.runtimes.server_session says what each is)."""
    routes = {key: session.text(key) for key in ("ready", "create", "prompt", "prompt_body")}
    routes.update({key: session.text(key) for key in ("busy", "session_id") if key in session.data})
    return routes


def _assumed_window(compaction: _Table) -> int | None:
    return int(compaction.number("assumed_window", 1)) if "assumed_window" in compaction.data else None


def _signatures(table: _Table) -> dict[str, Any]:
    """The [signatures] table: kinds among SIGNATURE_KINDS; a compaction signature is required (without one
    no summarization request could be told from a turn). Its patterns are checked where they are read."""
    data = table.sub("signatures").data
    unknown = set(data) - set(SIGNATURE_KINDS)
    if unknown:
        raise InputError(table.where, None, "signatures", f"unknown kind(s) {', '.join(sorted(unknown))} "
                                                          f"(one of {', '.join(SIGNATURE_KINDS)})")
    if not isinstance(data.get("compaction"), dict) or not data["compaction"]:
        raise InputError(table.where, None, "signatures.compaction",
                         "required: how this runtime's summarization request is told apart (system, user or headers)")
    return data


@dataclass
class _Table:
    """Typed reads of one TOML table, each failure naming the file and the dotted field."""

    data: dict[str, Any]
    where: str
    prefix: str = ""

    def sub(self, key: str) -> _Table:
        value = self.data.get(key, {})
        if not isinstance(value, dict):
            raise InputError(self.where, None, self._name(key), "must be a table")
        return _Table(value, self.where, self._name(key) + ".")

    def _name(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def _fail(self, key: str, problem: str) -> InputError:
        return InputError(self.where, None, self._name(key), problem)

    def text(self, key: str, required: bool = True, allow_empty: bool = False) -> str | None:
        value = self.data.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or (not value and not allow_empty):
            raise self._fail(key, "required (a string)" if value is None else "must be a non-empty string")
        return value

    def choice(self, key: str, options: tuple[str, ...]) -> str:
        value = self.text(key)
        if value not in options:
            raise self._fail(key, f"{value!r} is not one of {', '.join(options)}")
        return value

    def number(self, key: str, default: float) -> float:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise self._fail(key, "must be a positive number")
        return value

    def argv(self, key: str, required: bool = True) -> tuple[str, ...]:
        value = self.data.get(key)
        if (value is None or value == []) and not required:
            return ()
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise self._fail(key, "required (a non-empty list of strings)")
        return tuple(value)

    def strings(self, key: str) -> dict[str, str]:
        value = self.data.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise self._fail(key, "must be a table of strings")
        return dict(value)
