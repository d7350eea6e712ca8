"""Shape checks of the documents a user hands back to the harness: run.json, case files and baselines.

The readers parse these into records (results.schema) or read them as dicts further on (gate, compare,
cost); a document missing a key or holding the wrong type is refused here, at the reader's entry, with
the file, the key and the fix, instead of a KeyError deep in a study.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, TypeVar

from harness.errors import InputError
from harness.results.aggregate import Aggregator
from harness.results.schema import CaseRecord, RunHeader

T = TypeVar("T")
GRADES = ("answered", "retained")
CORE_AGGREGATES = ("grade", "cases", "cases_ok", "errors", "probes", "overall", "by_kind", "by_pool", "compactions")


def parsed(build: Callable[[Any], T], data: Any, where: str, what: str, fix: str) -> T:
    """`build(data)`, with the shape errors a malformed document raises turned into one InputError."""
    if not isinstance(data, dict):
        raise InputError(where, None, what, f"must be a JSON object; {fix}")
    try:
        return build(data)
    except KeyError as exc:
        raise InputError(where, None, f"{what}.{exc.args[0]}", f"missing; {fix}") from None
    except (TypeError, ValueError, AttributeError, IndexError) as exc:
        raise InputError(where, None, what, f"wrong shape ({' '.join(str(exc).split())[:120]}); {fix}") from None


def case_record(data: Any) -> CaseRecord:
    """CaseRecord.from_json with the identifying fields type-checked (they become keys and file names)."""
    for key, kind in (("case", str), ("pool", str), ("status", str)):
        if not isinstance(data.get(key), kind):
            raise ValueError(f"{key} must be a string")
    repeat = data.get("repeat", 0)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 0:
        raise ValueError("repeat must be a whole number")
    if data.get("error") is not None and not isinstance(data["error"], str):
        raise ValueError("error must be a string")
    return CaseRecord.from_json(data)


def check_run(data: dict[str, Any], where: str) -> dict[str, Any]:
    """A run.json document with every part the studies read (header, cases, aggregates)."""
    fix = "the run folder is damaged: rerun it, or rebuild run.json with --resume"
    parsed(RunHeader.from_json, data, where, "run", fix)
    cases = data.get("cases")
    if not isinstance(cases, dict):
        raise InputError(where, None, "cases", f"must be an object of case records; {fix}")
    for key, case in cases.items():
        parsed(case_record, case, where, f"cases.{key}", fix)
    aggregates = data.get("aggregates")
    if not isinstance(aggregates, dict):
        raise InputError(where, None, "aggregates", f"must be an object; {fix}")
    for name, inner in _aggregates_template().items():
        # runs written before a group of aggregates existed lack it: required are the ones every run has
        if name in aggregates or name in CORE_AGGREGATES:
            same_shape(inner, aggregates.get(name), where, f"aggregates.{name}", fix)
    return data


def check_case_file(data: Any, where: str) -> CaseRecord:
    return parsed(case_record, data, where, "case", "a truncated or edited case file: delete it and "
                                                              "rerun with --resume to evaluate the case again")


def check_baseline(data: dict[str, Any], where: str) -> dict[str, Any]:
    fix = "re-create it with `gate RUN --baseline FILE --update-baseline`"
    if data.get("grade") not in GRADES:
        raise InputError(where, None, "grade", f"must be answered or retained; {fix}")
    cases = data.get("cases")
    if not isinstance(cases, list) or not all(isinstance(c, str) for c in cases):
        raise InputError(where, None, "cases", f"must be a list of case ids; {fix}")
    probes = data.get("probes")
    if not isinstance(probes, dict):
        raise InputError(where, None, "probes", f"must be an object of probe outcomes; {fix}")
    for key, probe in probes.items():
        if not isinstance(probe, dict) or not isinstance(probe.get("kind"), str):
            raise InputError(where, None, f"probes.{key}", f"must be an object with a kind; {fix}")
        for field in ("valid", *GRADES):
            if probe.get(field) is not None and not isinstance(probe[field], bool):
                raise InputError(where, None, f"probes.{key}.{field}", f"must be true, false or null; {fix}")
    summary = data.get("tests_summary")
    if summary is not None and (not isinstance(summary, list) or not all(isinstance(s, str) for s in summary)):
        raise InputError(where, None, "tests_summary", f"must be a list of probe keys; {fix}")
    if not isinstance(data.get("configuration", {}), dict):
        raise InputError(where, None, "configuration", f"must be an object of the run's settings; {fix}")
    aggregates = data.get("aggregates", {})
    if not isinstance(aggregates, dict) or not isinstance(aggregates.get("judged") or {}, dict):
        raise InputError(where, None, "aggregates", f"must be an object; {fix}")
    return data


@lru_cache(maxsize=1)
def _aggregates_template() -> dict[str, Any]:
    """The aggregates of an empty run: every key a run's aggregates always hold, with its JSON type."""
    return Aggregator().result(final=True)


def same_shape(template: Any, value: Any, where: str, key: str, fix: str) -> None:
    """`value` has every key of `template` with a value of the same JSON type (None in the template: any)."""
    if template is None:
        return
    if isinstance(template, dict):
        if not isinstance(value, dict):
            raise InputError(where, None, key, f"must be an object; {fix}")
        for name, inner in template.items():
            if name not in value:
                raise InputError(where, None, f"{key}.{name}", f"missing; {fix}")
            same_shape(inner, value[name], where, f"{key}.{name}", fix)
        return
    if not _same_kind(template, value):
        raise InputError(where, None, key, f"must be {type(template).__name__}, not {value!r:.40}; {fix}")


def _same_kind(template: Any, value: Any) -> bool:
    if isinstance(template, bool) or isinstance(value, bool):
        return isinstance(template, bool) and isinstance(value, bool)
    if isinstance(template, (int, float)):
        return isinstance(value, (int, float))
    return isinstance(value, type(template))
