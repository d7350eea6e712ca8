"""What every figure of a run means: one list, shown at the end of report.md and report.html and in
`run --help`, so a reader never has to guess what "answered" or "normalised" measures."""

from __future__ import annotations

import textwrap

DEFINITIONS = (
    ("compacted / full / floor", "the three conditions a probe is asked under: the compacted context; the whole "
                                 "history (the ceiling); the same tail with no summary (what survives without it)"),
    ("answered", "the answerer's reply to the probe question contains every expected fact and no forbidden one"),
    ("retained", "the expected facts appear in the context itself, whatever the answerer replies (no model call)"),
    ("valid probe", "a probe the full history passes; the others are invalid and counted apart"),
    ("lost probe", "a valid probe the compacted context fails"),
    ("summary-testing probe", "a valid probe with a compaction before its point that the floor fails: only the "
                              "summary can answer it; the headline is the compacted rate over these"),
    ("normalised retention", "(compacted - floor) / (full - floor): the share of what the summary could add "
                             "that it did add; 1 is as good as the full history, 0 no better than no summary"),
    ("[a-b] (Wilson)", "the 95% Wilson interval of a rate; [clustered a-b] resamples whole cases, as probes "
                       "of one case are not independent"),
    ("fact age", "messages from where the fact was established to the probe point"),
    ("compactions survived", "compactions whose folded head held the fact (it had to pass through a summary)"),
    ("compression", "tokens of the folded head divided by tokens of its summary"),
    ("artifact recall / precision", "of the files the folded head touched, the share the summary names / of "
                                    "the paths the summary names, the share the head touched"),
    ("stale fact", "a superseded value (an update probe's `none`) still stated in a summary"),
    ("cost per compaction / per session", "summarizer dollars divided by compactions / by the sessions that "
                                          "compacted (the same divisor as `compaction-harness cost`)"),
    ("harness / model latency", "trigger to compacted context: the harness's own time (measured) and the "
                                "summarizer call's (labelled live, recorded or modelled)"),
    ("risks", "sends where the policy leaves a hazard, as `simulate` reports them (see the risks table)"),
)

# Which figure answers which question, for a comparison of configurations.
QUESTIONS = (
    ("Which configuration keeps the agent working?", "the headline (compacted, summary-testing probes) and "
                                                     "the pairwise b - a with McNemar p"),
    ("How much of what a summary could add does it add?", "normalised retention (it discounts what survives "
                                                          "without any summary)"),
    ("Is a difference real?", "the pairwise intervals: a difference whose by-case interval spans 0 is not "
                              "established"),
    ("What does it cost?", "cost per compaction and per session, with their source"),
)


def markdown_definitions() -> list[str]:
    return ["### Definitions", "", *(f"- **{name}**: {meaning}." for name, meaning in DEFINITIONS), ""]


def markdown_questions() -> list[str]:
    return ["### Which figure answers which question", "", "| question | read |", "| --- | --- |",
            *(f"| {q} | {a} |" for q, a in QUESTIONS), ""]


def help_epilog() -> str:
    """The definitions for --help (argparse keeps the line breaks with RawDescriptionHelpFormatter)."""
    return "figures:\n" + "\n".join(textwrap.fill(f"{name}: {meaning}", 100, initial_indent="  ",
                                                    subsequent_indent="      ") for name, meaning in DEFINITIONS)
