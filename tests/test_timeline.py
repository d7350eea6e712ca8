"""report.html's timeline, written as SVG directly: the y-axis covers every point (a context over the window
too), the largest is labelled, the lines' labels are text, and the page needs no matplotlib for it."""

import re
import xml.etree.ElementTree as ET

from harness.render.timeline import HEIGHT, TOP, nice_step, timeline_svg, tokens

NS = "{http://www.w3.org/2000/svg}"
TIMELINE = {"context_window": 128_000, "reserve_tokens": 16_384,
            "sends": [[1, 900, 1_000], [10, 90_000, 100_000], [20, 120_000, 184_908], [30, 40_000, 41_000]]}
EVENTS = [{"number": 1, "send_index": 20, "tokens_before_true": 184_908, "tokens_after_true": 40_000,
           "head_start": 0, "tail_start": 15, "summary_tokens": 2_000}]


def texts(svg: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in svg.iter(f"{NS}text")]


def test_the_axis_covers_every_point_and_labels_the_largest():
    svg = ET.fromstring(timeline_svg(TIMELINE, EVENTS))
    ticks = [t for t in texts(svg) if re.fullmatch(r"[\d.]+[KM]?", t)]
    y_ticks = [t for t in ticks if t.endswith("K") or t == "0"]
    assert y_ticks[-1] == "200K"  # above the 184,908-token point, which is 1.44x the window
    assert "max 184,908 true tokens (send 20)" in " ".join(texts(svg))
    polyline = svg.find(f"{NS}polyline")
    ys = [float(pair.split(",")[1]) for pair in polyline.get("points").split()]
    assert min(ys) >= TOP and max(ys) <= HEIGHT  # every send inside the plot area
    assert "window 128,000" in texts(svg) and "window - reserve 111,616" in texts(svg)
    assert any(t == "#1" for t in texts(svg))
    drop = next(g for g in svg.iter(f"{NS}g") if g.find(f"{NS}title") is not None)
    assert "184,908 -> 40,000 true tokens, head..tail 0..15, summary 2,000 tokens" in drop.find(f"{NS}title").text


def test_a_session_that_never_compacts_still_scales_to_its_window():
    quiet = {"context_window": 200_000, "reserve_tokens": 16_384, "sends": [[1, 10, 12], [5, 20, 25]]}
    svg = ET.fromstring(timeline_svg(quiet, []))
    assert "250K" in texts(svg) and "max 25 true tokens (send 5)" in " ".join(texts(svg))


def test_round_steps_and_token_labels():
    assert [nice_step(s) for s in (212_000, 32_768, 4, 0)] == [50_000, 10_000, 1, 1]
    assert [tokens(v) for v in (0, 900, 50_000, 1_500_000, 2_000_000)] == ["0", "900", "50K", "1.5M", "2M"]
