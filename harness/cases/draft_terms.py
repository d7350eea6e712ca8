"""Key terms for draft probes: the words of a source sentence that name its subject (for the question) and its
fact (the expected items), picked by how rare they are in the session, so a question points at one place.

A term is taken verbatim from the sentence, so an expected item is literally in the message it came from.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from harness.session import Session, message_text

TERM = re.compile(r"[A-Za-z_@$][\w@$./:-]*[\w]|\d[\w.:%/-]*[\w%]")
SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# Words that name nothing on their own (a question built on them points everywhere).
STOP = frozenset("""
about above after again against all also and another any are aren because been before being below between both but
can cannot could did didn does doesn doing done down during each either else even every few first for from further
had has have having here how into its itself just last let like made make makes many may might more most much must
need needs never next not now off once one only other our out over own same shall she should since some still such
than that the their them then there these they this those though through too under until upon very was way were what
when where which while who whom why will with within without would yes yet you your always don shouldn make sure
using use used file files line lines code change changes changed new old add added run running test tests true false
none null please want well get got going thing things something okay sure right also instead""".split())
MIN_WORD = 4


@dataclass(frozen=True)
class Rarity:
    """In how many messages of the session each term (lower-cased) occurs."""

    counts: Counter[str]

    @classmethod
    def of(cls, session: Session) -> "Rarity":
        counts: Counter[str] = Counter()
        for message in session.messages:
            counts.update({term.lower() for term in TERM.findall(message_text(message))})
        return cls(counts)

    def messages_with(self, term: str) -> int:
        return self.counts.get(term.lower(), 0)


def is_strong(term: str) -> bool:
    """An identifier, a number or a path: a term no paraphrase replaces."""
    return any(c.isdigit() for c in term) or any(c in term for c in "_./@$") or term[1:] != term[1:].lower()


def is_key(term: str) -> bool:
    """A term that can name something: a strong term or a word that is not filler."""
    return is_strong(term) or (len(term) >= MIN_WORD and term.lower() not in STOP)


def key_terms(sentence: str, rarity: Rarity, exclude: frozenset[str] = frozenset()) -> list[str]:
    """The sentence's key terms, rarest in the session first (ties: the longer, then reading order), each once."""
    seen: dict[str, str] = {}
    for term in TERM.findall(sentence):
        lower = term.lower()
        if is_key(term) and lower not in seen and lower not in exclude:
            seen[lower] = term
    ordered = list(seen.values())
    return sorted(ordered, key=lambda t: (rarity.messages_with(t), -len(t), ordered.index(t)))


def sentences(text: str) -> list[str]:
    """A text's sentences and lines, stripped of list markers, quotes of markup and surrounding space."""
    out = []
    for piece in SENTENCE.split(text):
        piece = piece.strip().lstrip("-*#>0123456789.) ").strip()
        if piece:
            out.append(piece)
    return out


def without(sentence: str, items: list[str]) -> str:
    """The sentence with the given terms taken out: a plausible answer that misses the fact."""
    for item in items:
        sentence = re.sub(rf"(?<![\w.-]){re.escape(item)}(?![\w-])", "", sentence, flags=re.I)
    return " ".join(sentence.split())
