"""Matchers, the three controls, and grading."""

from harness.cases.schema import Probe
from harness.compaction import ContextSnapshot
from harness.metrics import check_summary, mcnemar_exact, normalised_retention, wilson
from harness.matching import normalise
from harness.probes import conditions, match, parse_judgement, retained
from harness.session import Message, Session, ToolCall


def probe(**fields):
    base = {"id": "p", "kind": "recall", "question": "q?", "all": (("9090",),), "planted_at": 0}
    return Probe(**{**base, **fields})


def test_normalise_case_whitespace_and_path_separators():
    assert normalise("  Src\\Auth\\Session.PY \n\t now ") == "src/auth/session.py now"


def test_all_items_with_alternatives():
    p = probe(all=(("pnpm",), ("9090", "port nine thousand ninety")))
    assert match("Use PNPM; the port is 9090.", p).passed
    assert match("use pnpm on port nine thousand  ninety", p).passed
    result = match("use npm on port 9090", p)
    assert not result.passed and result.missing == ("pnpm",)


def test_none_items_fail_an_answer_that_states_them_but_not_one_that_tells_the_history():
    p = probe(all=(("9090",),), none=("8080",))
    assert match("It moved from 8080 to 9090.", p).passed
    answer = match("9090 or 8080", p)
    assert not answer.passed and answer.forbidden == ("8080",)
    assert retained("first 8080, later 9090", p).passed  # a verbatim history holds superseded values
    # ... but a summary that states the superseded value as current does not retain the fact
    from harness.probes import ContextText
    from harness.matching import Haystack

    assert not retained(ContextText(Haystack("port 9090"), Haystack("port 8080")), p).passed
    assert retained(ContextText(Haystack(""), Haystack("port 9090 (was 8080)")), p).passed


def test_a_summary_retains_a_fact_only_in_a_statement_that_names_its_referent():
    from harness.probes import ContextText
    from harness.matching import Haystack

    p = probe(all=(("9090",),), anchor=("port",))

    def kept(summary: str) -> bool:
        return retained(ContextText(Haystack(""), Haystack(summary)), p).passed

    bag = " ".join(f"token{i}" for i in range(80)) + " 9090 " + " ".join(f"word{i}" for i in range(20))
    assert not kept(bag) and not kept(bag + " port")  # a run of words binds the fact to nothing far from it
    assert retained(ContextText(Haystack(bag)), p).passed  # verbatim history counts wherever it says it
    assert kept("## Decisions\n- The dev server port is 9090.")
    # the referent elsewhere: another paragraph (a paragraph's own sentences share one subject: test_statements.py)
    assert not kept("The dev server listens on 9090.\n\nThe port question is open.")
    assert not kept("port. 9090. staging. deploy.")  # one token a sentence: nothing is bound
    assert kept("goal: ship the flag; dev server port: 9090; tests green")  # a one-line summary, clause by clause
    long_request = "The user asked: " + " ".join(["please"] * 70) + " keep the port at 9090"
    assert kept(long_request)  # no word-count limit: a quoted 70-word request is one statement
    assert not kept("port " + " ".join(["and"] * 11) + " 9090")  # eleven words apart: not beside it
    self_anchored = probe(all=(("port 9090",),), anchor=("port",))
    assert not retained(ContextText(Haystack(""), Haystack("port 9090")), self_anchored).passed  # never itself


def test_an_anchor_inside_the_token_that_holds_the_fact_does_not_bind_it():
    from harness.probes import ContextText
    from harness.matching import Haystack

    doc = probe(all=(("shadow-branch-suffixes.md",),), anchor=("architecture",))

    def kept(summary: str, p=doc) -> bool:
        return retained(ContextText(Haystack(""), Haystack(summary)), p).passed

    assert not kept("see `docs/architecture/shadow-branch-suffixes.md` next")  # the path names its own folder
    assert kept("architecture doc: docs/architecture/shadow-branch-suffixes.md")  # the referent written beside it
    assert kept("The architecture notes live in docs/architecture/shadow-branch-suffixes.md")
    pr = probe(all=(("89",),), anchor=("stack*",))
    assert not kept("https://github.com/org/stack/pull/89", pr) and kept("stack order: https://x/pull/89", pr)
    relay = probe(all=(("wss://relay.x.dev/v3",),), anchor=("vite_relay_url",))
    assert kept("VITE_RELAY_URL=wss://relay.x.dev/v3", relay)  # `=` binds a name to its value
    assert not kept("wss://relay.x.dev/v3", probe(all=(("wss://relay.x.dev/v3",),), anchor=("relay",)))
    phrase = probe(all=(("merge base",),), anchor=("rebase",))
    assert kept("rebase onto the merge base first", phrase)  # a phrase item: its neighbours still bind it
    assert not kept("- docs/architecture/shadow-branch-suffixes.md:\n  - docs/architecture/shadow-branch-suffixes.md")
    assert kept("## Architecture\n- docs/architecture/shadow-branch-suffixes.md")  # a heading of its own


