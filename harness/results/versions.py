"""Versions of the results format: which `schema_version`s this harness reads, and how an older one is
brought to the current form on read.

`schema_version` is raised on every change of run.json, the case files or the baseline. A change that only
adds fields (readers take a missing one as unset) reads older documents as they are; any other change adds a
step to MIGRATIONS. A version with no way here is refused as written by that version, with what to do, never
as damaged: that word is for a file whose shape is broken (results.shape).

1 -> 2: the configuration may carry `instruction_sha256` and `instruction_file` (a summary instruction
        other than the shipped one); absent, the shipped instruction, as every version 1 run used. It may
        also carry `runtime`, `runtime_compaction` and `runtime_settings` (a real runtime drove the cases), a
        case's outcome its `runtime` drive, and the headline an `unreached` group (all added in the same
        release); absent, no runtime and no unreached points counted apart; and the summaries over their budget
        (`aggregates.summary.over_budget`), 0 for a version 1 run.
"""

from __future__ import annotations

from typing import Any, Callable

from harness.errors import HarnessError
from harness.results.schema import SCHEMA_VERSION

Migration = Callable[[dict[str, Any]], dict[str, Any]]


def _to_2(document: dict[str, Any]) -> dict[str, Any]:
    """Version 2 also counts summaries over their budget (aggregates.summary.over_budget); a version 1 run
    graded none at its budget, so it counts 0. Everything else version 2 added is optional."""
    summary = (document.get("aggregates") or {}).get("summary")
    if isinstance(summary, dict) and "over_budget" not in summary:
        document = {**document, "aggregates": {**document["aggregates"], "summary": {**summary, "over_budget": 0}}}
    return document


MIGRATIONS: dict[int, Migration] = {1: _to_2}  # version -> the step to version + 1
OLDEST = min(MIGRATIONS)


def current(document: dict[str, Any], where: str, redo: str) -> dict[str, Any]:
    """`document` in the current format: as it is, or migrated step by step from an older version. A version
    this harness cannot read is one line naming it, this harness's version and what to do (`redo`: how to
    write the document again with this harness)."""
    found = document.get("schema_version")
    if found == SCHEMA_VERSION:
        return document
    whole = isinstance(found, int) and not isinstance(found, bool)
    if whole and found > SCHEMA_VERSION:
        raise HarnessError(f"{where}: written by results format version {found}; this is version {SCHEMA_VERSION}: "
                           f"read it with the newer compaction-harness that wrote it, or upgrade this one")
    if not whole or found not in MIGRATIONS:
        raise HarnessError(f"{where}: written by results format version {found!r}; this is version {SCHEMA_VERSION}"
                           f", which reads versions {OLDEST} to {SCHEMA_VERSION}: {redo}")
    version = found
    while version != SCHEMA_VERSION:
        document = MIGRATIONS[version](document)
        version += 1
    return {**document, "schema_version": SCHEMA_VERSION}
