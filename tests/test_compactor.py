"""The auto-compaction path: trigger on every send, fold, lookup, off, successive compactions."""

from dataclasses import dataclass, field

from harness.compaction.compactor import Compactor
from harness.policy import PolicyConfig, make_policy
from harness.session import CompactionRecord, Session
from harness.compaction.summarizer import PlaceholderSummarizer, SummaryInput, SummaryResult

from harness.tokens import counter

from builders import Builder


@dataclass
class Recording:
    """Remembers what each compaction was given; summarizes by listing the message tags it saw."""

    name: str = "recording"
    calls: list[SummaryInput] = field(default_factory=list)

    def summarize(self, request: SummaryInput) -> SummaryResult:
        self.calls.append(request)
        seen = [m.content.split()[0] for m in request.head]
        return SummaryResult("covered: " + " ".join(seen))


def long_session(turns=12, result=6000):
    b = Builder()
    for _ in range(turns):
        b.user(50)
        b.step(result)
        b.step()
    return b.session()


def run(session, **settings):
    summarizer = Recording()
    settings.setdefault("context_window", 32768)
    policy = make_policy("default", PolicyConfig(**settings))
    replay = Compactor(session, policy, summarizer, points=("end", "compaction:1", "compaction:2")).run()
    return replay, summarizer


def test_compacts_on_the_send_where_the_estimate_reaches_the_trigger():
    session = long_session()
    replay, summarizer = run(session)
    assert replay.events, "a 12 x 6K session on a 32K window must compact"
    first = replay.events[0]
    assert first.tokens_before_est >= 32768 - 16384
    assert session.messages[first.send_index].role == "assistant" or first.send_index == len(session.messages)
    # the send just before did not trigger: recompute its estimate by hand
    from harness.tokens import MessageTokens, counter
    estimate = MessageTokens(counter("chars4"), session.messages)
    system = estimate.text(session.system)
    previous_send = max(i for i in range(first.send_index) if session.messages[i].role == "assistant")
    assert system + estimate.span(range(previous_send)) < 32768 - 16384
    assert first.tokens_after_est < first.tokens_before_est
    assert replay.notices[0].startswith("context compacted")


def test_successive_compactions_pass_the_previous_summary_once_and_drop_nothing_unseen():
    session = long_session(turns=20)
    replay, summarizer = run(session)
    assert len(replay.events) >= 3
    assert summarizer.calls[0].previous_summary is None
    for previous, call in zip(replay.events, summarizer.calls[1:]):
        # the summary in effect is given once, as the previous summary, and the head starts where
        # the previous compaction's tail started: what it kept is folded now, not lost
        assert call.previous_summary is not None and call.previous_summary.count("covered:") == 1
        assert call.head_start == previous.tail_start
    folded = set()
    for call in summarizer.calls:
        folded.update(range(call.head_start, call.head_start + len(call.head)))
    end = replay.snapshots["end"]
    kept = set(range(end.live_start, end.end))
    assert folded | kept == set(range(len(session.messages)))
    assert not folded & kept


def test_snapshots_at_probe_points():
    session = long_session(turns=20)
    replay, _ = run(session)
    after_first = replay.snapshots["compaction:1"]
    assert after_first.compactions == 1 and after_first.summary.startswith("[Summary")
    assert after_first.live_start == replay.events[0].tail_start
    assert replay.snapshots["end"].end == len(session.messages)


def test_off_never_compacts_and_reports_the_overflow():
    replay, summarizer = run(long_session(), mode="off")
    assert not replay.events and not summarizer.calls
    assert replay.risk_counts()["response_may_be_cut"] > 0


def with_block(session: Session, covers: int, position: int) -> Session:
    block = CompactionRecord("MANUAL SUMMARY of the early work", covers, position)
    return Session(session.messages, session.system, (block,), session.path)


def test_lookup_reuses_the_latest_block_without_a_model_call():
    base = long_session()
    session = with_block(base, covers=12, position=12)
    replay, summarizer = run(session, mode="lookup")
    assert not summarizer.calls
    first = replay.events[0]
    assert (first.source, first.tail_start, first.summarizer) == ("lookup", 12, "lookup")
    assert replay.snapshots["compaction:1"].summary == "MANUAL SUMMARY of the early work"
    # once the block is used up, a later trigger has nothing to reuse
    assert replay.risk_counts()["lookup_without_block"] >= 1


def test_lookup_without_a_block_changes_nothing():
    replay, summarizer = run(long_session(), mode="lookup")
    assert not replay.events and not summarizer.calls
    assert replay.risk_counts()["lookup_without_block"] > 0
    assert replay.snapshots["end"].live_start == 0


def test_read_write_ignores_blocks_in_the_history():
    session = with_block(long_session(), covers=12, position=12)
    replay, summarizer = run(session)
    assert summarizer.calls and all(e.source == "summarizer" for e in replay.events)


def test_placeholder_summary_has_the_configured_size():
    session = long_session()
    policy = make_policy("default", PolicyConfig(context_window=32768, summary_tokens=1000))
    replay = Compactor(session, policy, PlaceholderSummarizer(), points=("compaction:1",)).run()
    summary = replay.snapshots["compaction:1"].summary
    assert "placeholder summary 1" in summary
    assert 1000 <= counter("chars4").count_text(summary) <= 1030  # the budget, under the runtime's estimate


def test_step_larger_than_the_window_is_a_risk():
    b = Builder()
    b.user(10); b.step(40_000)
    replay, _ = run(b.session())
    assert replay.risk_counts()["step_exceeds_window"] == 1