def test_a_heading_or_parent_item_names_the_referent_of_the_lines_under_it():
    from harness.probes import ContextText
    from harness.matching import Haystack

    p = probe(all=(("9090",),), anchor=("port",))

    def kept(summary: str) -> bool:
        return retained(ContextText(Haystack(""), Haystack(summary)), p).passed

    assert kept("## Dev server port\n- 9090, set in config.ts")
    assert kept("Port settings:\n9090 on staging")
    assert kept("- `config.ts` (port):\n  - changed to 9090")
    assert not kept("## Budget\n- 9090 units\n## Port\n- unchanged")  # the heading of another section
    assert not kept("- port\n- 9090")  # a sibling line is no heading
    assert kept("## Port; 9090; tests green") and kept("Port:; 9090")  # the same structure joined into one line
    assert not kept("## Budget; 9090 units; ## Port; unchanged")


def test_without_an_anchor_the_question_s_content_words_bind_the_fact():
    from harness.probes import ContextText, anchors
    from harness.matching import Haystack

    p = probe(question="Which port does the staging API listen on?")
    assert set(anchors(p)) >= {"port", "stag*", "api", "listen*"} and "which" not in anchors(p)
    assert retained(ContextText(Haystack(""), Haystack("Staging API: 9090")), p).passed
    assert not retained(ContextText(Haystack(""), Haystack("Budget: 9090 dollars")), p).passed


def test_an_item_stated_as_absent_does_not_pass():
    small = probe(question="What did the user ask about the size of commits?", all=(("small",),))
    assert not match("No small ones.", small).passed and match("Keep commits small.", small).passed
    port = probe(all=(("8080",),))
    assert not match("Not 8080.", port).passed and not match("it is not `8080`", port).passed
    assert match("It was 8080.", port).passed and match("changed from 9090 to 8080", port).passed  # history stays
    retried = probe(question="What happened to the failed upload?", all=(("retried",),))
    assert not match("It was never retried.", retried).passed and not match("They don't retry; not retried", retried).passed
    assert match("It was retried twice.", retried).passed
    from harness.probes import ContextText
    from harness.matching import Haystack

    assert not retained(ContextText(Haystack(""), Haystack("Commit size: no small ones")), small).passed


def test_a_question_about_an_absence_accepts_the_negated_item():
    p = probe(question="Which kinds of files must the agent not modify?", all=(("tests",),))
    assert match("Do not modify tests.", p).passed and match("never the tests", p).passed


def test_a_long_answer_binds_each_item_to_the_referent_a_short_one_need_not():
    p = probe(all=(("9090",),), anchor=("port",))
    assert match("9090", p).passed
    filler = " ".join(["the", "work", "went", "on"] * 10)
    assert not match(f"{filler}. Budget was 9090 units. The port was discussed.", p).passed
    assert match(f"{filler}. The port is 9090.", p).passed


def test_regex_shapes_answers_and_counts_alone_for_retention():
    p = probe(all=(("9090",),), regex=r"^\s*9090\s*$")
    assert match("9090", p).passed and not match("port 9090", p).passed
    only_regex = probe(all=(), regex=r"ticket-\d+")
    assert retained("see TICKET-42", only_regex).passed


