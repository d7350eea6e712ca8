"""Reference control summarizers: same size as the summary under test, content of known quality."""

import pytest

from harness.compaction.controls import CONTROLS, ControlSummarizer, keyword_bag, stripped_head
from harness.compaction.summarizer import SummaryInput, SummaryResult
from harness.session import Message
from harness.tokens import counter


class Fixed:
    name = "fixed"

    def __init__(self, text: str):
        self.text = text

    def summarize(self, request):
        return SummaryResult(self.text, "fixed", usage="billed", latency_source="live")


HEAD = (Message("user", "Move the dev server to port 9090; use pnpm, not npm."),
        Message("assistant", "Editing src/server/config.ts to read PORT=9090 now."),
        Message("user", "Also the staging host is db-stage-03.internal."))


def request(previous=None):
    return SummaryInput("sys", previous, HEAD, 500, 1, 0)


@pytest.mark.parametrize("kind", CONTROLS)
def test_a_control_has_the_size_of_the_summary_under_test(kind):
    real = "## Goal\nMove the dev server to port 9090 with pnpm; config in src/server/config.ts."
    out = ControlSummarizer(kind, Fixed(real)).summarize(request())
    tokens = counter("o200k")
    size = tokens.count_text(real)
    assert out.model == f"control:{kind}" and out.extra["size_tokens"] == size
    assert out.usage == "billed"  # the call that sized it is what a control costs
    if kind == "empty":
        assert out.text == ""
    else:
        assert 0 < tokens.count_text(out.text) <= size + 2


def test_the_keyword_bag_holds_values_and_no_sentences():
    bag = keyword_bag([(True, m.content) for m in HEAD] + [(False, "Traceback pnpm-lock.yaml 9090")], 30,
                      counter("o200k"))
    words = bag.split(" ")
    assert "9090" in words and "pnpm" in words and "src/server/config.ts" in words
    assert "the" not in words and not any(w.endswith(".") for w in words)  # tokens, no sentences
    assert words.index("9090") < words.index("Move")  # said twice
    said = {w for m in HEAD for w in m.content.replace(";", " ").replace(",", " ").split()}
    tool_words = [i for i, w in enumerate(words) if w in ("Traceback", "pnpm-lock.yaml")]
    assert all(i > max(j for j, w in enumerate(words) if w in said) for i in tool_words)  # what was said first
    assert counter("o200k").count_text(bag) <= 30


def test_the_bags_order_carries_nothing_of_the_order_said():
    # the same words said once each, in two orders: the bag is the same, so no value sits beside the word that
    # was said with it by construction (a bag in the order said is the stripped head, its own control)
    said = "queue billing-slow drain nightly warehouse checkpoints retention 14d"
    reordered = " ".join(reversed(said.split()))
    bag = keyword_bag([(True, said)], 100, counter("o200k"))
    assert bag == keyword_bag([(True, reordered)], 100, counter("o200k"))
    assert sorted(bag.split(" ")) == sorted(said.split())


def test_the_stripped_head_is_the_head_as_said_less_function_words():
    docs = [(True, m.content) for m in HEAD] + [(False, "Traceback pnpm-lock.yaml 9090")]
    out = stripped_head(docs, 500, counter("o200k"))
    assert out.startswith("Move dev server port 9090 use pnpm npm Editing src/server/config.ts")
    assert out.endswith("db-stage-03.internal Traceback pnpm-lock.yaml")  # tool output after, each word once
    assert out.split(" ").count("9090") == 1 and "the" not in out.split(" ")


def test_head_first_and_last_are_transcript_slices():
    first = ControlSummarizer("head-first", Fixed("x " * 8)).summarize(request()).text
    last = ControlSummarizer("head-last", Fixed("x " * 8)).summarize(request()).text
    assert first.startswith("[user] Move the dev") and last.endswith("db-stage-03.internal.")
    assert ControlSummarizer("head-first", Fixed("x " * 8)).summarize(request("EARLIER")).text.startswith("EARLIER")


def test_the_bag_in_lines_and_dotted_holds_the_same_tokens_laid_out():
    docs = [(True, m.content) for m in HEAD]
    tokens = counter("o200k")
    run, lined, dotted = (keyword_bag(docs, 60, tokens, layout) for layout in ("run", "lined", "dotted"))
    assert all(len(line.split(" ")) <= 10 for line in lined.splitlines()) and len(lined.splitlines()) > 1
    assert lined.split() == run.split()[:len(lined.split())]  # the same ranking, cut into lines
    assert all(word.endswith(".") for word in dotted.split(" "))
    assert tokens.count_text(lined) <= 60 and tokens.count_text(dotted) <= 60


def test_value_dump_labels_each_value_with_the_words_before_it():
    from harness.compaction.controls import value_dump

    tokens = counter("o200k")
    docs = [(True, m.content) for m in HEAD] + [(False, "Traceback (most recent call last)\nValueError: port")]
    dump = value_dump(docs, 200, tokens).splitlines()
    assert "server to port: 9090" in dump and "Editing: src/server/config.ts" in dump  # three words before it
    assert "staging host is: db-stage-03.internal" in dump
    assert len(dump) == len(set(dump))  # each value once


