"""Every option more than one command takes, declared once and added to each subparser from here.

Policy settings have one vocabulary, the field names of PolicyConfig: `--set reserve_tokens=8192`. The
short flags (`--reserve 8192`, `--window N`, ...) are aliases of `--set`: they land in the same ordered list
(the last value of a setting wins), so help and errors name the setting, and a command gets the same
configuration whichever spelling it was given.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, fields
from typing import Any, Sequence

from harness.cases.schema import POOLS, Case
from harness.errors import HarnessError
from harness.policy import PolicyConfig
from harness.policy.base import MODES

MODEL_SPECS = "builtin, openai:MODEL, anthropic:MODEL, openai:MODEL@BASE_URL, PROVIDER:MODEL@emulator"
RECORD_MODES = ("none", "once", "new", "all")


# ---------------------------------------------------------------------------------------------
# policy settings


@dataclass(frozen=True)
class SettingArg:
    """One policy setting as given, in command-line order: `flag` is --set or the alias used, `pair` its
    KEY=VALUE (an alias's value under its setting's name)."""

    flag: str
    pair: str


@dataclass(frozen=True)
class SettingAlias:
    flag: str
    setting: str  # a PolicyConfig field
    help: str


SETTING_ALIASES = (
    SettingAlias("--window", "context_window", "the context window in tokens (default: the case's); with --runtime, "
                                               "`recorded`: per case, the window at which the runtime's own trigger "
                                               "fires where the recorded session compacted"),
    SettingAlias("--max-output", "max_output_tokens", "the model's max output tokens (default: the case's)"),
    SettingAlias("--reserve", "reserve_tokens", "compact when the context reaches window - reserve (default 16384)"),
    SettingAlias("--tail-turns", "tail_turns", "turns kept verbatim after a compaction (default 3)"),
    SettingAlias("--tail-cap", "tail_cap_tokens", "most tokens the kept turns may hold (default 16384)"),
    SettingAlias("--mode", "mode", "read_write (default), lookup or off"),
    SettingAlias("--summary-tokens", "summary_tokens", "the summarizer's output budget (default 4096)"),
)
# `--set reserve=N` is taken too: each alias flag without its dashes names its setting
SETTING_KEY_ALIASES = {a.flag[2:].replace("-", "_"): a.setting for a in SETTING_ALIASES}


class SettingAction(argparse.Action):
    """Appends a SettingArg to `settings`: `--set KEY=VALUE` as given, an alias as its setting's pair."""

    def __init__(self, *args: Any, setting: str | None = None, **kwargs: Any) -> None:
        self.setting = setting
        super().__init__(*args, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        entry = (SettingArg("--set", str(values)) if self.setting is None
                 else SettingArg(option_string or self.setting, f"{self.setting}={values}"))
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), entry])


def add_policy_options(parser: argparse.ArgumentParser, summary_tokens_note: str = "") -> None:
    """--policy, --set and the setting aliases."""
    parser.add_argument("--policy", action="append",
                        help="policy name (repeatable: one configuration per policy; default: default)")
    parser.add_argument("--set", action=SettingAction, dest="settings", metavar="KEY=VALUE",
                        help=f"a policy setting (repeatable): {', '.join(setting_names())}; the flags below "
                             f"are aliases of it")
    for alias in SETTING_ALIASES:
        note = summary_tokens_note if alias.setting == "summary_tokens" else ""
        metavar = "MODE" if alias.setting == "mode" else "N"
        parser.add_argument(alias.flag, action=SettingAction, dest="settings", setting=alias.setting, metavar=metavar,
                            choices=MODES if alias.setting == "mode" else None,
                            help=f"--set {alias.setting}={metavar}: {alias.help}{note}")
    parser.set_defaults(settings=[])


def setting_names() -> list[str]:
    return sorted(f.name for f in fields(PolicyConfig))


def parse_settings(entries: Sequence[SettingArg]) -> tuple[tuple[str, Any], ...]:
    """The settings in PolicyConfig's vocabulary, typed, one value each (the last given wins)."""
    known = setting_names()
    settings: dict[str, Any] = {}
    for entry in entries:
        key, sep, value = entry.pair.partition("=")
        key = SETTING_KEY_ALIASES.get(key.strip(), key.strip())
        if not sep or key not in known:
            raise HarnessError(f"--set {entry.pair!r}: expected KEY=VALUE with KEY one of {', '.join(known)}")
        settings[key] = typed_setting(entry, key, value)
    return tuple(settings.items())


BOOLEANS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


def typed_setting(entry: SettingArg, key: str, value: str) -> Any:
    if key == "mode":
        return value
    if key == "enabled":  # strictly: a typo never turns compaction off
        flag = BOOLEANS.get(value.strip().lower())
        if flag is None:
            given = f"--set {entry.pair!r}" if entry.flag == "--set" else f"{entry.flag} {value!r}"
            raise HarnessError(f"{given}: enabled takes true or false")
        return flag
    try:
        return int(value.replace("_", ""))
    except ValueError:
        given = f"--set {entry.pair!r}" if entry.flag == "--set" else f"{entry.flag} {value!r}"
        raise HarnessError(f"{given}: {key} takes an integer") from None


