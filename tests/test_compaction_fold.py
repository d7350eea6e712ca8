"""fold.prepare: a pure decision, one Fold per compaction, carried out later by the compactor."""

from harness.compaction.context import LiveContext
from harness.compaction.fold import NOTHING, RECORDED, SUMMARIZER, TRUNCATE, prepare
from harness.policy import ModelSummary, Plan, PolicyConfig, RecordedSummary, Tail
from harness.tokens import MessageTokens, counter

from builders import Builder

CONFIG = PolicyConfig(context_window=8_000, summary_tokens=500)


def live(turns=4):
    b = Builder()
    for _ in range(turns):
        b.user(20)
        b.step(400)
    session = b.session()
    context = LiveContext(session, MessageTokens(counter("chars4"), session.messages),
                          MessageTokens(counter("chars4"), session.messages))
    for i in range(len(session.messages)):
        context.append(i)
    return context


def test_a_model_summary_fold_carries_the_request_and_leaves_the_context_alone():
    context = live()
    before = (context.live_start, context.est_total, context.summary)
    fold = prepare(context, CONFIG, context.end, Plan(Tail(6, 1, 1, False), ModelSummary(appendix="[files]")), 1)
    assert fold.source == SUMMARIZER and fold.ask.appendix == "[files]" and not fold.risks
    assert fold.ask.request.head_start == 0 and len(fold.ask.request.head) == 6
    assert fold.ask.request.budget_tokens == 500 and fold.request_tokens > 0
    assert (context.live_start, context.est_total, context.summary) == before


def test_no_summary_truncates_and_a_recorded_one_is_folded_as_is():
    context = live()
    assert prepare(context, CONFIG, context.end, Plan(Tail(6, 1, 1, False), None), 1).source == TRUNCATE
    recorded = prepare(context, CONFIG, context.end, Plan(Tail(4, 0, 0, False), RecordedSummary("as said")), 1)
    assert (recorded.source, recorded.text, recorded.ask) == (RECORDED, "as said", None)


def test_a_tail_that_is_the_whole_context_folds_nothing_and_says_why():
    context = live()
    fold = prepare(context, CONFIG, context.end, Plan(Tail(0, 4, 4, False)), 1)
    assert fold.source == NOTHING and [r.kind for r in fold.risks] == ["nothing_to_fold"]


def test_lookup_without_a_block_in_the_history_folds_nothing():
    context = live()
    fold = prepare(context, CONFIG, context.end, None, 1)
    assert fold.source == NOTHING and [r.kind for r in fold.risks] == ["lookup_without_block"]


def test_an_oversized_request_is_trimmed_from_the_oldest_when_the_policy_asks():
    context = live(turns=12)
    tight = PolicyConfig(context_window=4_000, summary_tokens=500)
    plain = prepare(context, tight, context.end, Plan(Tail(context.end, 0, 0, False)), 1)
    trimmed = prepare(context, tight, context.end,
                      Plan(Tail(context.end, 0, 0, False), ModelSummary(trim_request=True)), 1)
    assert [r.kind for r in plain.risks] == [r.kind for r in trimmed.risks] == ["summary_request_too_big"]
    assert plain.ask.request.head_start == 0 and trimmed.ask.request.head_start > 0
    assert trimmed.request_tokens + 500 <= 4_000 < plain.request_tokens + 500