def test_conditions_compacted_full_floor():
    messages = tuple(Message("user", f"m{i}") for i in range(6))
    session = Session(messages, "sys")
    snap = ContextSnapshot("end", 6, 4, "SUMMARY", 1, 0, 0)
    c = conditions(session, snap)
    assert [m.content for m in c["compacted"].messages] == ["m4", "m5"] and c["compacted"].summary == "SUMMARY"
    assert [m.content for m in c["floor"].messages] == ["m4", "m5"] and c["floor"].summary is None
    assert [m.content for m in c["full"].messages] == [f"m{i}" for i in range(6)]
    assert c["compacted"].chat()[0].content == "SUMMARY"
    assert c["compacted"].text().summary.raw == "SUMMARY" and c["floor"].text().summary is None
    assert "sys" not in c["compacted"].text().verbatim.raw and "sys" not in c["full"].text().verbatim.raw


def test_judgement_parsing_is_strict():
    import pytest

    from harness.probes import JudgeReplyError

    assert parse_judgement('{"score": 4, "reason": "mostly right"}') == (4, "mostly right")
    assert parse_judgement('```json\n{"score": 0, "reason": "wrong port"}\n```') == (0, "wrong port")
    for bad in ("score: 4\nmostly right", '{"score": 7, "reason": "x"}', '{"score": "5", "reason": "x"}',
                '{"score": 5}', "[5]", '{"score": true, "reason": "x"}'):
        with pytest.raises(JudgeReplyError):
            parse_judgement(bad)


def test_statistics():
    low, high = wilson(8, 10)
    assert round(low, 3) == 0.490 and round(high, 3) == 0.943  # textbook Wilson 95% for 8/10
    assert wilson(0, 0) is None
    assert normalised_retention(0.8, 1.0, 0.4) == (0.8 - 0.4) / 0.6
    assert normalised_retention(0.5, 0.4, 0.4) is None
    assert mcnemar_exact(0, 6) == 2 * (1 / 64)
    assert mcnemar_exact(3, 3) == 1.0


def test_summary_level_checks():
    head = (Message("assistant", "", (ToolCall("1", "edit_file", {"path": "src/app/main.py"}),
                                      ToolCall("2", "read_file", {"path": "src/app/db.py"}))),
            Message("tool", "ok", tool_call_id="1"), Message("tool", "ok", tool_call_id="2"))
    summary = "## Goal\nfix\n## Files\n- src/app/main.py edited\n- src/app/ghost.py\n## Next steps\nport 8080"
    check = check_summary(1, summary, head, None, 1000, 100, ("Goal", "Files", "Errors", "Next steps"), ("8080",))
    assert check.compression_ratio == 10.0
    assert check.sections_missing == ("Errors",)
    assert check.artifact_recall == 0.5 and check.artifact_precision == 0.5
    assert check.hallucinated_paths == ("src/app/ghost.py",)
    assert check.stale_facts == ("8080",)
    # stale means stated as current, on token boundaries (the full rules: tests/test_summary_checks.py)
    moved = summary.replace("port 8080", "port 9090 (changed from 8080); proxy on 18080")
    assert check_summary(1, moved, head, None, 1000, 100, (), ("8080",)).stale_facts == ()


def test_summary_request_keeps_the_context_prefix_and_a_split_turn_section():
    from harness.compaction.summarizer import SummaryInput, summary_request

    kept = (Message("user", "keep the API stable"),)
    head = (Message("user", "fix the parser"), Message("assistant", "looking"))
    request = SummaryInput("sys", "[Summary 1] earlier", head, 500, 2, 3, kept=kept, split_turn_start=3)
    sent = summary_request(request, "m")
    assert [m.content for m in sent.messages[:4]] == ["keep the API stable", "[Summary 1] earlier", "fix the parser",
                                                      "looking"]
    assert sent.cache_prefix_messages == 4 and sent.system == "sys" and sent.max_output_tokens == 500
    assert "## Turn in progress" in sent.messages[-1].content and "## Goal" in sent.messages[-1].content
    fresh = summary_request(request, "m", shape="fresh")
    assert fresh.system != "sys" and len(fresh.messages) == 1  # the shape that breaks the prefix


class Scripted:
    """A model client that replies with the given texts in turn (probes logic only, no adapter involved)."""

    def __init__(self, *replies):
        self.replies, self.requests = list(replies), []

    def complete(self, request):
        from harness.models.base import ModelResponse

        self.requests.append(request)
        return ModelResponse(self.replies.pop(0), None, 0.0, request.model, "stop")