# ---------------------------------------------------------------------------------------------
# models, cassettes, prices


def add_model(parser: argparse.ArgumentParser, flag: str, what: str, *, repeatable: bool = False,
              required: bool = False) -> None:
    """A model spec option: --model, --alt-model, --summarizer, --answerer, --judge."""
    parser.add_argument(flag, action="append" if repeatable else "store", required=required, metavar="SPEC",
                        help=what)


def add_record_options(parser: argparse.ArgumentParser, *, record_default: str | None, record_help: str,
                       cassettes_default: str | None, cassettes_help: str) -> None:
    parser.add_argument("--record-mode", choices=RECORD_MODES, default=record_default, help=record_help)
    parser.add_argument("--cassettes", default=cassettes_default, help=cassettes_help)


def add_instruction(parser: argparse.ArgumentParser, *, repeatable: bool) -> None:
    parser.add_argument("--instruction", action="append" if repeatable else "store", metavar="FILE",
                        help="the summary instruction sent after the history, in place of the shipped one (`default`"
                             "; copy harness/compaction/instruction.md to start): {sections} and {budget} are filled"
                             + (" (repeatable: one configuration each, compared side by side)" if repeatable else ""))


def instruction_text(value: str) -> tuple[str, str]:
    """(text, name) of an --instruction: `default` is the shipped one; a file is read as UTF-8, its keys
    removed (scrub) before it is sent or recorded."""
    from harness.compaction.summarizer import SUMMARY_INSTRUCTION
    from harness.redact import scrub
    from harness.input_file import SETTINGS_BYTES
    from harness.validate import read_text

    if value == "default":
        return SUMMARY_INSTRUCTION, "default"
    text = read_text(value, "an instruction file", "--instruction: cannot read the file", SETTINGS_BYTES).rstrip("\n")
    if not text.strip():
        raise HarnessError(f"--instruction {value}: the file is empty")
    return scrub(text), value


def add_prices(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prices", metavar="FILE", help="a TOML price file over the shipped table")


def add_concurrency(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--concurrency", type=positive_int, default=1, help="cases in flight at once (API models)")


# ---------------------------------------------------------------------------------------------
# case selection and output


def add_case_selection(parser: argparse.ArgumentParser, *, positional: bool = False) -> None:
    """--cases (or positional case ids) and --cases-dir (commands that filter by pool add `add_pool`)."""
    if positional:
        parser.add_argument("cases", nargs="*", help="case ids or folders (default: all)")
    else:
        parser.add_argument("--cases", action="append", help="case id, folder or glob (repeatable; default: all)")
    add_cases_dir(parser)


def add_pool(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pool", action="append", choices=POOLS, metavar="NAME",
                        help=f"only the cases of this pool (repeatable): {', '.join(POOLS)}")


def selected_cases(args: argparse.Namespace) -> list[Case]:
    """The cases a command was pointed at: --cases (or positional ids) within --cases-dir, then --pool."""
    from harness.cases import discover

    cases = discover(args.cases_dir, getattr(args, "cases", None) or None)
    if not getattr(args, "pool", None):
        return cases
    chosen = [case for case in cases if case.pool in args.pool]
    if not chosen:
        raise HarnessError(f"--pool {', '.join(args.pool)}: none of the {len(cases)} selected cases is in it "
                           f"(their pools: {', '.join(sorted({case.pool for case in cases}))})")
    return chosen


def add_cases_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases-dir", default="cases", help="the case library (default: %(default)s)")


def add_json(parser: argparse.ArgumentParser, what: str = "one JSON document on stdout") -> None:
    parser.add_argument("--json", action="store_true", help=what)


def add_markdown(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--markdown", metavar="FILE", type=output_file, help=what)


def add_plot(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--plot", metavar="FILE.png", type=output_file, help=what)


# ---------------------------------------------------------------------------------------------
# argument types: a bad number is a usage error (exit 2) naming the option


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, not {text!r}")
    return value


def output_file(text: str) -> str:
    """An output file option, checked when parsed so a bad target fails before any work: not a folder, and
    its folder is made when missing."""
    from harness.validate import writable_file

    try:
        writable_file(text, "")
    except HarnessError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None
    return text


def bounded_int(low: int, high: int):
    """An argparse type: a whole number from `low` to `high`."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a whole number of {low} or more, at most {high}, not {text!r}")
        return value

    return parse


def bounded_float(low: float, high: float, *, open_low: bool = False):
    """An argparse type: a finite number from `low` to `high` (above `low` when `open_low`)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not (low < value if open_low else low <= value) or value > high:
            bound = f"above {low:g}" if open_low else f"from {low:g}"
            raise argparse.ArgumentTypeError(f"expected a number {bound} to {high:g}, not {text!r}")
        return value

    return parse


positive_float = bounded_float(0.0, 86400.0, open_low=True)
rate = bounded_float(0.0, 1.0)


def port_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, not {text!r}")
    return value
