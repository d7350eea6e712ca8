"""Leave one repository out (issue 31, item 2): a rule of the builtin summarizer counts only by its figure on
the repositories it was not written from. Over the real pool's finished runs (the real summaries, the builtin
with every rule, the builtin with the rule switched off), `retained` per repository and in total, in pool and
held out (every repository but the rule's origin), with exact McNemar p and the case-clustered interval of the
rule's difference; where control arms ran (the line extracts), the builtin against the strongest of them."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from harness.cases.schema import Case
from harness.errors import HarnessError
from harness.metrics import cluster_bootstrap_difference, mcnemar_exact
from harness.results.headline import outcome
from harness.compaction.controls import CONTROLS
from harness.studies.real import REAL, probe_rows

WITH, WITHOUT = "builtin", "builtin without the rule"
GRADE = "retained"
_REPOSITORY = re.compile(r"public repository\s+([\w.-]+/[\w.-]+)")

Key = tuple[str, str, str]


def repository_of(case: Case) -> str:
    """The public repository a real case's session comes from, as its SOURCE.md names it."""
    source = case.directory / "SOURCE.md"
    found = _REPOSITORY.search(source.read_text(encoding="utf-8")) if source.is_file() else None
    if found is None:
        raise HarnessError(f"{source}: no 'public repository owner/name' line: the case's repository is unknown")
    return found.group(1)


def _passes(row: dict[str, Any] | None, condition: str) -> bool:
    return bool(row and outcome(row, condition, GRADE))


def _compare(keys: list[Key], a: dict[Key, dict], b: dict[Key, dict]) -> dict[str, Any]:
    """b against a over the same probes: the discordant pairs, exact McNemar p, the mean difference b - a with
    its interval when whole cases are resampled."""
    only_a = sum(_passes(a.get(k), "compacted") and not _passes(b.get(k), "compacted") for k in keys)
    only_b = sum(_passes(b.get(k), "compacted") and not _passes(a.get(k), "compacted") for k in keys)
    by_case: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for k in keys:
        by_case[k[0]].append((float(_passes(a.get(k), "compacted")), float(_passes(b.get(k), "compacted"))))
    difference = cluster_bootstrap_difference(list(by_case.values()))
    return {"only_a": only_a, "only_b": only_b, "p": mcnemar_exact(only_a, only_b),
            "difference": None if difference is None else [round(x, 4) for x in difference]}


def _row(name: str, keys: list[Key], rows: dict[str, dict[Key, dict]]) -> dict[str, Any]:
    base = rows[REAL]
    valid = [k for k in keys if _passes(base[k], "full")]
    counts = {arm: sum(_passes(rows[arm].get(k), "compacted") for k in valid) for arm in rows}
    update = [k for k in valid if base[k]["kind"] == "update"]
    return {"name": name, "probes": len(keys), "full": len(valid), "arms": counts,
            "update": {"full": len(update), **{arm: sum(_passes(rows[arm].get(k), "compacted") for k in update)
                                               for arm in rows}},
            "rule": _compare(valid, rows[WITHOUT], rows[WITH]) if WITHOUT in rows else None,
            "against_real": _compare(valid, base, rows[WITH]),
            "against_strongest": _against_strongest(valid, rows)}


def _against_strongest(keys: list[Key], rows: dict[str, dict[Key, dict]]) -> dict[str, Any] | None:
    """The builtin against the control arm that keeps the most of these probes (None without control arms)."""
    controls = [arm for arm in rows if arm in CONTROLS]
    if not controls:
        return None
    strongest = max(controls, key=lambda arm: (sum(_passes(rows[arm].get(k), "compacted") for k in keys), arm))
    return {"control": strongest, **_compare(keys, rows[strongest], rows[WITH])}


def holdout_study(runs: dict[str, dict[str, Any]], repositories: dict[str, str],
                  origins: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Per repository, in pool (every repository) and held out (all but `origins`, the repositories the rules
    were written from; none: written from none of the pool, so the pool is all held out)."""
    if REAL not in runs or WITH not in runs:
        raise HarnessError(f"the study needs the '{REAL}' and '{WITH}' runs")
    rows = {arm: probe_rows(run) for arm, run in runs.items()}
    by_repository: dict[str, list[Key]] = defaultdict(list)
    for key in rows[REAL]:
        if key[0] not in repositories:
            raise HarnessError(f"case {key[0]}: its repository is unknown")
        by_repository[repositories[key[0]]].append(key)
    held_out = [k for repo, keys in by_repository.items() if repo not in origins for k in keys]
    name = f"held out (all but {', '.join(sorted(origins))})" if origins else "held out (the whole pool)"
    return {"origins": sorted(origins), "arms": list(runs),
            "repositories": [_row(repo, keys, rows) for repo, keys in sorted(by_repository.items())],
            "in_pool": _row("in pool (every repository)", list(rows[REAL]), rows),
            "held_out": _row(name, held_out, rows)}
