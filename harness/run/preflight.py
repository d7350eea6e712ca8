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
from harness.run.config import RunConfig, RunPlan, plan_run

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
        check_cassettes(plan)
        for case in cases:
            make_policy(plan.config.policy, plan.policy_config(case))
    return plans


def check_case(case: Case) -> None:
    """The case's session reads and holds what its probes point at."""
    if not case.session.messages:
        raise HarnessError(f"{case.directory / case.session_file}: the session has no messages: case {case.id} "
                           f"has nothing to compact")
    problems = validate_case(case)
    if problems:
        more = f" (and {len(problems) - 1} more; see `cases validate`)" if len(problems) > 1 else ""
        raise HarnessError(problems[0] + more)


def check_cassettes(plan: RunPlan) -> None:
    """A cassette folder that is a file fails here, not on every case's first request."""
    if all(spec.provider == "builtin" for _, spec in plan.specs):
        return
    folder = Path(plan.config.cassettes)
    if folder.exists() and not folder.is_dir():
        raise HarnessError(f"--cassettes {folder}: is a file; give a folder")
