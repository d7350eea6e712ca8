"""Leave one repository out: a builtin summarizer rule judged on the repositories it was not written from.

    .venv/bin/python tools/holdout.py [--rule NAME] [--out results/holdout] [--from-runs | --reuse-common] [--json]

Runs the real pool at its real compaction points (harness.studies.real's arms): the real summaries, the
builtin with every rule, the strongest controls (--controls: the line extracts), the builtin with NAME switched
off (HARNESS_BUILTIN_RULES_OFF), and prints `retained` per repository, in pool and held out (all but the
repository NAME was written from, harness/models/builtin/rules.py), with exact McNemar p and the case-clustered
interval of the rule's difference, of the builtin against the real summaries and against the strongest
control. Without --rule: the builtin against the real summaries and the controls per repository. --list names
the rules and their origins.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.cases import discover  # noqa: E402
from harness.errors import HarnessError  # noqa: E402
from harness.models.builtin.rules import OFF_VARIABLE, RULES  # noqa: E402
from harness.render.real import ArmProgress  # noqa: E402
from harness.studies.holdout import WITH, WITHOUT, holdout_study, repository_of  # noqa: E402
from harness.studies.real import REAL, Arm, arms, read_arms, run_arms  # noqa: E402


@contextmanager
def rules_off(names: str):
    before = os.environ.get(OFF_VARIABLE)
    os.environ[OFF_VARIABLE] = names
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(OFF_VARIABLE, None)
        else:
            os.environ[OFF_VARIABLE] = before


# The strongest controls on the real pool (docs/evaluation.md): the builtin is judged against the best of them.
CONTROLS = ("line-picker", "last-lines", "user-messages")


def chosen_arms(rule: str | None, controls: tuple[str, ...] = ()) -> tuple[Arm, ...]:
    """The real summaries, the builtin with every rule, the chosen controls, and the builtin without `rule`
    (last: it is the one arm `--reuse-common` runs again)."""
    real, builtin, *others = arms()
    with_all = replace(builtin, name=WITH)
    picked = tuple(arm for arm in others if arm.name in controls)
    if rule is None:
        return real, with_all, *picked
    return real, with_all, *picked, replace(builtin, name=WITHOUT, slug=f"without-{rule.replace(',', '+')}")


def run(cases, out: Path, chosen: tuple[Arm, ...], rule: str | None, as_json: bool, reuse: bool) -> dict:
    progress = ArmProgress(as_json=as_json)
    runs = {}
    common = chosen[:-1] if rule is not None else chosen
    if reuse:
        runs |= read_arms(out, common)
    else:
        with rules_off(""):
            runs |= run_arms(cases, out, common, progress)
    if rule is not None:
        with rules_off(rule):
            runs |= run_arms(cases, out, chosen[-1:], progress)
    return runs


def _figure(row: dict, arm: str) -> str:
    return f"{row['arms'][arm]}/{row['full']}"


def _p(compared: dict | None) -> str:
    if compared is None:
        return ""
    low_high = compared["difference"]
    interval = f", diff {low_high[0]:+.3f} [{low_high[1]:+.3f}, {low_high[2]:+.3f}]" if low_high else ""
    return f"{compared['only_b']} gained, {compared['only_a']} lost, p = {compared['p']:.3g}{interval}"


def show(study: dict, rules: list[str]) -> None:
    for name in rules:
        print(f"rule {name}: {RULES[name].what} (written from {RULES[name].source})")
    has_rule = WITHOUT in study["arms"]
    rows = [*study["repositories"], study["in_pool"]] + ([study["held_out"]] if has_rule else [])
    for row in rows:
        update = row["update"]
        line = (f"{row['name']}: real {_figure(row, REAL)}, builtin {_figure(row, WITH)}"
                + (f", without the rule {_figure(row, WITHOUT)}" if has_rule else "")
                + f"; update real {update[REAL]}/{update['full']} builtin {update[WITH]}"
                + (f" without {update[WITHOUT]}" if has_rule else ""))
        print(line)
        if has_rule:
            print(f"    the rule: {_p(row['rule'])}")
        print(f"    builtin against the real summaries: {_p(row['against_real'])}")
        if row.get("against_strongest"):
            strongest = row["against_strongest"]
            print(f"    builtin {_figure(row, WITH)} against the strongest control, {strongest['control']} "
                  f"{_figure(row, strongest['control'])}: {_p(strongest)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rule", help="the rule to judge (see --list); several, comma-separated, or 'all', "
                                       "are switched off together and held out from every origin of theirs")
    parser.add_argument("--list", action="store_true", help="name the rules, their sessions and repositories")
    parser.add_argument("--pool", default="real")
    parser.add_argument("--cases-dir", default=str(ROOT / "cases"))
    parser.add_argument("--out", default="results/holdout")
    parser.add_argument("--from-runs", action="store_true", help="read the runs already in --out")
    parser.add_argument("--reuse-common", action="store_true",
                        help="read the real summaries' and the builtin's runs from --out, run only the one without the rule")
    parser.add_argument("--controls", default=",".join(CONTROLS),
                        help=f"control arms to judge the builtin against (default {','.join(CONTROLS)}; '' for none)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for rule in RULES.values():
            print(f"{rule.name}: {rule.what} (written from {rule.source})")
        return 0
    try:
        rules = [] if args.rule is None else list(RULES) if args.rule == "all" else args.rule.split(",")
        if unknown := [name for name in rules if name not in RULES]:
            raise HarnessError(f"--rule {','.join(unknown)}: no such rule; known: {', '.join(RULES)}, all")
        cases = [c for c in discover(args.cases_dir) if c.pool == args.pool]
        if not cases:
            raise HarnessError(f"no case of pool {args.pool!r} under {args.cases_dir}")
        repositories = {c.id: repository_of(c) for c in cases}
        out = Path(args.out)
        switched = ",".join(rules) or None
        chosen = chosen_arms(switched, tuple(c for c in args.controls.split(",") if c))
        runs = read_arms(out, chosen) if args.from_runs else run(cases, out, chosen, switched, args.json, args.reuse_common)
        origins = frozenset(RULES[name].origin for name in rules if RULES[name].origin)
        study = holdout_study(runs, repositories, origins)
    except HarnessError as error:
        print(error, file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(study))
    else:
        show(study, rules)
    return 0


if __name__ == "__main__":
    sys.exit(main())
