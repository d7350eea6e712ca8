"""The builtin reference model: deterministic, offline, no weights.

It reads a ModelRequest the way an LLM would and picks one of three modes:
- judge:   the system prompt asks to grade/score an answer 0 to 5  -> {"score": N, "reason": ...} (judge.py)
- summary: the last user message asks for a summary/to summarize, or the request is labelled `summary...`
                                                                   -> an extractive sectioned summary (summary.py)
- answer:  anything else                                           -> the best-matching lines of the context (answer.py)
"""

from __future__ import annotations

import re
import time

from harness.models import _tokens
from harness.models.base import ModelClient, ModelRequest, ModelResponse, Usage
from harness.models.builtin.answer import answer
from harness.models.builtin.context import ContextCache
from harness.models.builtin.judge import judge
from harness.models.builtin.summary import summarize
from harness.models.builtin.text import last_user, request_tokens


_SUMMARY_ASK = re.compile(r"\b(summar(y|ies|ize|ise|izing|ising)|compact(ion)?)\b", re.I)
_JUDGE_ASK = re.compile(r"\b(grade|score|judge|rate)\b", re.I)
_ZERO_TO_FIVE = re.compile(r"\b0\s*(to|-|–|and)\s*5\b")


def detect_mode(request: ModelRequest) -> str:
    """judge, summary or answer: what the request asks of the model."""
    system = request.system or ""
    if _JUDGE_ASK.search(system) and _ZERO_TO_FIVE.search(system):
        return "judge"
    if request.label.startswith("summary"):  # the caller knows it asks for a summary (a runtime's compaction
        return "summary"                     # prompt may not say the word: "Generate a new <state_snapshot>")
    instruction = last_user(request)
    # a question asked of the conversation may name a summary or the compaction ("what was the agent doing at
    # the moment of compaction?"): only the instruction around it can ask for one
    if instruction is not None and _SUMMARY_ASK.search(instruction.content.split("Question:", 1)[0]):
        return "summary"
    return "answer"


def respond(request: ModelRequest, contexts: ContextCache | None = None) -> tuple[str, str]:
    """(reply text, finish reason) for any request. `contexts` is the caller's cache of analysed contexts;
    without one the request gets a fresh cache, so nothing is shared with anyone."""
    return _reply(detect_mode(request), request, ContextCache() if contexts is None else contexts)


def _reply(mode: str, request: ModelRequest, contexts: ContextCache) -> tuple[str, str]:
    if mode == "judge":
        return judge(request)
    if mode == "summary":
        return summarize(request)
    return answer(request, contexts)


class BuiltinClient(ModelClient):
    """The builtin model as a client; each client keeps its own cache of analysed contexts."""

    spec = "builtin"
    name = "builtin"

    def __init__(self) -> None:
        self._contexts = ContextCache()

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        mode = detect_mode(request)
        text, finish = _reply(mode, request, self._contexts)
        usage = Usage(input_tokens=request_tokens(request), output_tokens=_tokens.count(text))
        return ModelResponse(
            text=text, usage=usage, latency_s=time.perf_counter() - started, model="builtin",
            finish_reason=finish, latency_source="live", raw={"mode": mode},
        )
