"""Every summarizer call of a replay, paired with the compaction it produced or marked rejected (issue 12)."""

import time
from dataclasses import dataclass

from harness.cases import discover
from harness.compaction import Compactor
from harness.compaction.summarizer import PlaceholderSummarizer, SummaryInput, SummaryResult
from harness.policy import PolicyConfig, make_policy
from harness.run.case import evaluate_case
from harness.run.config import RunConfig
from harness.session import dumps_session

from builders import Builder

PROBE = """
[[probe]]
id = "first"
kind = "recall"
question = "What did the first message say?"
all = ["user0"]
planted_at = 0
"""


@dataclass
class Oversized:
    """Stands in for the model summarizer: writes a summary far larger than anything it replaces."""

    client: object
    model: str
    cache: bool = True
    sections: tuple[str, ...] = ()
    template: str | None = None
    name: str = "oversized"

    def summarize(self, request: SummaryInput) -> SummaryResult:
        return SummaryResult("summary of src/app.py " * 20_000, model="oversized")


def long_session(turns=12):
    b = Builder()
    for _ in range(turns):
        b.user(50)
        b.step(3000)
        b.step()
    return b.session()


def gemini_case(root):
    folder = root / "gemini-case"
    folder.mkdir()
    (folder / "session.jsonl").write_text(dumps_session(long_session()), encoding="utf-8")
    (folder / "case.toml").write_text(
        '[case]\nid = "gemini-case"\ntitle = "t"\npool = "edge"\n\n[model]\ncontext_window = 32000\n'
        "max_output_tokens = 1024\n" + PROBE, encoding="utf-8")
    return discover(root)[0]


def test_a_rejected_summary_is_reported_as_rejected_not_measured_against_the_next_compaction(tmp_path, monkeypatch):
    monkeypatch.setattr("harness.run.case.ModelSummarizer", Oversized)
    record = evaluate_case(gemini_case(tmp_path), RunConfig(policy="gemini-cli"))
    assert record["risk_counts"]["summary_rejected"] == 1
    assert record["events"] and all(e["source"] == "truncate" for e in record["events"])
    (summary,) = record["summaries"]
    # The rejected summary's own size, not the truncation's 0 tokens; and no compaction claims it.
    assert summary["rejected"] is True and summary["compaction"] is None
    assert summary["summary_tokens"] > 20_000 and summary["compression_ratio"] is not None


# ---------------------------------------------------------------------------------------------
# the pairing in the replay itself, and what harness_time_s covers


def test_every_kept_summary_is_paired_with_its_own_event():
    replay = Compactor(long_session(30), make_policy("default", PolicyConfig(context_window=32_000,
                                                                             summary_tokens=100)),
                       PlaceholderSummarizer()).run()
    assert len(replay.events) >= 2
    assert [call.event for call in replay.summaries] == replay.events
    assert all(not call.rejected and call.summary_tokens == call.event.summary_tokens for call in replay.summaries)


def test_a_rejected_summary_is_in_the_replay_with_no_event():
    replay = Compactor(long_session(), make_policy("gemini-cli", PolicyConfig(context_window=32_000)),
                       Oversized(None, "m")).run()
    (call,) = replay.summaries
    assert call.rejected and call.event is None and call.summary_tokens > 20_000
    assert replay.events and all(e.source == "truncate" for e in replay.events)


@dataclass
class Slow:
    """Spends `building_s` on harness work before its model and `waiting_s` inside the model client."""

    building_s: float
    waiting_s: float
    name: str = "slow"

    def summarize(self, request: SummaryInput) -> SummaryResult:
        time.sleep(self.building_s)
        called = time.perf_counter()
        time.sleep(self.waiting_s)
        return SummaryResult("short summary", client_time_s=time.perf_counter() - called)


def test_harness_time_counts_request_building_but_not_the_wait_on_the_model():
    policy = make_policy("default", PolicyConfig(context_window=32_000, summary_tokens=100))
    replay = Compactor(long_session(), policy, Slow(building_s=0.03, waiting_s=0.05)).run()
    event = replay.events[0]
    assert event.harness_time_s >= 0.03  # building the request is harness work
    assert event.wall_time_s - event.harness_time_s >= 0.05  # waiting on the model is not
    assert event.harness_time_s < event.wall_time_s - 0.04


def test_a_summary_over_its_budget_is_graded_cut_to_it_and_flagged():
    from harness.compaction.summarizer import SummaryResult, within_budget
    from harness.tokens import counter

    tokens = counter("o200k")
    text = "## State\n" + "\n".join(f"- fact {i}: port {9000 + i} on host h{i}" for i in range(40))
    size = tokens.count_text(text)
    cut = within_budget(SummaryResult(text, "m"), 50, tokens)
    assert tokens.count_text(cut.text) <= 50 and text.startswith(cut.text) and cut.extra["over_budget_tokens"] == size
    assert text[len(cut.text)] in " \n"  # cut at a word's end, never inside one
    kept = SummaryResult(text, "m")
    assert within_budget(kept, size, tokens) is kept and within_budget(kept, 0, tokens) is kept  # within, or none
    item = SummaryResult(text, "m", extra={"provider_item": True})
    assert within_budget(item, 10, tokens) is item  # a provider's item is sent back as it came
