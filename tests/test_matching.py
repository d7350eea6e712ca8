"""Matching on token boundaries after normalisation, and `none` as a stated value (EVALUATION.md)."""

import pytest

from harness.matching import Haystack, Texts, contains, match_items, normalise, normalise_item, states


def has(text: str, item: str) -> bool:
    return contains(Haystack(text), item)


@pytest.mark.parametrize("text,item", [
    ("It was released in 2023.", "3"),
    ("the token expired", "OK"),
    ("179 requests failed", "79"),
    ("version 1.5", "5"),
    ("port 18080", "8080"),
    ("see old_session.py", "session.py"),
    ("compiled session.pyc", "session.py"),
    ("ENT-1090", "ENT-109"),
    ("version 3.1.2 ships", "3.1"),
])
def test_no_match_inside_a_longer_token(text, item):
    assert not has(text, item)


@pytest.mark.parametrize("text,item", [
    ("One.", "one"),
    ("The reserve is 16,384 tokens", "16384"),
    ("The reserve is 16384 tokens", "16,384"),
    ("Edited src\\auth\\Session.py", "src/auth/session.py"),
    ("the file `src/app.py` changed", "src/app.py"),
    ("use \u201cpnpm\u201d only", "pnpm"),
    ("port 8080.", "8080"),
    ("It listens on   9090\n now", "9090"),
    ("the branch feat/retries", "feat/retries."),
])
def test_matches_across_wordings(text, item):
    assert has(text, item)


def test_normalisation_is_the_same_for_texts_and_items():
    assert normalise("  Src\\Auth\\Session.PY \n\t now ") == "src/auth/session.py now"
    assert normalise_item("'9090.'") == "9090"
    assert normalise("1,234,567 rows") == "1234567 rows"


@pytest.mark.parametrize("answer", [
    "7555 (changed from 7421)",
    "It changed from 7421 to 7555.",
    "7421 -> 7555",
    "The port is now 7555; it was 7421 before.",
    "7555, not 7421",
    "7555 (previously 7421)",
    "7421 (old), 7555 now",
    "We moved off 7421; it listens on 7555.",
    "7555. The 7421 pin was dropped.",
    "7555; 7421 was not kept.",
])
def test_a_value_mentioned_as_history_is_not_stated(answer):
    assert not states(Haystack(answer), "7421")
    assert match_items(Haystack(answer), (("7555",),), ("7421",)).passed


@pytest.mark.parametrize("answer", [
    "7421",
    "7421 or 7555",
    "Either 7555 or 7421.",
    "The port is 7421.",
])
def test_a_stated_superseded_value_fails(answer):
    result = match_items(Haystack(answer), (("7555",),), ("7421",))
    assert not result.passed
    if "7555" in answer:
        assert result.forbidden == ("7421",) and result.decided_by.startswith("states '7421'")
    else:
        assert result.missing == ("7555",)


def test_alternatives_and_regex():
    text = Haystack("We chose write-through caching.")
    assert match_items(text, (("write-back", "write-through"),)).passed
    assert not match_items(text, (("write-back",),)).passed
    assert match_items(text, (), regex=r"write-?through").passed
    assert match_items(text, (), regex=r"write-back").decided_by == "the regex does not match"


def test_none_can_be_checked_in_another_text():
    summary, context = Haystack("port 9090"), Haystack("port 8080 then port 9090")
    assert match_items(context, (("9090",),), ("8080",), none_in=summary).passed
    assert not match_items(context, (("9090",),), ("8080",)).passed


def test_cluster_bootstrap_is_wider_than_wilson_when_cases_differ():
    from harness.metrics import cluster_bootstrap, cluster_bootstrap_difference, wilson

    # 10 cases of 12 probes: half pass everything, half pass a quarter: strongly clustered outcomes
    clusters = [[1.0] * 12 if i % 2 else [1.0] * 3 + [0.0] * 9 for i in range(10)]
    low, high = cluster_bootstrap(clusters)
    w_low, w_high = wilson(sum(map(sum, clusters)), 120)
    assert low <= 0.625 <= high and (high - low) > (w_high - w_low)
    # identical items in every cluster: no spread at all
    assert cluster_bootstrap([[1.0, 0.0]] * 5) == (0.5, 0.5)
    assert cluster_bootstrap([]) is None
    mean, d_low, d_high = cluster_bootstrap_difference([[(0.0, 1.0), (1.0, 1.0)]] * 4)
    assert mean == 0.5 and d_low == d_high == 0.5


# Texts searched together find exactly what `contains` finds in each: edges, decimals and separators included.
MESSAGES = ["port 8080", "1.", "5 retries", "", "  Version 1.5\n", "x.py,", "9090", "'8080'", "a\\b", "set to 1,000",
            "ok", "token", "8080.", ".5", "session.py", "old_session.py", "ÉTAT final", "_8080", "8080_", "8080"]
ITEMS = ["8080", "5", "1", "1.5", "x.py", "9090", "a/b", "1000", "ok", "session.py", "état", "token ", "retries",
         "final", "8080."]


@pytest.mark.parametrize("end", [0, 1, 3, 7, len(MESSAGES)])
def test_texts_searched_together_hold_an_item_where_each_text_does(end):
    texts = Texts(iter(MESSAGES))
    for reach in (end, len(MESSAGES), end):  # read further, then ask for fewer again
        for item in ITEMS:
            expected = {i for i in range(reach) if contains(Haystack(MESSAGES[i]), item)}
            assert texts.holding(item, reach) == expected, (item, reach)
    assert texts.holding("8080", len(MESSAGES)) == {0, 7, 12, 19}


def test_texts_joined_normalise_as_their_joined_text_does():
    """Haystack.joined builds the normal form from the parts' own: equal to normalising the joined text at every
    boundary the parts can make (whitespace, quotes, digit groups, a final sigma, empty parts)."""
    import random

    pieces = ["", " ", "\n", "1", ",", "000", "_", "'", "\u201c", "\\", "ΑΣ", "Σ", "σ", "İ", "a", "Port", "\u00a0",
              "\x1c", "\t", ".", "5", "2,500", "x y", "ÉÉ"]
    rng = random.Random(11)
    forms: dict[str, str] = {}
    for _ in range(3000):
        raws = ["".join(rng.choice(pieces) for _ in range(rng.randrange(4))) for _ in range(rng.randrange(5))]
        joined = Haystack.joined(raws, forms)
        assert joined.raw == "\n".join(raws)
        assert joined.text == normalise("\n".join(raws)), raws


def test_beside_blanks_the_whole_token_that_holds_the_mention():
    from harness.matching import beside

    text = "the architecture doc is docs/architecture/shadow.md now"
    start = text.index("shadow.md")
    near = beside(text, start, start + len("shadow.md"))
    assert "docs/architecture" not in near and "the architecture doc is" in near and near.endswith("now")
    assignment = "set vite_relay_url=wss://relay.x/v3 today"
    start = assignment.index("wss://")
    near = beside(assignment, start, start + len("wss://relay.x/v3"))
    assert "vite_relay_url=" in near and "relay.x" not in near  # `=` ends a token: the name stays beside its value
    two_words = "keep the port 9090 open"
    start = two_words.index("port 9090")
    assert beside(two_words, start, start + len("port 9090")).split() == ["keep", "the", "open"]
