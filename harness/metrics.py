"""Scores and statistics: pass rates with Wilson intervals, retention normalised between the controls,
summary-level checks, and paired tests between configurations. Which files a session touched and which paths
a text names is harness/artifacts.py."""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Sequence

from harness.artifacts import argument_strings, git_refs, paths_in, touched_paths
from harness.matching import Haystack, contains, states
from harness.session import Message

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Rate:
    passed: int
    total: int

    @property
    def value(self) -> float | None:
        return self.passed / self.total if self.total else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.passed, self.total)

    def to_json(self) -> dict:
        low_high = self.interval
        return {"passed": self.passed, "total": self.total,
                "rate": None if self.value is None else round(self.value, 4),
                "wilson95": None if low_high is None else [round(low_high[0], 4), round(low_high[1], 4)]}


def wilson(passed: int, total: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval: well-behaved at 0 and 100% and for small samples."""
    if total == 0:
        return None
    p = passed / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def normalised_retention(compacted: float, full: float, floor: float) -> float | None:
    """(compacted - floor) / (full - floor): 1 is as good as no compaction, 0 as good as no summary."""
    if full <= floor:
        return None
    return (compacted - floor) / (full - floor)


# ---------------------------------------------------------------------------------------------
# paired comparisons


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (a binomial test at 1/2)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def bootstrap_difference(a: Sequence[float], b: Sequence[float], rounds: int = 2000,
                         seed: int = 0) -> tuple[float, float, float]:
    """Mean of b - a over paired items, with a 95% percentile bootstrap interval (seeded: reproducible)."""
    if len(a) != len(b) or not a:
        raise ValueError("bootstrap needs two paired, non-empty samples")
    differences = [y - x for x, y in zip(a, b)]
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(sum(differences[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    return sum(differences) / n, means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def cluster_bootstrap(clusters: Sequence[Sequence[float]], rounds: int = 2000,
                      seed: int = 0) -> tuple[float, float] | None:
    """95% percentile interval of a mean score when items come in clusters (probes within a case are not
    independent): whole clusters are resampled, so a case that passes everything weighs as one case."""
    clusters = [c for c in clusters if len(c)]
    if not clusters:
        return None
    rng = random.Random(seed)
    k = len(clusters)
    totals, sizes = [sum(c) for c in clusters], [len(c) for c in clusters]  # each cluster summed once, not per draw
    means = []
    for _ in range(rounds):
        drawn = [rng.randrange(k) for _ in range(k)]
        means.append(sum(totals[i] for i in drawn) / sum(sizes[i] for i in drawn))
    means.sort()
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def cluster_bootstrap_difference(pairs: Sequence[Sequence[tuple[float, float]]], rounds: int = 2000,
                                 seed: int = 0) -> tuple[float, float, float] | None:
    """Mean of b - a over paired items grouped by case, with a case-resampling 95% interval."""
    clusters = [[y - x for x, y in c] for c in pairs if len(c)]
    if not clusters:
        return None
    interval = cluster_bootstrap(clusters, rounds, seed)
    total = sum(len(c) for c in clusters)
    return sum(sum(c) for c in clusters) / total, interval[0], interval[1]


# ---------------------------------------------------------------------------------------------
# summary-level checks (no model)
#
def _same_file(a: str, b: str) -> bool:
    """Two normal forms naming one file: equal, or one a trailing part of the other (`/testbed/x/y.py`, `x/y.py`)."""
    a, b = a.lower(), b.lower()
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _source_parts(head: Sequence[Message], previous_summary: str | None) -> list[str]:
    parts = [previous_summary or ""]
    for message in head:
        parts.append(message.content)
        parts += [s for call in message.tool_calls for v in call.arguments.values() for s in argument_strings(v)]
    return parts


@dataclass(frozen=True)
class SummaryCheck:
    compaction: int
    head_tokens: int
    summary_tokens: int
    compression_ratio: float | None
    sections_present: tuple[str, ...]
    sections_missing: tuple[str, ...]
    artifact_recall: float | None
    artifact_precision: float | None
    hallucinated_paths: tuple[str, ...]
    stale_facts: tuple[str, ...]

    def to_json(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def check_summary(number: int, summary: str, head: Sequence[Message], previous_summary: str | None,
                  head_tokens: int, summary_tokens: int, sections: Sequence[str],
                  superseded: Sequence[str] = (), earlier: Sequence[Message] = (),
                  forms: dict[str, str] | None = None) -> SummaryCheck:
    """`superseded`: values replaced before this compaction; stating one as current in the summary is a stale
    fact (a mention marked as history is not). `earlier`: the session's messages before the head; a file the
    previous summary named that one of their tool calls touched is still true, and carrying it forward is right.
    `forms`: normal forms already made of the head's texts (Case.normal_forms)."""
    lowered = summary.lower()
    present = tuple(s for s in sections if re.search(rf"^#+\s*{re.escape(s.lower())}\b", lowered, re.MULTILINE))
    refs = git_refs(head) | git_refs(earlier)
    touched = touched_paths(head)
    if previous_summary:
        carried = paths_in(previous_summary, refs)
        touched |= {t for t in touched_paths(earlier) if any(_same_file(t, c) for c in carried)}
    mentioned = paths_in(summary, refs)
    recalled = [t for t in touched if any(_same_file(t, m) for m in mentioned)]
    correct = [m for m in mentioned if any(_same_file(m, t) for t in touched)]
    recall = len(recalled) / len(touched) if touched else None
    precision = len(correct) / len(mentioned) if mentioned and touched else None
    source = Haystack.joined(_source_parts(head, previous_summary), {} if forms is None else forms)
    hallucinated = tuple(sorted(p for p in mentioned if not contains(source, p)))
    stated = Haystack(summary)
    stale = tuple(v for v in superseded if states(stated, v))
    return SummaryCheck(number, head_tokens, summary_tokens,
                        round(head_tokens / summary_tokens, 2) if summary_tokens else None,
                        present, tuple(s for s in sections if s not in present),
                        None if recall is None else round(recall, 3),
                        None if precision is None else round(precision, 3), hallucinated, stale)


# ---------------------------------------------------------------------------------------------
# retention against fact age and compactions survived

AGE_BUCKETS = ((0, 20), (20, 50), (50, 100), (100, 200), (200, 10**9))


def age_bucket(age: int) -> str:
    for low, high in AGE_BUCKETS:
        if low <= age < high:
            return f"{low}-{high - 1}" if high < 10**9 else f"{low}+"
    return "?"