def test_a_malformed_judge_reply_is_retried_once_then_recorded_as_an_error_not_a_zero():
    from harness.probes import judge_answer, judge_request

    p = probe(all=(("9090",),), none=("8080",), rubric="only 9090")
    request = judge_request(p, "It is 9090.", "j")
    import json as _json

    fields = _json.loads(request.messages[0].content)
    assert fields == {"question": "q?", "expected": [["9090"]], "must_not_state": ["8080"], "rubric": "only 9090",
                      "answer": "It is 9090."}
    judge = Scripted("score: 5", '{"score": 5, "reason": "right port"}')
    assert judge_answer(judge, p, "It is 9090.", "j") == (5, "right port")
    assert "previous reply was rejected" in judge.requests[1].messages[0].content
    score, error = judge_answer(Scripted("five", "still five"), p, "It is 9090.", "j")
    assert score is None and error.startswith("judge error: not JSON")


def test_a_fact_only_in_the_system_prompt_is_not_retained_and_is_reported():
    from harness.probes import grade

    session = Session((Message("user", "hello"), Message("assistant", "hi")), "escalate to the on-call engineer")
    snap = ContextSnapshot("end", 2, 1, "SUMMARY: nothing", 1, 0, 0)
    compacted = conditions(session, snap)["compacted"]
    result = grade(compacted, probe(all=(("escalate",),)), None, "")
    assert not result.retained and result.in_system_prompt == ("escalate",)


def test_only_probes_after_a_compaction_that_the_floor_misses_test_the_summary():
    from harness.probes import probe_group

    assert probe_group(True, 1, False) == "tests_summary"
    assert probe_group(True, 2, True) == "floor_answers"
    assert probe_group(True, 0, False) == "no_compaction"
    assert probe_group(False, 3, False) == "invalid"


def test_self_tests_name_the_example_that_fails():
    from harness.probes import example_problems

    p = probe(all=(("9090",),), none=("8080",), accept=("9090", "Port 9090 (was 8080)."), reject=("8080", "8080 or 9090"))
    assert example_problems(p) == []
    bad = probe(all=(("9090",),), accept=("nine thousand and ninety",), reject=("9090 or 8080",))
    assert example_problems(bad) == ["accept example 'nine thousand and ninety' fails (missing '9090')",
                                     "reject example '9090 or 8080' passes (every item present, nothing forbidden stated)"]


def test_the_evidence_check_reads_tool_arguments_as_written():
    """`cases validate`: the anchor must stand beside the fact where the session establishes it. A tool call is read
    as its name, argument names and values, once, in its own order: line breaks in a file's content separate words
    (a JSON rendering glued `\\nCHECKPOINT_TABLE` into one token), and the text before a call reaches its path."""
    from harness.probes import anchor_problems, evidence_text

    content = "import json\n\nCHECKPOINT_TABLE = '_ckpts'\n" + "x = 1\n" * 200
    write = ToolCall("c1", "write_file", {"path": "src/state/store.py", "content": content})
    said = Message("assistant", "Adding the checkpoint store.", tool_calls=(write,))
    session = Session((Message("user", "go"), said))
    assert "\nCHECKPOINT_TABLE" in evidence_text(said) and evidence_text(said).count("src/state/store.py") == 1
    table = probe(question="What is it set to?", all=(("_ckpts",),), anchor=("checkpoint_table",), planted_at=1)
    store = probe(question="Which file?", all=(("src/state/store.py",),), anchor=("checkpoint*",), planted_at=1)
    assert anchor_problems(table, session) == [] and anchor_problems(store, session) == []
    unbound = probe(question="Which file?", all=(("src/state/store.py",),), anchor=("reaper",), planted_at=1)
    assert "stands within 40 words of none of its facts in message 1" in anchor_problems(unbound, session)[0]
    # the item never anchors itself through a second copy of the call: only a word beside it does
    self_named = probe(question="Which file?", all=(("src/state/store.py",),), anchor=("store*",), planted_at=1)
    assert anchor_problems(self_named, Session((Message("user", "go"), Message("assistant", "", tool_calls=(write,)))))
