"""Reading a summary as a document: each structure binds what it holds, and no further (issue 42)."""

import pytest

from harness.cases.schema import Probe
from harness.matching import Haystack
from harness.probes import ContextText, retained
from harness.statements import statements


def kept(summary: str, anchor=("port",), all_=(("9090",),), none=()) -> bool:
    probe = Probe(id="p", kind="recall", question="q?", all=all_, none=none, anchor=anchor, planted_at=0)
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
