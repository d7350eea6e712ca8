"""The summary's item store: a later statement supersedes the earliest one of its section with the same key or
the same words (case aside), as the scan it replaced did, and removal and replacement keep the order."""

from harness.models.builtin.items import Item, Items


def store(*items: Item) -> Items:
    out = Items()
    for item in items:
        out.append(item)
    return out


def test_the_earliest_of_a_key_match_and_a_words_match_is_superseded():
    by_words = Item("facts", "Port 9090", 1, "facts:listen")
    by_key = Item("facts", "use port 8080", 2, "facts:port")
    items = store(by_words, by_key)
    assert items.superseded("facts", "facts:port", "port 9090") is by_words
    items.remove(by_words)
    assert items.superseded("facts", "facts:port", "port 9090") is by_key
    assert items.superseded("errors", "facts:port", "port 9090") is None  # another section states its own


def test_a_none_key_matches_another_none_key_like_the_scan_did():
    first, second = Item("progress", "a", 1, None), Item("progress", "b", 2, None)
    assert store(first, second).superseded("progress", None, "c") is first


def test_replacing_keeps_the_place_and_removal_keeps_the_order():
    a, b, c = (Item("errors", text, n, f"errors:{text}") for n, text in enumerate("abc", 1))
    items = store(a, b, c)
    fixed = Item("errors", "b", 2, "errors:b", fix="read it")
    items.replace(fixed)
    items.remove(a)
    assert list(items) == [fixed, c] and items.in_category("errors") == [fixed, c]
    assert items.has("errors") and not items.has("goal") and items.get(1) is None and items[2] is fixed
