"""The command line's shape: every command's help lists its options, shared options come from one place,
the studies never import the render layer, and number formatting has one copy."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.cli.options import SETTING_ALIASES, parse_settings
from harness.render.format import (dash, dollars, fixed, headline_rate, interval, number, percent, rate_percent,
                                   sourced_dollars, wilson_rate)

HARNESS = Path(__file__).parents[1] / "harness"


def _subparsers(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[f"{prefix}{name}"] = sub
                found.update(_subparsers(sub, f"{prefix}{name} "))
    return found


@pytest.mark.parametrize("command", sorted(_subparsers(build_parser())))
def test_help_lists_every_option(command):
    parser = _subparsers(build_parser())[command]
    text = parser.format_help()
    for action in parser._actions:
        for flag in action.option_strings:
            assert flag in text, f"{command} --help misses {flag}"


def test_run_and_simulate_take_the_same_policy_options():
    subs = _subparsers(build_parser())
    flags = {a.flag for a in SETTING_ALIASES} | {"--set", "--policy"}
    for command in ("run", "simulate"):
        assert flags <= {f for a in subs[command]._actions for f in a.option_strings}


def test_aliases_and_set_parse_to_one_vocabulary():
    args = build_parser().parse_args(["simulate", "x", "--reserve", "400", "--set", "tail_cap=300",
                                      "--tail-turns", "2", "--set", "reserve_tokens=1_000"])
    assert parse_settings(args.settings) == (("reserve_tokens", 1000), ("tail_cap_tokens", 300), ("tail_turns", 2))


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_studies_never_import_render_or_cli():
    for path in sorted((HARNESS / "studies").glob("*.py")):
        wrong = {n for n in _imports(path) if n.startswith(("harness.render", "harness.cli"))}
        assert not wrong, f"{path.name} imports {wrong}"


def test_render_never_imports_cli():
    for path in sorted((HARNESS / "render").glob("*.py")):
        assert not {n for n in _imports(path) if n.startswith("harness.cli")}, path.name


def test_number_formatting():
    rate = {"passed": 16, "total": 21, "rate": 0.7619, "wilson95": [0.549, 0.894]}
    assert wilson_rate(rate) == "76.2% [55-89] (16/21)"
    assert wilson_rate(None) == wilson_rate({"rate": None}) == "-"
    assert rate_percent(rate) == "76.2%" and rate_percent(None) == "-"
    assert percent(0.5) == "50.0%" and percent(None) == "-"
    assert dollars(0.018254) == "$0.01825" and dollars(1.5, 4) == "$1.5000" and dollars(None) == "-"
    assert sourced_dollars(0.0, "live") == "$0.00000 (live)" and sourced_dollars(0.1, None) == "$0.10000 (-)"
    assert sourced_dollars(None, "live") == "-"
    assert number(0.4445) == "0.4445" and number(None) == "-"
    assert fixed(2.345, 1) == "2.3" and fixed(None, 2) == "-"
    assert dash(None) == "-" and dash(0.5) == "0.5"
    assert headline_rate({**rate, "cluster95": [0.4, 0.95]}) == "76.2% [55-89] [clustered 40-95] (16/21)"
    assert headline_rate({**rate, "cluster95": None}) == "76.2% [55-89] [clustered -] (16/21)"
    assert headline_rate(None) == "-" and interval(None) == "[-]"
