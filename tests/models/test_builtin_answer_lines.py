"""The builtin answerer's reply: the best unit, joined by close runners-up from other messages."""

from __future__ import annotations

from harness.models.base import ChatMessage as M
from harness.models.base import ModelRequest
from harness.models.builtin import BuiltinClient

FILLER = tuple(M("assistant", f"Step {i}: formatted module number {i} and ran the linter.") for i in range(20))


def ask(history: tuple[M, ...], question: str) -> str:
    return BuiltinClient().complete(ModelRequest("builtin", None, (*history, M("user", question)), 200)).text


def test_a_two_part_answer_joins_the_fact_from_another_message() -> None:
    history = (M("user", "Write the caching guide."), *FILLER[:10],
               M("assistant", "The caching guide credits Jeff Dean for the latency table."), *FILLER[10:],
               M("assistant", "The caching guide text comes from the Abseil performance tips."))
    reply = ask(history, "Whom does the caching guide credit, and where does its text come from?")
    assert "Jeff Dean" in reply and "Abseil" in reply


def test_a_value_question_is_answered_with_one_line() -> None:
    history = (M("user", "The staging port is 7421."), *FILLER, M("user", "Staging port changed to 7555 now."))
    reply = ask(history, "Which port does staging use now?")
    assert "7555" in reply and "7421" not in reply and "\n" not in reply


def test_a_stale_statement_is_not_added_beside_the_answer() -> None:
    history = (M("user", "Deploy the billing service with 3 replicas."), *FILLER,
               M("user", "Update: deploy the billing service with 5 replicas instead."))
    reply = ask(history, "How should the billing service be deployed?")
    assert "5 replicas" in reply and "3 replicas" not in reply


def test_a_tool_call_answer_carries_what_the_call_printed() -> None:
    from harness.models.base import ToolCallSpec

    history = (M("user", "Keep the suite green."), *FILLER,
               M("assistant", "Running the suite.", (ToolCallSpec("c1", "bash", {"command": "pnpm test --reporter dot"}),)),
               M("tool", "........\n345 passed, 0 failed", tool_call_id="c1"))
    reply = ask(history, "What did `pnpm test --reporter dot` print?")
    assert reply.splitlines()[:2] == ["bash: command=pnpm test --reporter dot", "345 passed, 0 failed"]
    assert reply.count("345") == 1
