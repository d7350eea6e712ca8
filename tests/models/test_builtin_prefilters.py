"""Regexes skipped where a cheap check says they cannot match, found to match as before.

The exact-values alternation searched with only the patterns a line can match finds what the whole alternation
finds, match for match: on lines made to hit each pattern (keywords in odd cases, all-letter hashes that take a
position from another pattern) and on a sample of every shipped case's lines. The summary-sentence noise is
only searched in a text holding one of its words: every sentence holds one. The keyed-value regex, which takes
a word without giving letters back, finds what the backtracking one found. A failure report, a label, harness
markup and a runner's tags are only searched in a text holding a word or the characters they need, folded as the regex folds case."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from harness.models.builtin import facts, keys, noise, outputs, steps, text
from harness.models.builtin.alternation import Alternation, Need

ROOT = Path(__file__).resolve().parents[2]
WHOLE = re.compile("|".join(f"(?:{p})" for p in facts._PATTERNS), re.I)
SAMPLE_EVERY = 50  # of the shipped cases' distinct lines, sorted (about 6,000 lines)

LINES = [
    "", "no values here at all", "listening on localhost:5432 now", "db.internal:8080 is up", "use PORT 9090",
    "fixed ENT-109 and PRO-89", "see PR #170 and issue #89", "Pull Request 12 merged", "ISSUE 7", "bumped to v2.1.7",
    "commit 1a2b3c4d5e", "deadbeef@x.com has no digit", "deadbeefcafe alone", "deadbeef-dead-beef-dead-beefdeadbeef",
    "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "mail ops+bot@example.co.uk", "PASSWORD: hunter2", "api_key=abc",
    "Username = root", "took 11ms, 3 tests, 2 files", "✓ fetchRange keeps order 11ms", "see /usr/local/bin/node",
    "git checkout -b feat/colours", "Switched to branch 'alex/ent-221-hooks'", "ſwitch to branch x", "ıssue 5",
    "İSSUE #5", "\u212aey: 1", "port\u00a080", "١٢٣ms", "#12.foo@bar.com", "port 8080x@host.com", "PR#3 v1.2.3+build.5",
]


def case_lines() -> list[str]:
    lines: set[str] = set()
    for session in sorted(ROOT.glob("cases/*/session.jsonl")):
        for record in session.read_text(encoding="utf-8").splitlines():
            content = json.loads(record).get("content") if record.strip() else None
            if isinstance(content, str):
                lines.update(content.splitlines())
    return sorted(lines)[::SAMPLE_EVERY]


def found(matches) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(0)) for m in matches]


@pytest.mark.parametrize("line", LINES)
def test_made_lines_match_as_the_whole_alternation(line):
    assert found(facts._VALUE.finditer(line)) == found(WHOLE.finditer(line))


def test_case_lines_match_as_the_whole_alternation():
    lines = case_lines()
    assert len(lines) > 1000
    differ = [line for line in lines if found(facts._VALUE.finditer(line)) != found(WHOLE.finditer(line))]
    assert differ == []


def test_every_value_pattern_but_the_hash_has_a_need():
    assert [p for p, need in zip(facts._VALUE.patterns, facts._VALUE.needs) if need is None] == [facts._PATTERNS[6]]


def test_a_line_without_what_a_pattern_needs_skips_it():
    alternation = Alternation(("port (\\d+)", "x", "a@b"), {"port (\\d+)": Need(digit=True),
                                                           "a@b": Need(chars="@", any_chars="ab")}, re.I)
    assert [p for p in alternation.possible(True, (False, False, False))] == ["port (\\d+)", "x"]
    assert [p for p in alternation.possible(False, (True, False, False))] == ["x"]
    assert [p for p in alternation.possible(False, (True, False, True))] == ["x", "a@b"]
    assert [found(alternation.finditer(line)) for line in ("PORT 80 a@b", "PORT x")] == \
        [[(0, 7, "PORT 80"), (8, 11, "a@b")], [(5, 6, "x")]]


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a pattern (no '|' inside a group or a class counts)."""
    parts, depth, start, escaped, in_class = [], 0, 0, False, False
    for at, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "[]":
            in_class = char == "["
        elif not in_class and char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0 and not in_class:
            parts.append(pattern[start:at])
            start = at + 1
    return parts + [pattern[start:]]


def test_every_summary_sentence_holds_a_summary_word():
    sentences = _alternatives(noise._SUMMARY_SENTENCES.pattern)
    assert len(sentences) == 9
    assert [s for s in sentences if not any(w in s.lower() for w in noise.SUMMARY_WORDS)] == []


@pytest.mark.parametrize("text", ["Analysis:\nthe plan", "ſummary:", "x\nSUMMARY:  \ny", "Please continue the "
                                  "conversation from where we left it off, thanks.", "no boilerplate here"])
def test_summary_sentences_go_as_before(text):
    whole = noise._SUMMARY_SENTENCES.sub(" ", text)
    assert noise.strip_noise.__wrapped__(text) == "\n".join(
        line.rstrip() for line in whole.splitlines() if line.strip()).strip()


