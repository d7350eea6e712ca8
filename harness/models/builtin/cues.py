"""The words that say what a sentence does: set a rule, plan a next step, report progress; and what is prose
at all (not a table row, a code line or a list's lead-in)."""

from __future__ import annotations

import re

CONSTRAINT_CUES = re.compile(
    r"\b(use|using|don't|do not|dont|must|always|never|prefer|should|avoid|only|make sure|keep|"
    r"required?|no longer|instead|stick to|need to|at most|no more than|within|limit)\b", re.I)
MIN_RULE_WORDS = 4  # "Things to always do", "Never:" head a list; they are no rule of their own
NEXT_CUES = re.compile(r"\b(next|i'll|i will|let's|let us|plan|todo|then i|remaining|still need|will now)\b", re.I)
PROGRESS_CUES = re.compile(r"\b(done|fixed|implemented|added|passes|passing|completed|created|updated|"
                            r"finished|works|working now|resolved|merged|committed|pushed)\b", re.I)
# A sentence that announces the step it opens ("Let me run the suite.", "I'll look at x.py", "Re-running the
# tests."): the step itself says it; it reports nothing found.
ANNOUNCES_STEP = re.compile(r"^\W*(?:(?:now|first|next|ok(?:ay)?|so)\W+)?(?:i'll|i will|i'm going to|let me|let's|"
                            r"let us|i need to|need to|i want to|time to|\w+ing\b)", re.I)
# A sentence of prose, not a table row, a code line or a heading-like fragment.
NOT_PROSE = re.compile(r"^\s*(\||//|#|[{}\[\]\"'`]|\w+\s*[:=]\s*[\"'{\[(]|[\w.]+\(.*\)\s*\{?$)|[:：]\s*$")


def is_rule(sentence: str) -> bool:
    """A sentence that sets a rule: a cue word in a whole sentence, not a heading or the lead-in of a list."""
    text = sentence.strip()
    return bool(CONSTRAINT_CUES.search(text)) and len(text.split()) >= MIN_RULE_WORDS and \
        not text.endswith((":", "：")) and not text.startswith(("#", "|"))