LONG = (Message("user", "Build the importer.\n" + "Paste of the spec, a long line. " * 200),
        Message("assistant", "Reading spec.md first.\nThe parser lives in src/parse.py."),
        Message("tool", "secret tool output line"),
        Message("user", "Use port 9090 for the dev server."),
        Message("assistant", "Switched to 9090.\nNext: run the tests."))


def long_request():
    return SummaryInput("sys", "Earlier: the repo is at /work/x.", LONG, 500, 1, 0)


@pytest.mark.parametrize("kind", ["line-picker", "last-lines", "user-messages"])
def test_no_single_message_fills_a_line_extract(kind):
    from harness.compaction import extracts

    tokens = counter("o200k")
    text = getattr(extracts, kind.replace("-", "_"))(long_request(), 120, tokens)
    assert tokens.count_text(text) <= 120 and "secret tool output" not in text  # what was said, not tool output
    assert "Switched to 9090." in text  # the pasted spec took at most its quarter of the budget
    spec = [line for line in text.splitlines() if line.startswith("Paste of the spec")]
    assert len(spec) <= 1 and all(tokens.count_text(line) <= 30 for line in spec)  # cut at a word's end
    lines = [line for line in text.splitlines() if line]
    said = [line for m in (long_request().previous_summary, *(m.content for m in LONG)) for line in m.splitlines()]
    places = [said.index(next(s for s in said if s.startswith(line))) for line in lines]
    assert places == sorted(places)  # printed in the order said
    sources = [long_request().previous_summary, *(m.content for m in LONG)]
    for paragraph in text.split("\n\n"):  # each message's lines are a paragraph of their own
        assert len({next(i for i, s in enumerate(sources) if line in s) for line in paragraph.splitlines()}) == 1


def test_each_line_extract_takes_what_it_is_named_for_first():
    from harness.compaction.extracts import last_lines, line_picker, user_messages

    tokens = counter("o200k")
    picked = line_picker(long_request(), 60, tokens).splitlines()
    assert "Earlier: the repo is at /work/x." in picked and "Reading spec.md first." in picked  # first lines first
    assert "The parser lives in src/parse.py." not in picked  # second lines only once every first line is in
    assert last_lines(long_request(), 60, tokens).splitlines()[-2:] == ["Switched to 9090.", "Next: run the tests."]
    users = user_messages(long_request(), 60, tokens)
    assert "Build the importer." in users and "Use port 9090 for the dev server." in users
    assert "Reading spec.md first." not in users  # the assistant's oldest lines come last of all


def test_an_unknown_control_is_refused():
    with pytest.raises(ValueError, match="unknown control"):
        ControlSummarizer("lucky", Fixed("x"))


# A small case the default policy compacts (twice) with every probe after a compaction: each of the ten runs
# (the summarizer and nine controls) replays and grades it whole.
CONTROLLED_CASE = "auto-real-django-15814"


def test_run_with_controls_runs_each_control_beside_the_summarizer(tmp_path, capsys):
    import json
    from pathlib import Path

    from harness.cli import main

    cases = str(Path(__file__).resolve().parent.parent / "cases")
    assert main(["run", "--cases-dir", cases, "--cases", CONTROLLED_CASE, "--controls",
                 "--out", str(tmp_path)]) == 0
    runs = {p.name: json.loads((p / "run.json").read_text()) for p in tmp_path.iterdir() if (p / "run.json").exists()}
    assert sorted(runs) == sorted(["default-builtin-same", *(f"default-builtin-same-control-{c}" for c in CONTROLS)])
    bag = runs["default-builtin-same-control-keyword-bag"]
    assert bag["configuration"]["control"] == "keyword-bag"
    assert {s["model"] for c in bag["cases"].values() for s in c["summaries"]} == {"control:keyword-bag"}
    assert "control" not in runs["default-builtin-same"]["configuration"]
    assert "### Reference controls beside default-builtin-same" in (tmp_path / "comparison.md").read_text()
    assert "### Reference controls beside" in (tmp_path / "default-builtin-same" / "report.md").read_text()
    study = json.loads((tmp_path / "comparison.json").read_text())["controls"]
    base = runs["default-builtin-same"]["aggregates"]["headline"]["answered"]["tests_summary"]
    for control in CONTROLS:  # over the probes that test the summary under test, counted as its headline counts
        overall = study["grades"]["answered"][control]["overall"]
        assert overall["probes"] == base["total"] and overall["summarizer"] == base["passed"]
        assert overall["separated"] == (overall["p_value"] < study["separates_below"])
    assert base["total"] > 0  # the controls were compared on probes that test a summary
    assert set(study["grades"]["answered"]["keyword-bag"]["by_case"]) == {CONTROLLED_CASE}
    assert main(["run", "--cases-dir", cases, "--cases", CONTROLLED_CASE, "--control", "lucky",
                 "--out", str(tmp_path / "x")]) == 2
    assert "--control lucky: choose one of " + ", ".join(CONTROLS) in capsys.readouterr().err