# KEYED_VALUE as it was before its word stopped giving letters back.
BACKTRACKING = re.compile(r"\b([a-z][a-z_-]{1,30})\s*(?:to|=|:|is|of|at|on)?\s*[`'\"]?(\d[\w.:/-]*|v\d[\w.-]*)", re.I)
KEYED_LINES = ["order 11ms", "keeps order 11ms", "port to 9090", "timeoutto 5", "versionv2", "x-v5", "a_b-c: '7'",
               "a" * 30 + "to 5", "a" * 31 + "to 5", "a" * 32 + "to 5", "a" * 29 + "-" + "is 7", "b" * 40 + "v9",
               "é" + "a" * 33 + "on\t`8", "ſome=1", "\u212aey: 2"]


def keyed(regex, line: str) -> list[tuple[int, int, tuple]]:
    return [(m.start(), m.end(), m.groups()) for m in regex.finditer(line)]


@pytest.mark.parametrize("line", KEYED_LINES)
def test_made_lines_give_the_keyed_values_as_before(line):
    assert keyed(text.KEYED_VALUE, line) == keyed(BACKTRACKING, line)


def test_case_lines_and_random_lines_give_the_keyed_values_as_before():
    generator = random.Random(32)  # runs of word characters near 31 long, the separators, values after them
    pieces = ["a", "t", "o", "i", "s", "v", "_", "-", " ", "\t", "5", ":", "=", "`", "'", "A" * 28, "x" * 31]
    made = ["".join(generator.choice(pieces) for _ in range(generator.randint(1, 24))) for _ in range(20000)]
    assert [line for line in case_lines() + made if keyed(text.KEYED_VALUE, line) != keyed(BACKTRACKING, line)] == []


def test_folded_reads_every_letter_as_a_case_insensitive_regex_does():
    ascii_letter = re.compile("[a-z]", re.I)
    odd = [chr(c) for c in range(0x80, 0x30000) if ascii_letter.fullmatch(chr(c))]
    assert len(odd) == 4  # İ ı ſ and the Kelvin sign: each folds to the ASCII letter the regex matches it to
    assert [c for c in odd if not (text.folded(c).isascii() and re.fullmatch(text.folded(c), c, re.I))] == []
    assert text.folded("FAİLED ſuch \u212aelvin") == "failed such kelvin"


REPORT_LINES = ["error: x", "Error[E0308]: mismatched", "FAILED tests/a.py", "--- FAIL: TestX", "Traceback (most",
                "unable to open", "could not find", "cannot stat", "can't read", "module not found", "no such file",
                "FAİL: x", "ERROR", "panic: boom", "ıt could not", "nothing to see", "errors: 0", "formatPluginError",
                "\u212aey not found", "ſtill no ſuch thing", "unable\tto", "fatal:"]


def test_lines_report_a_failure_as_the_search_says():
    lines = REPORT_LINES + case_lines()
    assert [line for line in lines if steps._reports(line) != bool(steps._REPORTED.search(line))] == []
    assert sum(map(steps._reports, REPORT_LINES)) == 18


def test_a_label_is_only_searched_for_in_a_line_with_a_colon():
    assert keys._LABEL.pattern.count(":") == 1 and "\\:" not in keys._LABEL.pattern
    assert keys.fact_key("Entire-Checkpoint: 1a2b3c4", ("1a2b3c4",)) == "facts:entire-checkpoint"
    assert [line for line in case_lines() if ":" not in line and keys._LABEL.match(line)] == []


MARKUP = ["plain output\nline 2", "<system-reminder>x</system-reminder> go", "a [Image #2] b", "[no result recorded]",
          "<IMAGE>", "<tool_result>open", "x </command-name> y"]


def test_markup_is_blanked_as_the_unguarded_substitutions_blank_it():
    texts = MARKUP + case_lines()
    assert [t for t in texts if noise._without_markup(t) != noise._MARKERS.sub(" ", noise._LONE_TAG.sub(
        " ", noise._BLOCK.sub(" ", t)))] == []
    assert [noise._without_markup(t) == t for t in MARKUP] == [True] + [False] * 6


def case_texts() -> list[str]:
    texts = []
    for session in sorted(ROOT.glob("cases/*/session.jsonl")):
        for record in session.read_text(encoding="utf-8").splitlines():
            content = json.loads(record).get("content") if record.strip() else None
            texts += [content] if isinstance(content, str) else []
    return texts


def test_tags_are_removed_as_when_every_line_is_matched():
    def by_every_line(output: str) -> str:
        lines = [line for line in output.splitlines() if line.strip()]
        tagged = sum(bool(outputs._TASK_TAG.match(line)) for line in lines)
        return output if tagged < outputs.MIN_TAGGED or tagged * 2 < len(lines) else outputs._TASK_TAG.sub("", output)

    made = ["web:lint: a\nweb:lint: b\napi:test: c", "web:lint: a\nx\ny\nz\nw\nweb:lint: b\nweb:lint: c", "a:b: c\nd"]
    texts = made + case_texts()
    assert [t for t in texts if outputs.untagged.__wrapped__(t) != by_every_line(t)] == []
    assert [outputs.untagged.__wrapped__(t) == t for t in made] == [False, True, True]
