"""report.html's per-case timeline: the SVG written directly (harness.render.timeline) against the matplotlib
figure it replaced (`old_timeline_svg`, the code as it was, kept here only to measure against), on a session
of 500 sends with 3 compactions (about long-gateway-ratelimit's size).

    pytest tests/benchmarks/test_report_timeline.py --benchmark-columns=min,median,mean,max,rounds
"""

from __future__ import annotations

import io

from harness.render.timeline import timeline_svg

SENDS = [[i, 300 * i % 190_000, 400 * i % 240_000] for i in range(1, 501)]
TIMELINE = {"context_window": 200_000, "reserve_tokens": 16_384, "sends": SENDS}
EVENTS = [{"number": n, "send_index": i, "tokens_before_true": 230_000, "tokens_after_true": 20_000,
           "head_start": 0, "tail_start": i - 8, "summary_tokens": 3_000} for n, i in ((1, 150), (2, 300), (3, 450))]


def old_timeline_svg(timeline, events) -> str:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 2.8))
    sends = timeline["sends"]
    ax.plot([s[0] for s in sends], [s[2] for s in sends], lw=1, color="#2a7ab0", label="true tokens per send")
    window, reserve = timeline["context_window"], timeline["reserve_tokens"]
    ax.axhline(window, color="#d1495b", lw=1, ls="--", label=f"window {window}")
    ax.axhline(window - reserve, color="#edae49", lw=1, ls=":", label=f"window - reserve {window - reserve}")
    for event in events:
        x = event["send_index"]
        ax.vlines(x, event["tokens_after_true"], event["tokens_before_true"], color="#333", lw=1)
        ax.annotate(f"#{event['number']} {event['head_start']}..{event['tail_start']}\n"
                    f"summary {event['summary_tokens']}", (x, event["tokens_before_true"]), fontsize=7,
                    ha="right", va="bottom")
    ax.set_ylim(0, window * 1.12)
    ax.legend(fontsize=7, loc="lower right")
    buffer = io.StringIO()
    fig.tight_layout()
    fig.savefig(buffer, format="svg")
    plt.close(fig)
    return buffer.getvalue()


def test_timeline_written_directly(benchmark):
    svg = benchmark(timeline_svg, TIMELINE, EVENTS)
    benchmark.extra_info["bytes"] = len(svg)
    assert svg.startswith("<svg")


def test_timeline_through_matplotlib(benchmark):
    svg = benchmark(old_timeline_svg, TIMELINE, EVENTS)
    benchmark.extra_info["bytes"] = len(svg)
    assert "<svg" in svg
