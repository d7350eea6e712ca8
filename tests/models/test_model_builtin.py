from __future__ import annotations

from harness.models import _tokens
from harness.models.base import ChatMessage as M
from harness.models.base import ModelRequest, ToolCallSpec
from harness.models.builtin import BuiltinClient, detect_mode

SECTIONS = "\n".join(f"## {s}" for s in ("Goal", "Constraints", "Progress", "Decisions", "Files", "Errors",
                                          "Next steps"))
INSTRUCTION = M("user", f"Summarize the conversation so far. Use exactly these sections:\n{SECTIONS}")

HISTORY = (
    M("user", "Build a REST API for todos in app/server.py. Use port 8080 for the dev server. "
              "Always use pnpm, never npm."),
    M("assistant", "I'll start by reading the server file.", (ToolCallSpec("c1", "read_file", {"path": "app/server.py"}),)),
    M("tool", "import flask\napp = flask.Flask(__name__)", tool_call_id="c1"),
    M("assistant", "Decided to use FastAPI instead of Flask because handlers are async.",
      (ToolCallSpec("c2", "bash", {"cmd": "pytest -q tests/test_api.py"}),)),
    M("tool", "Traceback (most recent call last):\n  File \"x.py\", line 1\n"
              "ModuleNotFoundError: No module named 'fastapi'", tool_call_id="c2", is_error=True),
    M("user", "Actually use port 9090 now."),
    M("assistant", "Next I will add the DELETE endpoint.",
      (ToolCallSpec("c3", "edit_file", {"path": "app/routes.py", "old": "a", "new": "b"}),)),
    M("tool", "ok", tool_call_id="c3"),
)


def run(messages: tuple[M, ...], budget: int = 2000, system: str | None = "You are a coding agent.") -> str:
    return BuiltinClient().complete(ModelRequest("builtin", system, messages, budget)).text


def section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n\n## ", 1)[0]


def test_modes_are_detected() -> None:
    assert detect_mode(ModelRequest("builtin", None, HISTORY + (INSTRUCTION,), 100)) == "summary"
    assert detect_mode(ModelRequest("builtin", None, HISTORY + (M("user", "Which port?"),), 100)) == "answer"
    judge = ModelRequest("builtin", "Grade the answer with a score from 0 to 5.", (M("user", "Answer: x"),), 100)
    assert detect_mode(judge) == "judge"


def test_summary_has_the_requested_sections_an_exact_values_section_and_the_facts() -> None:
    text = run(HISTORY + (INSTRUCTION,))
    requested = SECTIONS.splitlines()
    assert [line for line in text.splitlines() if line.startswith("## ")] == [*requested[:-1], "## Exact values",
                                                                             requested[-1]]
    assert "Build a REST API" in section(text, "Goal")
    assert "pnpm" in section(text, "Constraints")
    assert "9090" in section(text, "Constraints") and "8080" not in text  # the later value wins
    assert "FastAPI instead of Flask" in section(text, "Decisions")
    files = section(text, "Files")
    assert "app/server.py" in files and "read" in files and "app/routes.py (edited)" in files
    assert "ModuleNotFoundError: No module named 'fastapi'" in section(text, "Errors")
    assert "DELETE endpoint" in section(text, "Next steps")


def test_custom_sections_are_followed() -> None:
    text = run(HISTORY + (M("user", "Write a summary with these sections:\n## Task\n## Open errors"),))
    assert [line for line in text.splitlines() if line.startswith("## ")] == ["## Task", "## Open errors",
                                                                             "## Exact values"]
    assert "fastapi" in text


def test_budget_is_respected_and_drops_oldest_first(monkeypatch) -> None:
    full = run(HISTORY + (INSTRUCTION,))
    small = run(HISTORY + (INSTRUCTION,), budget=110)
    assert _tokens.count(small) <= 110 < _tokens.count(full)
    assert "Build a REST API" in small  # the original goal is kept longest
    # the user's own words outlast the agent's items (rule user-words-last); a small budget really loses some
    assert "pnpm" in small and "9090" in small and "DELETE endpoint" not in small and "path=app/routes.py" in small
    monkeypatch.setenv("HARNESS_BUILTIN_RULES_OFF", "user-words-last")  # without it, the oldest go first
    small = run(HISTORY + (INSTRUCTION,), budget=110)
    assert "DELETE endpoint" in small and "path=app/routes.py" in small and "pnpm" not in small


def test_previous_summary_is_merged() -> None:
    first = run(HISTORY + (INSTRUCTION,))
    later = (M("user", f"Summary of the earlier conversation:\n{first}"),
             M("user", "Don't touch the docs folder."),
             M("assistant", "Let's write the tests for the DELETE endpoint next."),
             INSTRUCTION)
    merged = run(later)
    assert "pnpm" in section(merged, "Constraints") and "docs folder" in section(merged, "Constraints")
    assert "Build a REST API" in section(merged, "Goal")
    assert "app/server.py" in section(merged, "Files")
    assert "ModuleNotFoundError" in section(merged, "Errors")
    assert "write the tests" in section(merged, "Next steps")


def test_answers_prefer_the_latest_value() -> None:
    answer = run(HISTORY + (M("user", "Which port must the dev server listen on now? Answer with the number only."),),
                 budget=100)
    assert "9090" in answer and "8080" not in answer


def test_answers_find_the_error_line() -> None:
    answer = run(HISTORY + (M("user", "What exact error did the tests raise?"),), budget=100)
    assert "ModuleNotFoundError: No module named 'fastapi'" in answer


