"""Reading a summary as a document: each structure binds what it holds, and no further (issue 42)."""

import pytest

from harness.cases.schema import Probe
from harness.matching import Haystack
from harness.probes import ContextText, retained
from harness.statements import statements


def kept(summary: str, anchor=("port",), all_=(("9090",),), none=(), kind="recall") -> bool:
    probe = Probe(id="p", kind=kind, question="q?", all=all_, none=none, anchor=anchor, planted_at=0)
    return retained(ContextText(Haystack(""), Haystack(summary)), probe).passed


def test_a_fact_nested_under_a_section_and_two_labels_is_bound_by_all_of_them():
    summary = ("## Progress So Far\n\n- Started implementing the dev server:\n  - Added:\n    - 9090 in config.go\n"
               "- Something else\n")
    assert kept(summary, anchor=("progress",))  # the section heading, three levels up
    assert kept(summary, anchor=("dev server",))  # the grandparent item
    assert not kept(summary.replace("the dev server", "the parser"), anchor=("dev server",))


def test_a_label_reaches_its_own_list_or_code_block_and_no_further():
    assert kept("Port settings:\n\n- 9090\n")
    assert kept("Port settings:\n\n```\nLISTEN 9090\n```\n")
    # a label line above a dump: the blocks after its own list are not under it
    assert not kept("Port settings:\n\n- 443\n\nBudget figures, one a line.\n\n- 9090 units\n")
    # the plain-text rule (no Markdown structure) is kept: a label line heads the lines below it
    assert kept("Port settings:\n9090 on staging")


def test_a_code_line_or_struct_field_is_bound_by_the_bullet_that_describes_it():
    summary = ("- **`config/server.go`** (Modified)\n  - Raised the dev port in `ServerConfig`:\n"
               "  ```go\n  Port int // 9090 since the proxy moved\n  ```\n")
    assert kept(summary, anchor=("serverconfig",))
    assert kept("- Raised the port:\n  ```\n  LISTEN 9090\n  ```\n")


def test_a_bold_label_written_as_the_bullet_above_its_code_block_binds_it():
    summary = "- Frontend:\n  - **Backend Dockerfile:**\n\n  ```\n  EXPOSE 9090\n  ```\n"
    assert kept(summary, anchor=("dockerfile",))


def test_a_child_bullet_naming_the_parent_s_subject_binds_the_parent_s_fact():
    summary = "- `migrations/024_fix.sql` (NEW)\n  - Prevents role escalation via the client\n- `other.sql`\n"
    assert kept(summary, anchor=("escalation",), all_=(("024_fix.sql",),))
    assert not kept(summary, anchor=("escalation",), all_=(("other.sql",),))  # a sibling's child binds nothing


def test_sentences_in_one_bullet_share_its_subject_but_not_across_bullets():
    summary = "- The simulator was missing on the runner. Used `iPhone 17 Pro` instead.\n- Used `iPhone 15` for CI.\n"
    assert kept(summary, anchor=("simulator",), all_=(("iPhone 17 Pro",),))
    assert not kept(summary, anchor=("simulator",), all_=(("iPhone 15",),))


def test_a_paragraph_s_sentences_share_one_subject_both_ways():
    summary = ("## Notes\n\nThe simulator was missing on the runner. Used `iPhone 17 Pro` instead.\n\n"
               "Used `iPhone 15` for CI.\n")
    assert kept(summary, anchor=("simulator",), all_=(("iPhone 17 Pro",),))  # a paragraph that is no bullet
    assert not kept(summary, anchor=("simulator",), all_=(("iPhone 15",),))  # another paragraph
    summary = "- Two compilation errors in `FeedService.swift`. Let me fix them:\n- `Other.swift` compiled.\n"
    assert kept(summary, anchor=("fix*",), all_=(("FeedService.swift",),))  # the first sentence, by the rest
    assert not kept(summary, anchor=("fix*",), all_=(("Other.swift",),))


def test_an_anchor_binds_in_its_other_forms_but_not_inside_an_identifier():
    assert kept("## Current Work\n\n- Raising the limit to 9090\n", anchor=("currently",))
    assert kept("- On feature branches: 9090 checkpoints\n", anchor=("feature branch",))
    assert not kept("- current_state holds 9090\n", anchor=("currently",))
    assert not kept("- Currency 9090\n", anchor=("currently",))  # another word, another stem
    assert not kept("- On feature flags: 9090 branches\n", anchor=("feature branch",))  # not one run of words


def test_a_summary_is_read_in_order_for_a_fact_that_changed():
    old_then_new = "- The port is 8080 for now.\n- Moved on: the port is 9090.\n"
    assert kept(old_then_new, none=("8080",), kind="update")  # the later value wins
    assert not kept(old_then_new, none=("8080",), kind="recall")  # only a fact that changed is read so
    assert not kept("- The port is 9090.\n- The port is 8080.\n", none=("8080",), kind="update")
    assert not kept("- The port is 8080 or 9090.\n", none=("8080",), kind="update")  # one statement: a hedge


def test_an_entry_marked_done_does_not_remain():
    summary = "Todo:\n\n- ✅ Write the tests\n- [x] Update the changelog\n- ⏳ Write the docs (remaining)\n"
    todo = dict(anchor=("todo",), all_=(("docs",),), none=("tests", "changelog"))
    assert kept(summary, kind="progress", **todo)
    assert not kept(summary, kind="recall", **todo)  # a done mark is no history for a value
    assert not kept(summary.replace("✅ ", ""), kind="progress", **todo)


def test_a_table_row_is_bound_by_its_header():
    summary = "| setting | value |\n| --- | --- |\n| port | 9090 |\n| budget | 443 |\n"
    assert kept(summary)
    assert kept(summary.replace("| setting | value |", "| port setting | value |").replace("| port |", "| dev |"))
    assert not kept(summary, all_=(("443",),), anchor=("dev server",))


def test_none_reads_statements_about_the_referent_not_code_questions_or_other_subjects():
    none = ("8080",)
    assert not kept("- The port is 8080 now.\n- Port 9090 was planned.\n", none=none)
    assert kept("- Port: 9090\n- Run:\n  ```\n  curl localhost:8080/health  # the old port\n  ```\n", none=none)
    assert kept("- Port: 9090\n- Budget: 8080 units\n", none=none)  # 8080 said of another subject
    assert kept("- Port: 9090\n- The user asked: port 8080?\n", none=none)  # a question states no value
    assert kept("- Port: 9090 (initially 8080)\n", none=none)


def test_plain_text_keeps_the_line_and_clause_rule():
    assert [s.text for s in statements("goal: ship; port: 9090")] == ["goal: ship", " port: 9090"]
    assert statements("") == ()
    bag_lines = "alpha beta port gamma\n9090 delta epsilon"
    assert not kept(bag_lines)  # lines without Markdown are lines: a sibling line binds nothing
    assert not kept("port. 9090. staging.")


@pytest.mark.parametrize("summary", [
    "1. **Current Work**:\n   - Build the flag.\n2. **Port settings**:\n   - 9090\n",
    "Notes:\n\n- **Port**: 9090 on staging. Kept after review.\n",
])
def test_a_summary_joined_into_one_line_keeps_its_blocks(summary):
    """Its `;` clauses are read as its lines: the order of its blocks survives, their indentation does not."""
    one_line = "; ".join(line.strip() for line in summary.splitlines() if line.strip())
    assert kept(summary) and kept(one_line)
