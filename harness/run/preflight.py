"""Everything `run` can check before the first case starts: a bad option or case is exit 2 at once, not
one error record per case after the work (and the money) of the others.

Checked: each configuration as `plan_run` would (specs, judge, control, prices, keys), its policy name and
settings on every case (a `--set window=-5` or `--policy bogus`), the cassette folder, and every case's
session and probe points (an empty session, a `planted_at` past the end), which `cases validate` reports.
"""

from __future__ import annotations

from pathlib import Path

from harness.cases.schema import Case
from harness.cases.toml import validate_case
from harness.errors import HarnessError
from harness.policy import make_policy
from harness.models import cassette_path
from harness.run.config import RUN_CASSETTES, RunConfig, RunPlan, plan_run, policy_config

MAX_REPEAT = 100  # each repeat is a full pass over the cases; more is a typo, not a study


def preflight(cases: list[Case], configs: list[RunConfig], repeat: int = 1) -> list[RunPlan]:
    """The plan of each configuration, once every case and option is known to be usable."""
    if not cases:
        raise HarnessError("no cases to run: check --cases and --cases-dir")
    if not 1 <= repeat <= MAX_REPEAT:
        raise HarnessError(f"--repeat {repeat}: choose 1 to {MAX_REPEAT}")
    for case in cases:
        check_case(case)
    plans = [plan_run(config) for config in configs]
    for plan in plans:
        check_cassettes(plan, cases)
        for case in cases:
            check_policy(plan.config, case)
    return plans


def check_policy(config: RunConfig, case: Case) -> None:
    """The policy the run asks for, made with the settings given over the case's (already checked)."""
    try:
        make_policy(config.policy, policy_config(case, config)).check_ready()
    except HarnessError as exc:
        if str(exc).startswith("policy "):  # it names the policy already
            raise
        given = ", ".join(f"{key}={value}" for key, value in config.settings)
        raise HarnessError(f"policy {config.policy}" + (f" with {given}" if given else "") +
                           f" on case {case.id}: {exc}") from None


def case_policy_problem(case: Case) -> str | None:
    """The case's own [policy] values as `run` reads them (`cases validate` reports the same)."""
    try:
        make_policy(RunConfig().policy, policy_config(case, RunConfig()))
    except HarnessError as exc:
        return f"{case.directory / 'case.toml'}: policy: {exc}"
    return None


def check_case(case: Case) -> None:
    """The case's session reads, holds what its probes point at, and its [policy] values are usable."""
    if not case.session.messages:
        raise HarnessError(f"{case.directory / case.session_file}: the session has no messages: case {case.id} "
                           f"has nothing to compact")
    problems = validate_case(case) + [p for p in [case_policy_problem(case)] if p]
    if problems:
        more = f" (and {len(problems) - 1} more; see `cases validate`)" if len(problems) > 1 else ""
        raise HarnessError(problems[0] + more)


def check_cassettes(plan: RunPlan, cases: list[Case]) -> None:
    """A cassette folder that is a file fails here, not on every case's first request; so does a replay
    (`--record-mode none`) of a model no chosen case has a cassette of: nothing of it was ever recorded."""
    if all(spec.provider == "builtin" for _, spec in plan.specs):
        return
    folder = Path(plan.config.cassettes)
    if folder.exists() and not folder.is_dir():
        raise HarnessError(f"--cassettes {folder}: is a file; give a folder")
    if plan.config.record_mode != "none" or plan.config.cassettes == RUN_CASSETTES:
        return
    for spec in (text for text, parsed in plan.specs if parsed.provider != "builtin"):
        if not any(cassette_path(folder, case.id, spec).exists() for case in cases):
            example = cassette_path(folder, cases[0].id, spec)
            raise HarnessError(f"--record-mode none replays cassettes, and {folder} holds none of {spec} for the "
                               f"{len(cases)} chosen case(s) (e.g. {example} does not exist): record them first, "
                               f"with the same command and --record-mode all (a provider needs its key)")