def test_answer_without_support_says_so() -> None:
    assert run((M("user", "Which database hostname is staging on?"),)) == "I don't know."


def test_the_judge_reads_the_answer_the_facts_and_the_forbidden_values_apart() -> None:
    import json

    from harness.cases.schema import Probe
    from harness.probes import JUDGE_SYSTEM, judge_request, parse_judgement

    probe = Probe("p", "update", "Which port and which package manager now?", (("9090",), ("pnpm",)), ("8080",))

    def judged(answer: str) -> int:
        request = judge_request(probe, answer, "builtin")
        assert request.system == JUDGE_SYSTEM
        reply = BuiltinClient().complete(request).text
        return parse_judgement(reply)[0]  # strict: the reply is the JSON object the rubric asks for

    assert judged("Port 9090 with pnpm.") == 5
    assert judged("9090 (changed from 8080), and pnpm") == 5  # the old value told as history
    assert judged("Port 9090.") == 3  # one of two facts
    assert judged("8080 or 9090, with pnpm") == 1  # right, hedged among a forbidden value
    assert judged("Port 8080 with npm.") == 0
    assert judged("No idea.") == 0
    reply = json.loads(BuiltinClient().complete(judge_request(probe, "Port 9090.", "builtin")).text)
    assert "missing: pnpm" in reply["reason"]


def test_the_judge_without_facts_or_json_says_so() -> None:
    import json

    system = "You grade one answer. Score 0 to 5."
    assert json.loads(run((M("user", "Answer: 9090"),), system=system)) == {
        "score": 0, "reason": "the request holds no JSON object with an answer to grade"}
    assert json.loads(run((M("user", '{"answer": "9090"}'),), system=system))["reason"] == (
        "no expected facts were given to grade against")


def test_the_answerer_never_crashes_on_a_context_of_stopwords() -> None:
    import random

    from harness.models.builtin.text import STOPWORDS

    words, rng = sorted(STOPWORDS), random.Random(1)
    for _ in range(300):
        context = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        question = " ".join(rng.choice(words + ["port", "goal", "next"]) for _ in range(rng.randint(1, 6)))
        reply = run((M(rng.choice(["user", "assistant"]), context), M("user", f"Question: {question}?")), budget=50)
        assert isinstance(reply, str) and reply


def test_deterministic_and_usage_counted() -> None:
    request = ModelRequest("builtin", "sys", HISTORY + (INSTRUCTION,), 500)
    a, b = BuiltinClient().complete(request), BuiltinClient().complete(request)
    assert a.text == b.text and a.usage == b.usage
    assert a.usage.input_tokens > 100 and a.usage.output_tokens == _tokens.count(a.text)
    assert a.usage.cached_input_tokens == 0 and not a.truncated


def test_same_answer_under_any_hash_seed() -> None:
    """Gating needs the same text in every process: set order must never leak into scores."""
    import os
    import subprocess
    import sys

    code = (
        "from harness.models.base import ChatMessage as M, ModelRequest\n"
        "from harness.models.builtin import BuiltinClient\n"
        "msgs = (M('user', 'Use port 8080 and the staging db at db-2.internal. Cache the session tokens.'),\n"
        "        M('assistant', 'Port 8080 works; the db answers.'), M('user', 'Which port and db host now?'))\n"
        "print(BuiltinClient().complete(ModelRequest('builtin', None, msgs, 100)).text)\n"
    )
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(outputs) == 1


def test_tool_listings_do_not_supersede_what_was_said() -> None:
    messages = (
        M("user", "Use Node 20 for now."),
        M("user", "Update: the team decided Node 22 is fine after all; bump engines to node 22.4."),
        M("assistant", "Listing packages.", (ToolCallSpec("c1", "bash", {"cmd": "pnpm ls"}),)),
        M("tool", "@types/node 2.22.4\nesbuild 1.22.4", tool_call_id="c1"),
        M("user", "Which Node version should engines allow now?"),
    )
    assert "after all" in run(messages, budget=100)


def test_question_words_split_snake_case_and_expand_package_manager():
    from harness.models.builtin.question import question_words
    from harness.models.builtin.text import content_words
    assert {"checkpoint", "pipewright"} <= content_words("CHECKPOINT_TABLE = '_pipewright_checkpoints'")
    assert "pnpm" in question_words("Which package manager must be used?")
    assert "pnpm" not in question_words("Which file was changed?")


def _question(text: str, system: str = "sys") -> ModelRequest:
    return ModelRequest("builtin", system, HISTORY + (M("user", text),), 100)


def test_context_cache_is_per_owner_and_bounded() -> None:
    from harness.models.builtin.context import ContextCache

    mine, yours = ContextCache(), ContextCache(size=1)
    assert mine.get(_question("Which port?")) is mine.get(_question("Which db?"))  # one context, two questions
    assert mine.get(_question("Which port?")) is not yours.get(_question("Which port?"))
    kept = yours.get(_question("Which port?"))
    yours.get(_question("Which port?", system="another context"))  # evicts the only entry
    assert yours.get(_question("Which port?")) is not kept


def test_clients_and_respond_share_no_context_cache() -> None:
    from harness.models.builtin import respond

    first, second = BuiltinClient(), BuiltinClient()
    assert first._contexts is not second._contexts
    request = _question("Which port must the dev server use now?")
    assert first.complete(request).text == second.complete(request).text == respond(request)[0]
